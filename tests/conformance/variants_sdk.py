"""Reference servers behaving as servers built on the official MCP SDKs do (issue 24).

:data:`LEGAL_SDK_VARIANTS` answer the way a correct SDK-built server does where the
suite once failed them (discover listing only the modern revision, metadata at the
path-inserted URI, a DNS-rebinding guard, a GET without a session refused with 400,
a token asked for on every method D3 does not open). Each must pass the whole suite.
:data:`BROKEN_SDK_VARIANTS` break one rule the way an SDK default does (coercing
validators, metadata the challenge names but nobody serves, prefixed error texts)
and must fail exactly their ``fails``.
``--osf-target=embedded:tests.conformance.variants_sdk:NAME`` runs the suite against one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from pytest_osfoundry.http import Request, Response, json_response
from pytest_osfoundry.server import ReferenceServer
from tests.conformance.variants_protocol import ProtocolVariant, Wrapped

__all__ = ["BROKEN_SDK_VARIANTS", "LEGAL_SDK_VARIANTS"]

MODERN = "2026-07-28"
WELL_KNOWN = "/.well-known/oauth-protected-resource"
#: D3 and R2: the methods that need no token (notifications, ``notifications/initialized``
#: ending initialize's handshake among them, are as open as initialize: docs/choices.md).
OPEN_METHODS = frozenset({"initialize", "ping", "tools/list"})
SESSION_NOT_FOUND = "Graph session not found or access removed"
#: How the Python SDK words a tool's error by default.
PREFIX = "Error executing tool run_graph_session: "

LEGAL_SDK_VARIANTS: dict[str, ProtocolVariant] = {}
BROKEN_SDK_VARIANTS: dict[str, ProtocolVariant] = {}


def _register(
    registry: dict[str, ProtocolVariant], breaks: str, fails: Iterable[str] = ()
) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    def register(factory: Callable[[], Any]) -> Callable[[], Any]:
        name = factory.__name__
        registry[name] = ProtocolVariant(name, breaks, frozenset(fails), frozenset(), factory)
        return factory

    return register


def _message(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _rewrite(response: Response, change: Callable[[Any], None]) -> Response:
    """``response`` with its plain-JSON body changed in place by ``change``."""
    message = _message(response.body)
    if message is None:
        return response
    change(message)
    return Response(response.status, dict(response.headers), json.dumps(message).encode())


def _arguments_of(request: Request, tool: str) -> dict[str, Any] | None:
    message = _message(request.body) if request.method == "POST" else None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    args = params.get("arguments")
    return args if params.get("name") == tool and isinstance(args, dict) else None


def _with_arguments(request: Request, arguments: dict[str, Any]) -> Request:
    message = json.loads(request.body)
    message["params"]["arguments"] = arguments
    return request._replace(body=json.dumps(message).encode())


# ---------------------------------------------------------------------- legal
@_register(
    LEGAL_SDK_VARIANTS,
    "Dual-era, server/discover and -32022 list only 2026-07-28 (both SDKs' default).",
)
def discover_lists_modern_only() -> Wrapped:
    def only_modern(request: Request, response: Response) -> Response:
        def change(message: Any) -> None:
            result = message.get("result") if isinstance(message, dict) else None
            if isinstance(result, dict) and "supportedVersions" in result:
                result["supportedVersions"] = [MODERN]
            error = message.get("error") if isinstance(message, dict) else None
            data = error.get("data") if isinstance(error, dict) else None
            if isinstance(data, dict) and "supported" in data:
                data["supported"] = [MODERN]

        return _rewrite(response, change)

    return Wrapped(ReferenceServer(), on_response=only_modern)


def _path_inserted(app: ReferenceServer) -> str:
    return WELL_KNOWN + app.mcp_path


def _name_path_inserted(app: ReferenceServer, response: Response) -> Response:
    """``response`` with its challenge naming the path-inserted metadata URI."""
    value = response.headers.get("www-authenticate")
    if not value:
        return response
    named = value.replace(f'{WELL_KNOWN}"', f'{_path_inserted(app)}"')
    return Response(response.status, {**response.headers, "www-authenticate": named}, response.body)


@_register(
    LEGAL_SDK_VARIANTS,
    "The metadata only at RFC 9728's path-inserted URI, which the challenges name "
    "(both SDKs' default).",
)
def metadata_path_inserted_only() -> Wrapped:
    app = ReferenceServer()

    def no_root(request: Request) -> Request | Response:
        if request.path == WELL_KNOWN:
            return json_response(404, {"error": "Not Found"})
        return request

    return Wrapped(app, on_request=no_root, on_response=lambda _, r: _name_path_inserted(app, r))


@_register(
    LEGAL_SDK_VARIANTS,
    "A DNS-rebinding guard: a foreign Host gets 403 echoing it (the TypeScript SDK's).",
)
def host_guard() -> Wrapped:
    def guard(request: Request) -> Request | Response:
        host = request.headers.get("host")
        name = (host or "").rsplit(":", 1)[0] if host and not host.startswith("[") else host
        if host is None or name in ("127.0.0.1", "localhost", "[::1]"):
            return request
        error = {"code": -32000, "message": f"Invalid Host: {host}"}
        return json_response(403, {"jsonrpc": "2.0", "error": error, "id": None})

    return Wrapped(ReferenceServer(), on_request=guard)


@_register(
    LEGAL_SDK_VARIANTS,
    "Dual-era, and a GET without a session gets 400 (the Python SDK's).",
)
def get_without_session_400() -> Wrapped:
    def need_session(request: Request) -> Request | Response:
        mcp_get = request.method == "GET" and request.path.rstrip("/").endswith("/mcp")
        if mcp_get and "mcp-session-id" not in request.headers:
            return Response(400, {"content-type": "text/plain"}, b"Bad Request: Missing session ID")
        return request

    return Wrapped(ReferenceServer(), on_request=need_session)


@_register(
    LEGAL_SDK_VARIANTS,
    "Asks for a token on every MCP request but D3's open methods (initialize, ping, "
    "tools/list) and notifications: a GET, a DELETE, server/discover and an unknown "
    "method without one get 401 with the usual challenge.",
)
def token_on_all_but_open_methods() -> Wrapped:
    app = ReferenceServer()

    def need_token(request: Request) -> Request | Response:
        if (
            not request.path.rstrip("/").endswith(app.mcp_path)
            or "authorization" in request.headers
        ):
            return request
        message = _message(request.body) if request.method == "POST" else None
        method = message.get("method") if isinstance(message, dict) else None
        if method in OPEN_METHODS or str(method).startswith("notifications/"):
            return request
        if method == "tools/call":
            return request  # the app's own challenge names the tool's scope
        metadata = app.origin() + WELL_KNOWN
        challenge = f'Bearer resource_metadata="{metadata}", scope="osfoundry:read"'
        return Response(
            401,
            {"content-type": "application/json", "www-authenticate": challenge},
            b'{"error":"invalid_token","error_description":"Authentication required"}',
        )

    return Wrapped(app, on_request=need_token)


@_register(
    LEGAL_SDK_VARIANTS,
    "Refuses a tool call breaking the input schema with JSON-RPC -32602 (what many SDKs "
    "do) instead of an isError result: R3 accepts both.",
)
def schema_errors_as_32602() -> Wrapped:
    def recode(request: Request, response: Response) -> Response:
        def change(message: Any) -> None:
            result = message.get("result") if isinstance(message, dict) else None
            if not isinstance(result, dict) or result.get("isError") is not True:
                return
            content = result.get("content")
            first = content[0] if isinstance(content, list) and content else None
            text = first.get("text") if isinstance(first, dict) else None
            if isinstance(text, str) and text.startswith("Invalid arguments"):
                del message["result"]
                message["error"] = {"code": -32602, "message": text}

        return _rewrite(response, change)

    return Wrapped(ReferenceServer(), on_response=recode)


# ---------------------------------------------------------------------- broken
@_register(
    BROKEN_SDK_VARIANTS,
    "The challenges name the path-inserted metadata URI, which is not served (R2: the "
    "metadata is at the URL the challenge names).",
    ["R2-resource-metadata"],
)
def challenge_names_a_missing_document() -> Wrapped:
    app = ReferenceServer()

    def not_there(request: Request) -> Request | Response:
        if request.path == _path_inserted(app):
            return json_response(404, {"error": "Not Found"})
        return request

    return Wrapped(app, on_request=not_there, on_response=lambda _, r: _name_path_inserted(app, r))


@_register(
    BROKEN_SDK_VARIANTS,
    'A coercing validator: limit "1" or true is taken as an integer (R3: wrong types are refused).',
    ["R3-types-list"],
)
def lax_integers() -> Wrapped:
    def coerce(request: Request) -> Request:
        args = _arguments_of(request, "list_graph_sessions")
        limit = args.get("limit") if args is not None else None
        if args is not None and isinstance(limit, (bool, str)):
            try:
                return _with_arguments(request, {**args, "limit": int(limit)})
            except ValueError:
                return request
        return request

    return Wrapped(ReferenceServer(), on_request=coerce)


@_register(
    BROKEN_SDK_VARIANTS,
    "A coercing validator: arguments given as a JSON string of an object are parsed "
    "and the run queued (R3: wrong types are refused, nothing queued).",
    ["R3-types-run"],
)
def json_string_objects() -> Wrapped:
    def coerce(request: Request) -> Request:
        args = _arguments_of(request, "run_graph_session")
        text = args.get("arguments") if args is not None else None
        if args is not None and isinstance(text, str):
            parsed = _message(text.encode())
            if isinstance(parsed, dict):
                return _with_arguments(request, {**args, "arguments": parsed})
        return request

    return Wrapped(ReferenceServer(), on_request=coerce)


@_register(
    BROKEN_SDK_VARIANTS,
    "Takes arguments null as no arguments and queues the run (a framework's natural "
    "arguments: dict | None) (R3: null is no object; refused, nothing queued).",
    ["R3-types-null"],
)
def nullable_arguments() -> Wrapped:
    def absent(request: Request) -> Request:
        args = _arguments_of(request, "run_graph_session")
        if args is not None and "arguments" in args and args["arguments"] is None:
            return _with_arguments(request, {k: v for k, v in args.items() if k != "arguments"})
        return request

    return Wrapped(ReferenceServer(), on_request=absent)


@_register(
    BROKEN_SDK_VARIANTS,
    'Tool errors about an unshared session carry a prefix ("Error executing tool '
    "run_graph_session: ...\", the Python SDK's default) (R3: the message alone).",
    ["R3-session-not-found", "R3-session-other-account"],
)
def prefixed_session_errors() -> Wrapped:
    def prefix(request: Request, response: Response) -> Response:
        if _arguments_of(request, "run_graph_session") is None:
            return response

        def change(message: Any) -> None:
            result = message.get("result") if isinstance(message, dict) else None
            content = result.get("content") if isinstance(result, dict) else None
            if isinstance(result, dict) and result.get("isError") and isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("text") == SESSION_NOT_FOUND:
                        part["text"] = f"{PREFIX}{SESSION_NOT_FOUND}"

        return _rewrite(response, change)

    return Wrapped(ReferenceServer(), on_response=prefix)


#: D3: the scope each tool needs.
TOOL_SCOPES = {
    "run_graph_session": "osfoundry:run",
    "cancel_graph_run": "osfoundry:run",
    "list_graph_sessions": "osfoundry:read",
    "get_graph_run": "osfoundry:read",
}


def _listing_for_caller(keep: Callable[[frozenset[str] | None, str], bool]) -> Wrapped:
    """The reference server whose ``tools/list`` keeps a tool only when ``keep(the
    caller's scopes, its name)`` (scopes ``None``: no agent token), as a framework's
    per-tool auth hides the tools a caller may not call."""
    app = ReferenceServer()

    def scopes_of(request: Request) -> frozenset[str] | None:
        token = (request.headers.get("authorization") or "").partition(" ")[2].strip()
        cred = app.tokens.lookup(token or None, app.state.clock.now())
        agent = app.state.agents.get(cred.principal_id) if cred and cred.kind == "agent" else None
        return agent.scopes if agent is not None else None

    def hide(request: Request, response: Response) -> Response:
        message = _message(request.body) if request.method == "POST" else None
        if not isinstance(message, dict) or message.get("method") != "tools/list":
            return response
        scopes = scopes_of(request)

        def change(answer: Any) -> None:
            result = answer.get("result") if isinstance(answer, dict) else None
            if isinstance(result, dict) and isinstance(result.get("tools"), list):
                result["tools"] = [t for t in result["tools"] if keep(scopes, t.get("name"))]

        return _rewrite(response, change)

    return Wrapped(app, on_response=hide)


@_register(
    BROKEN_SDK_VARIANTS,
    "tools/list without a token lists no tool (a framework's per-tool auth, endpoint open) "
    "(D3: the listing an agent reads before it holds a token is the four tools).",
    ["D3-four-tools-without-token", "D3-same-tools-for-every-caller"],
)
def tools_hidden_from_anonymous() -> Wrapped:
    return _listing_for_caller(lambda scopes, name: scopes is not None)


@_register(
    BROKEN_SDK_VARIANTS,
    "tools/list with a token lists only the tools its scopes allow (the read-only agent "
    "sees two) (D3, reconstructed: the listing is the same for every caller).",
    ["D3-same-tools-for-every-caller"],
)
def tools_hidden_by_scope() -> Wrapped:
    return _listing_for_caller(lambda scopes, name: scopes is None or TOOL_SCOPES[name] in scopes)


def runs_never_queued() -> Wrapped:
    """Every run_graph_session refused with an odd text (not registered: nearly every
    check fails; the suite's own test reads how a set-up failure is worded)."""

    def refuse(request: Request) -> Request | Response:
        message = _message(request.body) if request.method == "POST" else None
        if _arguments_of(request, "run_graph_session") is None or not isinstance(message, dict):
            return request
        result = {"content": [{"type": "text", "text": "queue unavailable"}], "isError": True}
        return json_response(200, {"jsonrpc": "2.0", "id": message.get("id"), "result": result})

    return Wrapped(ReferenceServer(), on_request=refuse)
