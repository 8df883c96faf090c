"""Domain-level clients: an agent's tool calls and the relay's API calls made straight
on a :class:`~pytest_osfoundry.server.ServerState`, without JSON-RPC, HTTP or wire checks.

:class:`DirectToolClient` satisfies the scripted agent's
:class:`~pytest_osfoundry.agent.ToolClient`; :class:`DirectRelayClient` the fake
relay's :class:`~pytest_osfoundry.client.RelayApiClient`. Each calls the state
method the wire layers call for the same request, with the same principal, so the
state ends in the same place; a refusal raises what the wire client would raise for
it (:class:`~pytest_osfoundry.client.ToolError` with the tool's message, the tool's
argument check included,
:class:`~pytest_osfoundry.client.HttpStatusError` with the relay API's status and
``{"error": message}`` body). What they leave out is everything a figure of the
simulation does not depend on: the envelope, the framing, the token check of every
call (done once, when the client is made) and the JSON round trip. The relay API's
bodies are the relay's own (it sends valid ones); the state checks their fields.

They are for simulations over the kit's own components (``WorldConfig(direct=True)``,
``osfoundry-sim``); a test of a client or of the wire uses the real ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_osfoundry._wirejson import dumps
from pytest_osfoundry.client import HttpStatusError, ToolError
from pytest_osfoundry.server import _tools as tooldefs
from pytest_osfoundry.server._state import Account, Agent, DomainError, ServerState

__all__ = ["DirectRelayClient", "DirectToolClient"]


def _tool_error(message: str) -> ToolError:
    """What ``McpClient`` raises for the tool error the MCP layer answers ``message`` with."""
    result = {"content": [{"type": "text", "text": message}], "isError": True}
    return ToolError(message, result)


def _checked(tool: str, arguments: dict[str, Any]) -> None:
    """The tool's argument check (D3 inputSchema), as the MCP layer makes it."""
    invalid = tooldefs.argument_error(tool, arguments)
    if invalid is not None:
        raise _tool_error(invalid)


class DirectToolClient:
    """An agent's three tool calls on ``state``, as the agent ``agent``."""

    def __init__(self, state: ServerState, agent: Agent) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"agent must be a server Agent, got {agent!r}")
        self.state = state
        self.agent = agent

    def run_graph_session(
        self,
        graph_session_id: str,
        idempotency_key: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Queue a run (or replay its ticket); the ticket (R4)."""
        args: dict[str, Any] = {
            "graph_session_id": graph_session_id,
            "idempotency_key": idempotency_key,
        }
        if arguments is not None:
            args["arguments"] = arguments
        _checked(tooldefs.RUN_GRAPH_SESSION, args)
        try:
            return self.state.run_graph_session(
                self.agent, graph_session_id, idempotency_key, arguments
            )
        except DomainError as err:
            raise _tool_error(err.message) from None

    def get_graph_run(self, command_id: str) -> dict[str, Any]:
        """A run's view (R6)."""
        _checked(tooldefs.GET_GRAPH_RUN, {"command_id": command_id})
        try:
            return self.state.get_graph_run(self.agent, command_id)
        except DomainError as err:
            raise _tool_error(err.message) from None

    def cancel_graph_run(self, command_id: str) -> dict[str, Any]:
        """Cancel a run (R7)."""
        _checked(tooldefs.CANCEL_GRAPH_RUN, {"command_id": command_id})
        try:
            return self.state.cancel_graph_run(self.agent, command_id)
        except DomainError as err:
            raise _tool_error(err.message) from None

    def __repr__(self) -> str:
        return f"DirectToolClient(agent={self.agent.agent_id!r})"


class DirectRelayClient:
    """The desktop's relay API calls on ``state``, as the owner ``account``."""

    def __init__(self, state: ServerState, account: Account) -> None:
        if not isinstance(account, Account):
            raise TypeError(f"account must be a server Account, got {account!r}")
        self.state = state
        self.account = account

    @staticmethod
    def _refused(err: DomainError) -> HttpStatusError:
        body = dumps({"error": err.message})
        return HttpStatusError(err.http_status, {"content-type": "application/json"}, body)

    def sync(self, project_id: str, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Upload the shared sessions; the queued commands (D10)."""
        try:
            commands: list[dict[str, Any]] = self.state.relay_sync(
                self.account, project_id, sessions
            )["commands"]
        except DomainError as err:
            raise self._refused(err) from None
        return commands

    def start(self, command_id: str, execution_id: str) -> str:
        """Mark a command started; the status the server answers (R9)."""
        try:
            return str(self.state.relay_start(self.account, command_id, execution_id)["status"])
        except DomainError as err:
            raise self._refused(err) from None

    def control(self, command_id: str) -> dict[str, Any]:
        """``{"status", "cancel_requested"}`` (R10)."""
        try:
            return self.state.relay_control(self.account, command_id)
        except DomainError as err:
            raise self._refused(err) from None

    def complete(self, command_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Post the bounded completion (R11)."""
        try:
            return self.state.relay_complete(self.account, command_id, dict(body))
        except DomainError as err:
            raise self._refused(err) from None

    def __repr__(self) -> str:
        return f"DirectRelayClient(account={self.account.account_id!r})"
