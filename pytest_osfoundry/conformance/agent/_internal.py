"""What the conformance package's other rooms use of the agent suite.

Not for users, nor for checks (they use :mod:`pytest_osfoundry.conformance`): the one face
through which another room reaches this one's private modules (``tests/test_faces.py``).
Each name is imported from its module when first asked for, so no import gets dearer.

* ``AGENT_CONF`` -- The agent check's context, on its item (set by its fixture or the
  concurrent runner). For the pytest plugin.
* ``agent_evidence`` -- The report's ``agent`` entry for ``conf`` (see the module),
  masked. For the pytest plugin.
* ``agent_lines`` -- The evidence as text for pytest's failure report: a line per call,
  then each start's exit code, report and output tail. For the pytest plugin.
* ``measure_properties``, ``write_agent_record`` -- a check's measures as JUnit
  properties, and its record kept under ``--osf-agent-record``. For the agent hooks.
* ``AgentConcurrentRunner`` -- ``--osf-agent-concurrency``: the agent checks pre-run in a
  thread pool. For the agent hooks.
* ``AgentConformance``, ``AgentSuite`` -- one check's context and the run's server. For
  the agent hooks' fixtures.
* ``AgentPreflightError``, ``agent_preflight`` -- the command tried once before any
  check. For the agent hooks.
* ``AgentCommandError``, ``kill_all``, ``split_agent_command`` -- the agent command: its
  argv, why it cannot start, every start ended at exit. For the agent hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.agent._concurrent import AgentConcurrentRunner
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
    "AgentConcurrentRunner": "pytest_osfoundry.conformance.agent._concurrent",
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
    "AgentConcurrentRunner",
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
