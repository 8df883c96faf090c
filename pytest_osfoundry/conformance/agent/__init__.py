"""The agent suite's machinery: check an agent, CLI or MCP client, in any language.

``pytest --osf-agent-command=CMD`` runs the checks of the rule book's ``agent/``
folder against the agent that ``CMD`` starts (docs/agent-conformance.md). The public
API of an agent check (the rule book's import nothing else of the agent suite):

* :class:`AgentSuite` -- the instrumented reference server of the run;
* :class:`AgentConformance` -- the context one agent check works in: its account,
  project, fake desktop and agent command (:meth:`AgentConformance.run`);
* :class:`AgentOutcome` -- how one start of the agent ended;
* :class:`AgentFault` -- what the server does to the agent's calls of one tool;
* :class:`McpCall` -- one MCP request as the server saw it.

The names are imported when first used (PEP 562), as the relay suite's: a server run
imports :mod:`~pytest_osfoundry.conformance.agent._evidence` (what an agent check's
report shows) and nothing of the agent suite's machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.agent._harness import (
        AgentConformance,
        AgentOutcome,
        AgentSuite,
    )
    from pytest_osfoundry.conformance.agent._instrumented import AgentFault, McpCall

_LAZY: dict[str, str] = {
    "AgentConformance": "pytest_osfoundry.conformance.agent._harness",
    "AgentFault": "pytest_osfoundry.conformance.agent._instrumented",
    "AgentOutcome": "pytest_osfoundry.conformance.agent._harness",
    "AgentSuite": "pytest_osfoundry.conformance.agent._harness",
    "McpCall": "pytest_osfoundry.conformance.agent._instrumented",
}
"""Each public name and the module that defines it."""

__all__ = ["AgentConformance", "AgentFault", "AgentOutcome", "AgentSuite", "McpCall"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
