"""How the broken variants are built: the reference server behind a rewriting handler.

A variant never reaches into the reference server's insides. :class:`Wrapped` holds a
plain :class:`~pytest_osfoundry.server.ReferenceServer` and is itself an HTTP handler
(``Request -> Response``) with ``provision()`` and ``mcp_path``, which is all
``--osf-target=embedded:MODULE:FACTORY`` asks of a server. A variant overrides
:meth:`Wrapped.handle` and breaks its rule with what any proxy in front of a server
could do: rewrite a request, rewrite an answer, answer by itself, or send the server
requests of its own (:meth:`Wrapped.peek_view`, :meth:`Wrapped.peek_control`,
:meth:`Wrapped.call_tool`). What it must remember (which agent queued which command id,
what the desktop last shared) it learns from the traffic: :class:`Wrapped` keeps that
:class:`Ledger` for every variant.

So a variant depends on the wire format of conformance/spec.md and on ``ReferenceServer``'s public
constructor and ``provision()`` only; refactoring the server's state cannot break it.
Answers are read as plain JSON (the factories build servers without ``sse=True``).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_osfoundry.http import HandlerWrapper, Request, Response
from pytest_osfoundry.server import Provisioned, ReferenceServer

__all__ = [
    "PROTOCOL_VERSION",
    "RELAY_PREFIX",
    "RUN_NOT_FOUND",
    "SESSION_FIELDS",
    "Ledger",
    "QueuedCommand",
    "Server",
    "Wrapped",
    "dumps",
    "is_uuid",
    "json_body",
    "relay_answer",
    "relay_error",
    "relay_route",
    "rpc_message",
    "session_records",
    "structured",
    "token_of",
    "tool_call",
    "tool_error_text",
    "tool_result",
    "with_arguments",
    "with_body",
    "with_json",
    "with_structured",
    "with_token",
]

#: SPEC D5/D6: what an unknown run, or another agent's, is answered with.
RUN_NOT_FOUND = "Graph run not found or access removed"
#: SPEC D10: the fields of a shared session, as a sync uploads them.
SESSION_FIELDS = ("graph_session_id", "name", "description", "slug", "version", "status")

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: conformance/spec.md D10: where the desktop relay API lives (the wire format, not the kit's).
RELAY_PREFIX = "/external-assistants/graph-relays"
#: conformance/spec.md R1: the MCP revision a wrapper's own session asks for.
PROTOCOL_VERSION = "2025-11-25"
_COMMANDS = RELAY_PREFIX + "/commands/"
_MCP_POST = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def is_uuid(value: object) -> bool:
    """Whether ``value`` is a UUID string in the 8-4-4-4-12 form (SPEC D9)."""
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def dumps(value: Any) -> bytes:
    """Compact JSON, UTF-8 (how the reference server writes its answers)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


# ---------------------------------------------------------------------- reading
def json_body(data: bytes) -> Any:
    """``data`` decoded as JSON, or ``None`` when it is not JSON."""
    try:
        return json.loads(data)
    except ValueError:
        return None


def rpc_message(request: Request) -> dict[str, Any] | None:
    """The JSON-RPC message a request carries (any path), or ``None``."""
    message = json_body(request.body) if request.method == "POST" else None
    return message if isinstance(message, dict) else None


def tool_call(request: Request) -> tuple[str, dict[str, Any]] | None:
    """``(tool name, arguments)`` of a ``tools/call`` request, or ``None``."""
    message = rpc_message(request)
    if message is None or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return None
    arguments = params.get("arguments")
    return params["name"], arguments if isinstance(arguments, dict) else {}


def _result(response: Response) -> dict[str, Any] | None:
    payload = json_body(response.body) if response.status == 200 else None
    result = payload.get("result") if isinstance(payload, dict) else None
    return result if isinstance(result, dict) else None


def structured(response: Response) -> dict[str, Any] | None:
    """A successful tool result's ``structuredContent``, or ``None``."""
    result = _result(response)
    if result is None or result.get("isError") is True:
        return None
    content = result.get("structuredContent")
    return content if isinstance(content, dict) else None


def tool_error_text(response: Response) -> str | None:
    """An ``isError`` tool result's text, or ``None``."""
    result = _result(response)
    if result is None or result.get("isError") is not True:
        return None
    try:
        text = result["content"][0]["text"]
    except (KeyError, IndexError, TypeError):
        return None
    return text if isinstance(text, str) else None


def relay_route(request: Request) -> tuple[str, str | None] | None:
    """``("sync", None)`` or ``(action, command_id)`` for a relay API request, else ``None``."""
    if request.path == RELAY_PREFIX + "/sync":
        return "sync", None
    if not request.path.startswith(_COMMANDS):
        return None
    command_id, _, action = request.path[len(_COMMANDS) :].partition("/")
    return (action, command_id) if command_id and action else None


# ---------------------------------------------------------------------- writing
def with_json(response: Response, payload: Any) -> Response:
    """``response`` with ``payload`` as its JSON body."""
    return Response(response.status, dict(response.headers), dumps(payload))


def tool_result(
    msg_id: Any,
    content: Mapping[str, Any],
    like: Response | None = None,
    request: Request | None = None,
) -> Response:
    """A successful ``tools/call`` answer carrying ``content`` (SPEC R3's shape).

    With the headers of ``like`` (an answer of the server's to a tool call) when given,
    and its result's other members (e.g. the modern era's ``resultType``). When
    ``request`` (the call answered) speaks 2026-07-28, the result carries ``resultType``
    as MCP's schema asks, whatever era ``like`` came from.
    """
    kept = _result(like) if like is not None else None
    result = {
        **(kept or {}),
        "content": [{"type": "text", "text": dumps(content).decode()}],
        "structuredContent": dict(content),
    }
    if request is not None and request.headers.get("mcp-protocol-version") == "2026-07-28":
        result.setdefault("resultType", "complete")
    headers = dict(like.headers) if like is not None else {"content-type": "application/json"}
    return Response(200, headers, dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}))


def with_structured(response: Response, content: Mapping[str, Any]) -> Response:
    """A successful tool answer with its structured content (and text) replaced."""
    payload = json_body(response.body)
    if not isinstance(payload, dict):
        return response
    return tool_result(payload["id"], content, like=response)


def relay_answer(status: int, payload: Any) -> Response:
    """A relay API answer: ``payload`` as JSON."""
    return Response(status, {"content-type": "application/json"}, dumps(payload))


def relay_error(status: int, message: str) -> Response:
    """A relay API error answer (``{"error": message}``)."""
    return relay_answer(status, {"error": message})


def with_token(request: Request, token: str) -> Request:
    """``request`` sent with ``token`` as its bearer token instead."""
    headers = {**request.headers, "authorization": f"Bearer {token}"}
    return Request(request.method, request.path, headers, request.body, request.query)


def with_arguments(request: Request, arguments: Mapping[str, Any]) -> Request:
    """A ``tools/call`` request with its arguments replaced."""
    message = rpc_message(request) or {}
    message = {**message, "params": {**message.get("params", {}), "arguments": dict(arguments)}}
    return request._replace(body=dumps(message))


def with_body(request: Request, body: Any) -> Request:
    """``request`` with ``body`` as its JSON body."""
    return request._replace(body=dumps(body))


def token_of(request: Request) -> str | None:
    """The bearer token a request carries, if any."""
    raw = request.header("authorization") or ""
    scheme, _, token = raw.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def session_records(sessions: Any) -> list[dict[str, Any]]:
    """The shared sessions a sync uploads, as ``list_graph_sessions`` shows them."""
    if not isinstance(sessions, list):
        return []
    return [{name: s.get(name) for name in SESSION_FIELDS} for s in sessions if isinstance(s, dict)]


# ---------------------------------------------------------------------- the ledger
@dataclass(frozen=True)
class QueuedCommand:
    """A run the server queued, as the traffic showed it."""

    command_id: str
    token: str
    account: str
    project_id: str | None
    sync_entry: dict[str, Any]


@dataclass
class Ledger:
    """What a wrapper learned from the traffic it passed on."""

    #: command id -> who queued it (only runs whose queueing went through the wrapper).
    commands: dict[str, QueuedCommand] = field(default_factory=dict)
    #: project id -> the sessions its latest accepted sync uploaded.
    shared: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def project_of(self, graph_session_id: Any) -> str | None:
        """The project whose shared sessions include ``graph_session_id``."""
        for project_id, sessions in self.shared.items():
            if any(s["graph_session_id"] == graph_session_id for s in sessions):
                return project_id
        return None

    def slug_of(self, project_id: str | None, graph_session_id: Any) -> Any:
        """That session's slug as last shared."""
        for s in self.shared.get(project_id or "", []):
            if s["graph_session_id"] == graph_session_id:
                return s["slug"]
        return None


# ---------------------------------------------------------------------- the wrapper
class Server(Protocol):
    """What a wrapper wraps: the reference server, or another wrapper around it."""

    @property
    def mcp_path(self) -> str:
        """Where the MCP endpoint is."""

    def __call__(self, request: Request, /) -> Response: ...

    def provision(
        self,
        *,
        agent_token: str | None = None,
        other_agent_token: str | None = None,
        read_token: str | None = None,
        desktop_token: str | None = None,
    ) -> Provisioned:
        """Make the owner, project, desktop and agents (``ReferenceServer.provision``)."""


class Wrapped(HandlerWrapper[Server]):
    """The reference server behind a handler that may break it (override :meth:`handle`).

    ``inner`` is a fresh :class:`~pytest_osfoundry.server.ReferenceServer` unless
    given; wrappers stack (``_A(_B())`` breaks two rules). Thread-safe: the loopback
    server calls it from several threads; one lock orders the requests (and the
    ledger's updates) as the inner server sees them.
    """

    def __init__(self, inner: Server | None = None) -> None:
        super().__init__(inner if inner is not None else ReferenceServer())
        self.mcp_path = self.inner.mcp_path
        self.ledger = Ledger()
        self._made: Provisioned | None = None
        self._sessions: dict[str, dict[str, str]] = {}  # by token: a session is its agent's
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ the handler
    def provision(
        self,
        *,
        agent_token: str | None = None,
        other_agent_token: str | None = None,
        read_token: str | None = None,
        desktop_token: str | None = None,
    ) -> Provisioned:
        """Provision the inner server (one owner, three agents, a stranger).

        Tokens are random unless given, as :meth:`ReferenceServer.provision` makes them.
        """
        self._made = self.inner.provision(
            agent_token=agent_token,
            other_agent_token=other_agent_token,
            read_token=read_token,
            desktop_token=desktop_token,
        )
        return self._made

    @property
    def made(self) -> Provisioned:
        """The credentials :meth:`provision` made."""
        if self._made is None:
            raise RuntimeError("provision() first")
        return self._made

    def __call__(self, request: Request, /) -> Response:
        with self._lock:
            return self.handle(request)

    def handle(self, request: Request) -> Response:
        """Answer ``request``; by default as the reference server does."""
        return self.forward(request)

    def forward(self, request: Request) -> Response:
        """Pass ``request`` to the reference server, noting what the answer shows."""
        response = self.inner(request)
        if response.status == 200:
            self._note(request, response)
        return response

    # ------------------------------------------------------------------ identities
    def queued(self, command_id: Any) -> QueuedCommand | None:
        """Who queued ``command_id`` (any JSON value), if the wrapper saw it queued."""
        return self.ledger.commands.get(command_id) if isinstance(command_id, str) else None

    def account_of(self, token: str | None) -> str | None:
        """``"owner"`` or ``"stranger"``: whose agent or desktop ``token`` is."""
        made = self.made
        if token in (made.agent_token, made.other_agent_token, made.read_token, made.desktop_token):
            return "owner"
        if token in (made.stranger_token, made.stranger_desktop_token):
            return "stranger"
        return None

    # ------------------------------------------------------------------ own requests
    def call_tool(self, like: Request, token: str, name: str, arguments: Any) -> Response:
        """A ``tools/call`` of the wrapper's own, as ``token``.

        It rides on a legacy MCP session the wrapper opened for itself as ``token``
        (the reference server is dual-era; it binds a session to its agent), whatever
        revision ``like`` spoke: a modern request's envelope is per request and cannot
        be borrowed.
        """
        message = {
            "jsonrpc": "2.0",
            "id": "osf-variant",
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        headers = {**_MCP_POST, **self._mcp_headers(token), "authorization": f"Bearer {token}"}
        return self.inner(Request("POST", self.mcp_path, headers, dumps(message)))

    def _mcp_headers(self, token: str) -> dict[str, str]:
        with self._lock:
            if token not in self._sessions:
                self._sessions[token] = self._open_session(token)
            return self._sessions[token]

    def _open_session(self, token: str) -> dict[str, str]:
        """Initialize an MCP session of the wrapper's own as ``token``: its headers."""
        hello = {
            "jsonrpc": "2.0",
            "id": "osf-variant-init",
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "osf-variant", "version": "1"},
            },
        }
        auth = {"authorization": f"Bearer {token}"}
        reply = self.inner(Request("POST", self.mcp_path, {**_MCP_POST, **auth}, dumps(hello)))
        headers: dict[str, str] = {}
        if reply.headers.get("mcp-session-id"):
            headers["mcp-session-id"] = reply.headers["mcp-session-id"]
        agreed = (_result(reply) or {}).get("protocolVersion")
        if isinstance(agreed, str):
            headers["mcp-protocol-version"] = agreed
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.inner(Request("POST", self.mcp_path, {**_MCP_POST, **headers, **auth}, dumps(done)))
        return headers

    def peek(self, like: Request, command_id: Any) -> tuple[dict[str, Any] | None, Response]:
        """``get_graph_run`` as ``like``'s caller: the run's view (or ``None``) and the answer."""
        token = token_of(like) or ""
        reply = self.call_tool(like, token, "get_graph_run", {"command_id": command_id})
        return structured(reply), reply

    def peek_view(self, like: Request, command_id: Any) -> dict[str, Any] | None:
        """The run's view as ``like``'s caller may see it (``get_graph_run``), or ``None``."""
        return self.peek(like, command_id)[0]

    def peek_control(self, like: Request, command_id: str) -> dict[str, Any] | None:
        """The relay's control view of a command (status, cancel flag), or ``None``."""
        path = f"{_COMMANDS}{command_id}/control"
        reply = self.inner(Request("GET", path, like.headers))
        data = json_body(reply.body) if reply.status == 200 else None
        return data if isinstance(data, dict) else None

    # ------------------------------------------------------------------ the ledger
    def _note(self, request: Request, response: Response) -> None:
        call = tool_call(request)
        if call is not None and call[0] == "run_graph_session":
            ticket = structured(response)
            if ticket is not None and isinstance(ticket.get("command_id"), str):
                self._note_queued(request, call[1], ticket)
            return
        if relay_route(request) == ("sync", None):
            body = rpc_message(request) or {}
            project_id = body.get("project_id")
            if isinstance(project_id, str):
                self.ledger.shared[project_id] = session_records(body.get("sessions"))

    def _note_queued(self, request: Request, args: dict[str, Any], ticket: dict[str, Any]) -> None:
        command_id = ticket["command_id"]
        if command_id in self.ledger.commands:
            return  # an idempotent replay
        token = token_of(request) or ""
        gsid = args.get("graph_session_id")
        project_id = self.ledger.project_of(gsid)
        arguments = args.get("arguments")
        self.ledger.commands[command_id] = QueuedCommand(
            command_id=command_id,
            token=token,
            account=self.account_of(token) or "",
            project_id=project_id,
            sync_entry={
                "command_id": command_id,
                "graph_session_id": gsid,
                "slug": self.ledger.slug_of(project_id, gsid),
                "arguments": arguments if isinstance(arguments, dict) else {},
                "queued_at": ticket.get("queued_at"),
            },
        )
