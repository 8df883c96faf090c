"""The MCP endpoint: JSON-RPC 2.0 over Streamable HTTP (SPEC R1), tools (D3, R3).

One endpoint serves the legacy revisions (``2025-06-18``, ``2025-11-25``: an
``initialize`` handshake and sessions) and the modern one (``2026-07-28``: stateless,
every request carrying ``params._meta``) side by side, as a *dual-era* server does;
``protocols`` restricts it to any non-empty subset. Which era a request belongs to
is decided by :func:`~pytest_osfoundry.server._eras.is_modern_request`; the four
tools behave the same on every revision, only the envelope changes.

One POST carries one JSON-RPC message. Requests are answered with
``application/json`` (or ``text/event-stream`` when the endpoint is built with
``sse=True``); notifications and client responses get ``202`` with no body.

Choices where the MCP specification leaves room (see docs/choices.md):

* Legacy: ``Mcp-Session-Id`` is issued at ``initialize`` and echoed back by clients;
  a request *without* one is still served (stateless clients, curl), a request with
  an unknown one gets ``404`` as the MCP spec asks, and ``DELETE`` ends a session.
  A missing ``MCP-Protocol-Version`` header is accepted; an unsupported one gets 400.
* A session is bound to the identity that opened it (``initialize`` with a valid
  token) or, opened without one, to the first that uses it (:meth:`McpEndpoint._owner`):
  a request carrying another identity's token with it is answered as if the session
  did not exist (``404``), and a ``DELETE`` of a bound session by anyone but its
  identity (no token included) is refused the same way, the session intact. A
  request without a token is served on a bound session: it acts as nobody (the open
  methods of D3 only; ``tools/call`` asks for a token, R2). MCP: sessions are no
  authentication, and a server should bind each to its user.
* Modern: the envelope is checked before anything else (headers, then ``_meta``,
  then the version); ``Mcp-Session-Id`` is ignored; methods it does not have
  (``ping``, ``initialize``, anything unknown) get ``404`` and ``-32601``.
* ``GET`` gets ``405``. ``DELETE`` with an ``Mcp-Session-Id`` ends that legacy
  session (``204``; ``404`` for an unknown one or one bound to someone else); without
  one it gets ``405`` when the modern era is served (it has no sessions) and ``404``
  otherwise.
* Argument schema violations come back as a tool result with ``isError: true``
  (what ``2025-11-25`` asks, SEP-1303); unknown tools as JSON-RPC ``-32602``.
* ``tools/call`` authenticates before it validates arguments: without a valid token
  a caller learns nothing about an argument's validity.
* An error that quotes what the request sent (a method, a header value, a field that
  breaks the schema) is masked first (:meth:`McpEndpoint._echo`): it never shows a
  token the server issued or the request's own credential.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pytest_osfoundry._mcp_vocabulary import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION_HEADER,
    SESSION_ID_HEADER,
    UNAUTHORIZED,
)
from pytest_osfoundry._vocabulary import VERSION
from pytest_osfoundry._wirejson import dumps
from pytest_osfoundry.http import Request, Response, json_response
from pytest_osfoundry.server import _tools as tooldefs
from pytest_osfoundry.server._auth import TokenStore, bearer_token, challenge
from pytest_osfoundry.server._eras import (
    ALL_VERSIONS,
    LEGACY_VERSIONS,
    META_SERVER_INFO,
    MODERN_VERSIONS,
    check_modern,
    is_modern_request,
    normalize_protocols,
)
from pytest_osfoundry.server._request_body import BadJson, parse_body
from pytest_osfoundry.server._request_schema import refusal as schema_refusal
from pytest_osfoundry.server._state import Agent, DomainError, ServerState

__all__ = [
    "ALL_VERSIONS",
    "LATEST_VERSION",
    "SUPPORTED_VERSIONS",
    "McpEndpoint",
    "event_stream",
]

SUPPORTED_VERSIONS = LEGACY_VERSIONS
"""The legacy revisions (offered at ``initialize``), newest first."""
LATEST_VERSION = SUPPORTED_VERSIONS[0]
#: MCP sessions remembered at once; past it the oldest is forgotten (its client gets
#: 404 and initializes again, as the MCP specification provides).
MAX_SESSIONS = 10_000
#: Who a legacy session belongs to: a credential's kind and principal id (``None``:
#: nobody yet, a session opened and used without a valid token).
Owner = tuple[str, str]
SERVER_INFO = {"name": "pytest-osfoundry reference server", "version": VERSION}
INSTRUCTIONS = (
    "run_graph_session queues a Graph run on the owner's desktop; poll "
    "get_graph_run about 20 s later for its progress and result."
)
#: Caching hints of ``tools/list`` and ``server/discover`` (modern era): the tool
#: listing is the same for every caller and never changes while the server runs.
TTL_MS = 3_600_000
CACHE_SCOPE = "public"

# Request headers arrive with lower-case names (pytest_osfoundry.http.Request).
_VERSION_KEY = PROTOCOL_VERSION_HEADER.lower()
_SESSION_KEY = SESSION_ID_HEADER.lower()

_JSON_HEADERS = {"content-type": "application/json"}


def _rpc_error(
    status: int,
    msg_id: Any,
    code: int,
    message: str,
    headers: dict[str, str] | None = None,
    data: Any = None,
) -> Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json_response(status, {"jsonrpc": "2.0", "id": msg_id, "error": error}, headers)


class _Refusal(Exception):
    """An HTTP-level refusal raised from inside a tool call (401/403)."""

    def __init__(self, status: int, www_authenticate: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.www_authenticate = www_authenticate
        self.message = message


ToolImpl = Callable[[ServerState, Agent, dict[str, Any]], dict[str, Any]]

_TOOL_IMPLS: dict[str, ToolImpl] = {
    tooldefs.RUN_GRAPH_SESSION: lambda s, a, args: s.run_graph_session(
        a, args["graph_session_id"], args["idempotency_key"], args.get("arguments")
    ),
    tooldefs.LIST_GRAPH_SESSIONS: lambda s, a, args: s.list_graph_sessions(
        a, args["project_id"], None if "limit" not in args else int(args["limit"])
    ),
    tooldefs.GET_GRAPH_RUN: lambda s, a, args: s.get_graph_run(a, args["command_id"]),
    tooldefs.CANCEL_GRAPH_RUN: lambda s, a, args: s.cancel_graph_run(a, args["command_id"]),
}


_EVENT_STREAM_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}


def event_stream(message: bytes, headers: Mapping[str, str] | None = None) -> Response:
    """One JSON-RPC ``message`` (compact JSON, one line) answered as the endpoint does
    when built with ``sse=True``: a 200 event stream of one ``message`` event, with
    ``headers`` (lower-case names) added."""
    body = b"event: message\ndata: " + message + b"\n\n"
    return Response(200, {**_EVENT_STREAM_HEADERS, **(headers or {})}, body)


class McpEndpoint:
    """Answers HTTP requests to the MCP URL on behalf of a :class:`ServerState`.

    ``protocols`` names the revisions served (all three by default); it is
    validated by :func:`~pytest_osfoundry.server._eras.normalize_protocols`.
    """

    def __init__(
        self,
        state: ServerState,
        tokens: TokenStore,
        *,
        sse: bool = False,
        protocols: Iterable[str] | None = None,
    ) -> None:
        self.state = state
        self.tokens = tokens
        self.sse = sse
        self.protocols = normalize_protocols(protocols)
        self.legacy = tuple(v for v in self.protocols if v in LEGACY_VERSIONS)
        self.modern = tuple(v for v in self.protocols if v in MODERN_VERSIONS)
        self.check_schema = True
        """Validate each request against MCP's schema (off only for the simulator's own
        clients, whose requests are proven valid: docs/choices.md)."""
        # Each session's owner (None: nobody yet) and the Authorization value that made
        # it the owner (a request repeating it is the owner, no token lookup). Insertion
        # order: oldest first.
        self._sessions: dict[str, tuple[Owner | None, str | None]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ HTTP
    def handle(self, request: Request, origin: Callable[[Request], str]) -> Response:
        """Serve one HTTP request to the MCP endpoint.

        ``origin(request)`` names this server's public origin (asked only when a
        challenge needs it).
        """
        if request.method != "POST":
            if request.method == "DELETE":
                return self._delete(request)
            return json_response(
                405, {"error": "use POST for MCP messages"}, {"allow": "POST, DELETE"}
            )
        try:
            message = parse_body(request.body)
        except BadJson as bad:
            return _rpc_error(400, None, PARSE_ERROR, f"Parse error: {bad}")
        if type(message) is list:
            return _rpc_error(
                400, None, INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not supported"
            )
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            return _rpc_error(
                400, None, INVALID_REQUEST, "Invalid Request: expected a JSON-RPC 2.0 object"
            )
        method = message.get("method")
        has_id = "id" in message
        msg_id = message.get("id")
        if has_id and type(msg_id) is not int and type(msg_id) is not str:  # bool: refused
            return _rpc_error(
                400, None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
            )
        if method is None:
            if has_id and ("result" in message or "error" in message):
                return Response(202)  # a client's response to a server request
            return _rpc_error(400, msg_id, INVALID_REQUEST, "Invalid Request: no method")
        if not isinstance(method, str):
            return _rpc_error(
                400, msg_id, INVALID_REQUEST, "Invalid Request: method must be a string"
            )
        params = message.get("params", {})
        if params is None:
            params = {}
        header_version = request.headers.get(_VERSION_KEY)
        if self.modern and (not self.legacy or is_modern_request(method, params, header_version)):
            return self._modern(request, method, has_id, msg_id, params, origin)
        return self._legacy(request, method, has_id, msg_id, params, origin)

    # ------------------------------------------------------------------ eras
    def _legacy(
        self,
        request: Request,
        method: str,
        has_id: bool,
        msg_id: Any,
        params: Any,
        origin: Callable[[Request], str],
    ) -> Response:
        headers: dict[str, str] = {}
        if method != "initialize":
            refused = self._check_legacy_headers(request, msg_id)
            if refused is not None:
                return refused
        if not has_id:
            return Response(202)  # notifications (notifications/initialized, cancelled, ...)
        if not isinstance(params, dict):
            return self._reply(
                _error_payload(msg_id, INVALID_PARAMS, "Invalid params: params must be an object"),
                headers,
            )
        stated = request.headers.get("mcp-protocol-version") or params.get("protocolVersion")
        revision = stated if stated in self.legacy else self.legacy[0]
        found = (
            schema_refusal(revision, _request(msg_id, method, params), mask=self._echo(request))
            if self.check_schema
            else None
        )
        if found is not None:
            return self._reply(_error_payload(msg_id, found.code, found.message), headers)
        result: dict[str, Any]
        try:
            if method == "tools/call":  # by far the most common: first
                result = self._call_tool(request, params, origin)
            elif method == "initialize":
                result, headers = self._initialize(request, params)
            elif method == "ping":
                result = {}
            elif method == "tools/list":
                result = {"tools": tooldefs.tools_listing()}
            else:
                unknown = self._echo(request)(f"Method not found: {method}")
                return self._reply(_error_payload(msg_id, METHOD_NOT_FOUND, unknown), headers)
        except _Refusal as refusal:
            return _refused(refusal, msg_id)
        except _InvalidParams as bad:
            invalid = self._echo(request)(str(bad))
            return self._reply(_error_payload(msg_id, INVALID_PARAMS, invalid), headers)
        return self._reply({"jsonrpc": "2.0", "id": msg_id, "result": result}, headers)

    def _modern(
        self,
        request: Request,
        method: str,
        has_id: bool,
        msg_id: Any,
        params: Any,
        origin: Callable[[Request], str],
    ) -> Response:
        if not has_id:
            return Response(202)  # this revision defines no client notifications over HTTP
        if method == "initialize" and not (isinstance(params, dict) and "_meta" in params):
            # A legacy client at a modern-only server: name what is served instead.
            return _rpc_error(
                400,
                msg_id,
                INVALID_PARAMS,
                "Invalid params: this server has no initialize handshake; it serves "
                + ", ".join(self.protocols)
                + " with params._meta on every request",
                data={"supported": list(self.protocols)},
            )
        bad = check_modern(request.headers, method, params, self.protocols)
        if bad is not None:
            echo = self._echo(request)
            data = bad.data
            if data is not None:  # data.requested is the version the request named
                data = {k: echo(v) if isinstance(v, str) else v for k, v in data.items()}
            return _rpc_error(bad.status, msg_id, bad.code, echo(bad.message), data=data)
        found = None
        if self.check_schema:
            found = schema_refusal(
                self.modern[0], _request(msg_id, method, params), mask=self._echo(request)
            )
        if found is not None:
            return _rpc_error(400, msg_id, found.code, found.message)
        result: dict[str, Any]
        try:
            if method == "tools/call":
                result = self._call_tool(request, params, origin)
            elif method == "tools/list":
                result = {
                    "tools": tooldefs.tools_listing(),
                    "ttlMs": TTL_MS,
                    "cacheScope": CACHE_SCOPE,
                }
            elif method == "server/discover":
                result = {
                    "supportedVersions": list(self.protocols),
                    "capabilities": {"tools": {"listChanged": False}},
                    "instructions": INSTRUCTIONS,
                    "ttlMs": TTL_MS,
                    "cacheScope": CACHE_SCOPE,
                }
            else:  # ping and initialize do not exist in this revision
                unknown = self._echo(request)(f"Method not found: {method}")
                return _rpc_error(404, msg_id, METHOD_NOT_FOUND, unknown)
        except _Refusal as refusal:
            return _refused(refusal, msg_id)
        except _InvalidParams as bad:
            invalid = self._echo(request)(str(bad))
            return self._reply(_error_payload(msg_id, INVALID_PARAMS, invalid), {})
        result["resultType"] = "complete"
        result["_meta"] = {META_SERVER_INFO: dict(SERVER_INFO)}
        return self._reply({"jsonrpc": "2.0", "id": msg_id, "result": result}, {})

    def _reply(self, payload: dict[str, Any], headers: dict[str, str]) -> Response:
        body = dumps(payload)
        if self.sse:
            return event_stream(body, headers)
        return Response(200, {**_JSON_HEADERS, **headers}, body)

    def end_session(self, session_id: str) -> bool:
        """End a legacy session now, as a server may at any time (MCP 2025-11-25,
        session management): later requests naming it are answered ``404``. Whether
        it existed."""
        with self._lock:
            return self._sessions.pop(session_id, None) is not None

    def _echo(self, request: Request) -> Callable[[str], str]:
        """What an error quoting ``request`` passes its text through: every token the
        server issued and the request's own credentials masked (``***``)."""
        return lambda text: self.tokens.mask(text, request.headers)

    def _check_legacy_headers(self, request: Request, msg_id: Any) -> Response | None:
        version = request.headers.get(_VERSION_KEY)
        if version is not None and version not in self.legacy:
            return _rpc_error(
                400,
                msg_id,
                INVALID_REQUEST,
                self._echo(request)(
                    f"Unsupported MCP-Protocol-Version {version!r}; supported: "
                    + ", ".join(self.legacy)
                ),
            )
        session = request.headers.get(_SESSION_KEY)
        if session is not None and not self._owner(session, request):
            return _rpc_error(404, msg_id, INVALID_REQUEST, "Unknown or ended Mcp-Session-Id")
        return None

    def _identity(self, request: Request) -> Owner | None:
        """Who ``request``'s bearer token names (``None``: no valid token)."""
        raw = request.headers.get("authorization")
        if raw is None:
            return None
        cred = self.tokens.lookup(bearer_token(raw), self.state.clock.now())
        return None if cred is None else (cred.kind, cred.principal_id)

    def _owner(self, session: str, request: Request) -> bool:
        """Whether ``session`` exists for ``request``'s caller: it is known, and bound to
        the caller's identity or to nobody. A request without a valid token may use a
        bound session (it acts as nobody); a session bound to nobody is bound to the
        first identity that uses it."""
        known = self._sessions.get(session)
        if known is None:
            return False
        owner, bound_by = known
        raw = request.headers.get("authorization")
        if owner is not None and raw is not None and raw == bound_by:
            return True  # the very credential that bound it: its owner
        identity = self._identity(request)
        if owner is not None:
            return identity is None or identity == owner
        with self._lock:
            known = self._sessions.get(session)
            if known is None:
                return False
            if known[0] is None and identity is not None:
                self._sessions[session] = (identity, raw)
                return True
            return identity is None or identity == known[0]

    def _delete(self, request: Request) -> Response:
        session = request.headers.get(_SESSION_KEY)
        if session is not None and self.legacy:
            identity = self._identity(request)
            with self._lock:
                # Only its own identity ends a bound session: a DELETE without a token,
                # or another's, finds it as unknown (404) and leaves it intact.
                known = self._sessions.get(session)
                if known is not None and known[0] in (None, identity):
                    del self._sessions[session]
                    return Response(204)
            return json_response(404, {"error": "unknown or ended Mcp-Session-Id"})
        if self.modern:
            return json_response(
                405,
                {"error": "MCP 2026-07-28 has no sessions to end; use POST"},
                {"allow": "POST"},
            )
        return json_response(404, {"error": "unknown or missing Mcp-Session-Id"})

    # ------------------------------------------------------------------ methods
    def _initialize(
        self, request: Request, params: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        asked = params.get("protocolVersion")
        version = asked if asked in self.legacy else self.legacy[0]
        session_id = secrets.token_hex(16)
        owner = self._identity(request)  # bound now if the initialize carries a token
        bound_by = request.headers.get("authorization") if owner is not None else None
        with self._lock:
            self._sessions[session_id] = (owner, bound_by)
            while len(self._sessions) > MAX_SESSIONS:  # forget the oldest; it re-initializes
                del self._sessions[next(iter(self._sessions))]
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": dict(SERVER_INFO),
            "instructions": INSTRUCTIONS,
        }
        return result, {_SESSION_KEY: session_id}

    def _call_tool(
        self, request: Request, params: dict[str, Any], origin: Callable[[Request], str]
    ) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str) or name not in _TOOL_IMPLS:
            raise _InvalidParams(
                f"Unknown tool: {name!r}"
                if isinstance(name, str)
                else "Invalid params: name must be a string"
            )
        arguments = params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _InvalidParams("Invalid params: arguments must be an object")
        agent = self._authorize(request, name, origin)
        invalid = tooldefs.argument_error(name, arguments)
        if invalid is not None:
            return _tool_error(self._echo(request)(invalid))
        try:
            structured = _TOOL_IMPLS[name](self.state, agent, arguments)
        except DomainError as err:
            return _tool_error(err.message)
        return {
            "content": [{"type": "text", "text": dumps(structured).decode("utf-8")}],
            "structuredContent": structured,
        }

    def _authorize(self, request: Request, tool: str, origin: Callable[[Request], str]) -> Agent:
        """R2: 401 without a usable agent token, 403 without the tool's scope."""
        scope = tooldefs.REQUIRED_SCOPE[tool]
        raw = request.headers.get("authorization")
        token = bearer_token(raw)
        cred = self.tokens.lookup(token, self.state.clock.now())
        if cred is None:
            error = None if raw is None else "invalid_token"
            message = "Unauthorized: a valid bearer token is required"
            raise _Refusal(401, challenge(origin(request), scope, error), message)
        agent = self.state.agents.get(cred.principal_id) if cred.kind == "agent" else None
        if agent is None or scope not in agent.scopes:
            raise _Refusal(
                403,
                challenge(origin(request), scope, "insufficient_scope"),
                f"Forbidden: this token lacks the {scope} scope",
            )
        return agent


def _refused(refusal: _Refusal, msg_id: Any) -> Response:
    return _rpc_error(
        refusal.status,
        msg_id,
        UNAUTHORIZED,
        refusal.message,
        {"www-authenticate": refusal.www_authenticate},
    )


class _InvalidParams(Exception):
    pass


def _request(msg_id: Any, method: str, params: Any) -> dict[str, Any]:
    """The request as MCP's schema sees it (params as the layer read them)."""
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def _error_payload(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _tool_error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}
