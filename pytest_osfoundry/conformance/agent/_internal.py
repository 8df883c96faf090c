"""What the conformance package's other rooms use of the agent suite: its evidence,
records, preflight and command (each name imported on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.agent._evidence import (
        AGENT_CONF,
        agent_evidence,
        agent_lines,
        measure_properties,
        write_agent_record,
    )
    from pytest_osfoundry.conformance.agent._harness import (
        DEFAULT_INTERVAL,
        REALTIME_INTERVAL,
        AgentConformance,
        AgentSuite,
        default_concurrency,
    )
    from pytest_osfoundry.conformance.agent._preflight import AgentPreflightError, agent_preflight
    from pytest_osfoundry.conformance.agent._process import (
        AgentCommandError,
        kill_all,
        split_agent_command,
    )

_LAZY: dict[str, str] = {
    "AGENT_CONF": "pytest_osfoundry.conformance.agent._evidence",
    "agent_evidence": "pytest_osfoundry.conformance.agent._evidence",
    "agent_lines": "pytest_osfoundry.conformance.agent._evidence",
    "measure_properties": "pytest_osfoundry.conformance.agent._evidence",
    "write_agent_record": "pytest_osfoundry.conformance.agent._evidence",
    "AgentConformance": "pytest_osfoundry.conformance.agent._harness",
    "AgentSuite": "pytest_osfoundry.conformance.agent._harness",
    "DEFAULT_INTERVAL": "pytest_osfoundry.conformance.agent._harness",
    "REALTIME_INTERVAL": "pytest_osfoundry.conformance.agent._harness",
    "default_concurrency": "pytest_osfoundry.conformance.agent._harness",
    "AgentPreflightError": "pytest_osfoundry.conformance.agent._preflight",
    "agent_preflight": "pytest_osfoundry.conformance.agent._preflight",
    "AgentCommandError": "pytest_osfoundry.conformance.agent._process",
    "kill_all": "pytest_osfoundry.conformance.agent._process",
    "split_agent_command": "pytest_osfoundry.conformance.agent._process",
}
"""Each shared name and the module that defines it."""

__all__ = [
    "AGENT_CONF",
    "DEFAULT_INTERVAL",
    "REALTIME_INTERVAL",
    "AgentCommandError",
    "AgentConformance",
    "AgentPreflightError",
    "AgentSuite",
    "agent_evidence",
    "agent_lines",
    "agent_preflight",
    "default_concurrency",
    "kill_all",
    "measure_properties",
    "split_agent_command",
    "write_agent_record",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
