"""Reference servers with one violation of MCP's own schema each: the wire checks' teeth.

Each variant (:data:`WIRE_VARIANTS`) rewrites one kind of answer of a plain
``ReferenceServer`` so that it breaks ``schema.json`` of its revision in one place,
and must fail exactly its ``fails`` (the wire-schema check of that message family).
Most break the answers of the legacy revisions only, which no domain check reads in
detail: what they show is that the wire checks find a violation no neighbouring check
happens to trip over. ``--osf-target=embedded:tests.conformance.variants_wire:NAME``
runs the suite against one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import ReferenceServer
from tests.conformance.variants_protocol import (
    ProtocolVariant,
    Wrapped,
    _is_modern,
    _message,
    _register,
    _rewrite_json,
)

__all__ = ["WIRE_VARIANTS"]

LEGACY = ("2025-11-25", "2025-06-18")

WIRE_VARIANTS: dict[str, ProtocolVariant] = {}

Change = Callable[[dict[str, Any]], None]


def _answers(
    method: str, change: Change, *, legacy: bool = True, tool: str | None = None
) -> Wrapped:
    """The reference server with ``change`` applied to each JSON-RPC answer to
    ``method`` (``"*error"``: every error answer; ``tool``: only calls of that tool), in
    the legacy revisions only unless ``legacy`` is false (then the modern one only)."""

    def rewrite(request: Request, response: Response) -> Response:
        sent = _message(request.body)
        if not isinstance(sent, dict) or _era(request, sent) != ("legacy" if legacy else "modern"):
            return response
        params = sent.get("params")
        if tool is not None and (not isinstance(params, dict) or params.get("name") != tool):
            return response

        def apply(message: Any) -> Any:
            if not isinstance(message, dict):
                return message
            if (method == "*error" and isinstance(message.get("error"), dict)) or (
                sent.get("method") == method and isinstance(message.get("result"), dict)
            ):
                change(message)
            return message

        return _rewrite_json(response, apply)

    return Wrapped(ReferenceServer(), on_response=rewrite)


def _era(request: Request, sent: dict[str, Any]) -> str | None:
    """``modern``, ``legacy`` (a legacy revision's header, or an initialize), or ``None``
    (a request naming no revision the server speaks: left alone)."""
    if _is_modern(request):
        return "modern"
    stated = request.headers.get("mcp-protocol-version", "").strip()
    if stated in LEGACY or (not stated and sent.get("method") == "initialize"):
        return "legacy"
    return None


def _drop_version(message: dict[str, Any]) -> None:
    message["result"].get("serverInfo", {}).pop("version", None)


def _tools_a_list(message: dict[str, Any]) -> None:
    if message["result"].get("protocolVersion") == "2025-06-18":
        message["result"].setdefault("capabilities", {})["tools"] = []


def _untyped_text(message: dict[str, Any]) -> None:
    for item in message["result"].get("content", []):
        if isinstance(item, dict):
            item.pop("type", None)


def _jsonrpc_2(message: dict[str, Any]) -> None:
    message["jsonrpc"] = "2"


def _untyped_input_schema(message: dict[str, Any]) -> None:
    tools = message["result"].get("tools") or [{}]
    tools[0].get("inputSchema", {}).pop("type", None)


def _result_type_number(message: dict[str, Any]) -> None:
    message["result"]["resultType"] = 1


def _code_a_string(message: dict[str, Any]) -> None:
    message["error"]["code"] = str(message["error"].get("code"))


@_register(WIRE_VARIANTS, "initialize's serverInfo lacks version.", ["R1-wire-schema-initialize"])
def server_info_without_version() -> Wrapped:
    return _answers("initialize", _drop_version)


@_register(
    WIRE_VARIANTS,
    "initialize's capabilities.tools is a list (when 2025-06-18 is negotiated).",
    ["R1-wire-schema-initialize"],
)
def tools_capability_a_list() -> Wrapped:
    return _answers("initialize", _tools_a_list)


@_register(
    WIRE_VARIANTS,
    "tools/call results carry TextContent without type.",
    ["R1-wire-schema-tools-call"],
)
def text_content_without_type() -> Wrapped:
    return _answers("tools/call", _untyped_text)


@_register(WIRE_VARIANTS, 'tools/call answers say "jsonrpc": "2".', ["R1-wire-schema-tools-call"])
def jsonrpc_2_on_tool_calls() -> Wrapped:
    return _answers("tools/call", _jsonrpc_2)


@_register(
    WIRE_VARIANTS, "tools/list gives an inputSchema without type.", ["R1-wire-schema-tools-list"]
)
def input_schema_without_type() -> Wrapped:
    return _answers("tools/list", _untyped_input_schema)


@_register(
    WIRE_VARIANTS,
    "2026-07-28 get_graph_run results give resultType as a number.",
    ["R1-wire-schema-tools-call"],
)
def result_type_a_number() -> Wrapped:
    return _answers("tools/call", _result_type_number, legacy=False, tool="get_graph_run")


@_register(WIRE_VARIANTS, "JSON-RPC errors give code as a string.", ["R1-wire-schema-error"])
def error_code_a_string() -> Wrapped:
    return _answers("*error", _code_a_string)


def jsonrpc_2_everywhere() -> Wrapped:
    """Not a broken variant of the registry: every JSON-RPC answer says ``"jsonrpc": "2"``,
    so the preflight itself must stop the run, naming the field."""

    def rewrite(request: Request, response: Response) -> Response:
        def apply(message: Any) -> Any:
            if isinstance(message, dict) and ("result" in message or "error" in message):
                message["jsonrpc"] = "2"
            return message

        return _rewrite_json(response, apply)

    return Wrapped(ReferenceServer(), on_response=rewrite)
