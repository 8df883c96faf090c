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
"""

from __future__ import annotations

from pytest_osfoundry.conformance.agent._harness import (
    AgentConformance,
    AgentOutcome,
    AgentSuite,
)
from pytest_osfoundry.conformance.agent._instrumented import AgentFault, McpCall

__all__ = ["AgentConformance", "AgentFault", "AgentOutcome", "AgentSuite", "McpCall"]
