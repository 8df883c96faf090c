"""MCP's methods and the four osFoundry tools, as an MCP client offers them (SPEC D3).

:class:`ToolCalls` is the part of :class:`~pytest_osfoundry.client.McpClient` that
turns tool calls into JSON-RPC requests and reads their results strictly: a result
with ``isError: true`` raises :class:`~pytest_osfoundry.client._errors.ToolError`
(its message is ``content[0].text``, SPEC R3), anything malformed
:class:`~pytest_osfoundry.client._errors.ProtocolViolation`. It sends through the
client's :meth:`~pytest_osfoundry.client.McpClient.rpc` and
:meth:`~pytest_osfoundry.client.McpClient.rpc_raw` (:class:`_Rpc`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pytest_osfoundry._vocabulary import (
    CANCEL_GRAPH_RUN,
    GET_GRAPH_RUN,
    LIST_GRAPH_SESSIONS,
    RUN_GRAPH_SESSION,
)
from pytest_osfoundry.client._errors import ProtocolViolation, ToolError
from pytest_osfoundry.client._tool_result import read_tool_result
from pytest_osfoundry.http import Response

__all__ = ["MAX_TOOL_PAGES", "ToolCalls"]

MAX_TOOL_PAGES = 100
"""The most ``tools/list`` pages :meth:`ToolCalls.list_tools` follows."""


class _Rpc(Protocol):
    """What :class:`ToolCalls` needs of the client it is part of."""

    def rpc(self, method: str, params: Mapping[str, Any] | None = None) -> Any: ...

    def rpc_raw(self, method: str, params: Mapping[str, Any] | None = None) -> Response: ...

    def _mask(self, text: str) -> str: ...

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> dict[str, Any]: ...


class ToolCalls:
    """``ping``, ``tools/list``, ``tools/call`` and the four osFoundry tools."""

    def ping(self: _Rpc) -> None:
        """Send ``ping``; return when the server answers with a result."""
        self.rpc("ping")

    def list_tools(self: _Rpc) -> list[dict[str, Any]]:
        """Every tool ``tools/list`` lists, following ``nextCursor`` pages."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_TOOL_PAGES):
            result = self.rpc("tools/list", {"cursor": cursor} if cursor is not None else None)
            if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
                raise ProtocolViolation("tools/list result has no tools list")
            page = result["tools"]
            if not all(isinstance(tool, dict) for tool in page):
                raise ProtocolViolation("tools/list result has a tool that is not an object")
            tools.extend(page)
            cursor = result.get("nextCursor")
            if cursor is None:
                return tools
            if not isinstance(cursor, str) or cursor in seen:
                raise ProtocolViolation("tools/list nextCursor is not a new string")
            seen.add(cursor)
        raise ProtocolViolation(f"tools/list did not end within {MAX_TOOL_PAGES} pages")

    def call_tool_raw(
        self: _Rpc, name: str, arguments: Mapping[str, Any] | None = None
    ) -> Response:
        """Send ``tools/call`` and return the HTTP reply unparsed (exact bytes)."""
        return self.rpc_raw("tools/call", {"name": name, "arguments": dict(arguments or {})})

    def call_tool(
        self: _Rpc, name: str, arguments: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Call a tool and return its structured result.

        Returns ``structuredContent`` when present; else ``content[0].text`` parsed
        as JSON when that is an object; else the raw result. A result with
        ``isError: true`` raises :class:`ToolError` whose ``message`` is
        ``content[0].text`` (SPEC R3).
        """
        result = self.rpc("tools/call", {"name": name, "arguments": dict(arguments or {})})
        if not isinstance(result, dict):
            raise ProtocolViolation(f"tools/call {name} result is not an object")
        read = read_tool_result(result)
        if read.is_error:
            if read.text is None:
                raise ProtocolViolation(
                    f"tools/call {name} returned isError without a text content[0]"
                )
            raise ToolError(self._mask(read.text), result)
        if read.structured_content is not None and not isinstance(read.structured_content, dict):
            raise ProtocolViolation(f"tools/call {name} structuredContent is not an object")
        return read.structured if read.structured is not None else result

    # -- the four osFoundry tools (SPEC D3) -----------------------------------------

    def run_graph_session(
        self: _Rpc,
        graph_session_id: str,
        idempotency_key: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``run_graph_session``: queue a run; returns the ticket (SPEC R4)."""
        args: dict[str, Any] = {
            "graph_session_id": graph_session_id,
            "idempotency_key": idempotency_key,
        }
        if arguments is not None:
            args["arguments"] = dict(arguments)
        return self.call_tool(RUN_GRAPH_SESSION, args)

    def get_graph_run(self: _Rpc, command_id: str) -> dict[str, Any]:
        """``get_graph_run``: a run's status and result (SPEC R6)."""
        return self.call_tool(GET_GRAPH_RUN, {"command_id": command_id})

    def cancel_graph_run(self: _Rpc, command_id: str) -> dict[str, Any]:
        """``cancel_graph_run``: cancel a run (SPEC R7)."""
        return self.call_tool(CANCEL_GRAPH_RUN, {"command_id": command_id})

    def list_graph_sessions(
        self: _Rpc, project_id: str, limit: int | None = None
    ) -> dict[str, Any]:
        """``list_graph_sessions``: the project's shared sessions (SPEC R8)."""
        args: dict[str, Any] = {"project_id": project_id}
        if limit is not None:
            args["limit"] = limit
        return self.call_tool(LIST_GRAPH_SESSIONS, args)
