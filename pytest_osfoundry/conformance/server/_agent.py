"""The agents' actions: tool calls through the MCP client, as the agent or any role.

Every method calls as the agent (``--osf-agent-token``) unless ``by`` names another
client (``c.roles.other_agent``, ``c.roles.read_agent``, ...). Runs queued here are
tracked (:class:`~pytest_osfoundry.conformance.server._runs.Runs`), so clean-up ends them
even when the check expected a refusal.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from pytest_osfoundry.client import McpClient, ToolReply
from pytest_osfoundry.conformance.server._desktop import Desktop
from pytest_osfoundry.conformance.server._roles import Roles
from pytest_osfoundry.conformance.server._runs import Runs
from pytest_osfoundry.conformance.server._wire import Wire
from pytest_osfoundry.conformance.suite._internal import Expect, short

__all__ = ["Agent"]


class Agent:
    """Tool calls for one check, decoded (:meth:`call`) or required to succeed (:meth:`ok`)."""

    def __init__(
        self,
        check_id: str,
        wire: Wire,
        roles: Roles,
        runs: Runs,
        desktop: Desktop,
        expect: Expect,
    ) -> None:
        self._check_id = check_id
        self._wire = wire
        self._roles = roles
        self._runs = runs
        self._desktop = desktop
        self._expect = expect
        self._probes = 0
        self.nonce = uuid.uuid4().hex[:12]
        """Random per check: part of every probe and generated key."""

    def _client(self, by: McpClient | None) -> McpClient:
        return self._roles.agent if by is None else by

    def call(
        self, tool: str, arguments: Mapping[str, Any], *, by: McpClient | None = None
    ) -> ToolReply:
        """Call ``tool`` and decode the answer, whatever it is."""
        return self._wire.call(self._client(by), tool, arguments)

    def ok(
        self, tool: str, arguments: Mapping[str, Any], what: str, *, by: McpClient | None = None
    ) -> dict[str, Any]:
        """Call ``tool`` and return its object, failing the check unless it succeeded."""
        __tracebackhide__ = True
        return self._expect.result_of(self.call(tool, arguments, by=by), tool, what)

    # ------------------------------------------------------------------ queueing
    def new_key(self) -> str:
        """A fresh idempotency key (32 characters)."""
        return uuid.uuid4().hex

    def probe(self) -> dict[str, Any]:
        """Fresh ``arguments`` no other run has: how the check finds its commands in a sync."""
        self._probes += 1
        return {"osf_conformance": self._check_id, "probe": f"{self.nonce}-{self._probes}"}

    def run_args(
        self,
        *,
        session: Mapping[str, Any] | None = None,
        key: Any = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``run_graph_session`` arguments: the first fixed session, a new key and a new
        probe as ``arguments``, unless given (``key`` may be anything, to be refused)."""
        return {
            "graph_session_id": (session or self._roles.sessions[0])["graph_session_id"],
            "idempotency_key": self.new_key() if key is None else key,
            "arguments": dict(arguments) if arguments is not None else self.probe(),
        }

    def run(self, arguments: Mapping[str, Any], *, by: McpClient | None = None) -> ToolReply:
        """``run_graph_session`` with exactly ``arguments``, decoded whatever it is; a run
        it queued is tracked, so clean-up ends it even when the check expected a refusal."""
        client = self._client(by)
        reply = self._wire.call(client, "run_graph_session", arguments)
        if reply.kind == "result" and isinstance(reply.structured, dict):
            command_id = reply.structured.get("command_id")
            if isinstance(command_id, str):
                self._runs.track(client, command_id)
        return reply

    def queue(
        self,
        *,
        by: McpClient | None = None,
        session: Mapping[str, Any] | None = None,
        key: str | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Queue a run and return the ticket, failing the check unless it is queued.

        When the check has not shared the fixed sessions yet and the call is refused,
        however the refusal is worded (a fresh server's "session not found", perhaps
        with an SDK's prefix), the fixed sessions are synced and the call is made once
        more: set-up never depends on the wording of an error. A refusal after that
        fails the check as set-up, naming the session it needed.
        """
        __tracebackhide__ = True
        args = self.run_args(session=session, key=key, arguments=arguments)
        reply = self.run(args, by=by)
        if not self._desktop.synced and reply.kind in ("tool_error", "rpc_error"):
            # The fixed sessions may not be shared (yet): share them and retry. The
            # refused attempt proved nothing, so a failure's log does not open with it.
            self._wire.forget_latest()
            self._desktop.sync()
            reply = self.run(args, by=by)
        what = (
            f"set-up: queueing a run on Graph session {args['graph_session_id']} "
            "(shared by the desktop's sync)"
        )
        ticket = self._expect.result_of(reply, "run_graph_session", what)
        command_id = ticket.get("command_id")
        if not isinstance(command_id, str) or not command_id:
            self._expect.fail(
                f"{what}: run_graph_session's ticket has no command_id string: {short(ticket)}"
            )
        return ticket

    # ------------------------------------------------------------------ reading, cancelling
    def cancel(self, command_id: str, what: str, *, by: McpClient | None = None) -> dict[str, Any]:
        """``cancel_graph_run`` of ``command_id``; its answer, failing the check unless it
        succeeded (``what`` says what was being done, for the failure message)."""
        __tracebackhide__ = True
        return self.ok("cancel_graph_run", {"command_id": command_id}, what, by=by)

    def view(self, command_id: str, *, by: McpClient | None = None) -> dict[str, Any]:
        """``get_graph_run`` of one of the check's runs, by the agent that queued it."""
        __tracebackhide__ = True
        return self.ok(
            "get_graph_run", {"command_id": command_id}, f"reading run {command_id}", by=by
        )
