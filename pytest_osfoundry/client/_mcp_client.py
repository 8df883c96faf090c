"""An MCP client speaking Streamable HTTP (SPEC R1-R3) over any :class:`Transport`.

:class:`McpClient` speaks both eras of MCP. In the *modern* era (``2026-07-28``)
every request carries ``params._meta`` (protocol version, client capabilities,
client info) and the ``MCP-Protocol-Version``, ``Mcp-Method`` and (for
``tools/call``) ``Mcp-Name`` headers; there is no handshake. In the *legacy* era
(``2025-11-25``, ``2025-06-18``) it runs ``initialize``, keeps the
``Mcp-Session-Id`` the server issued and sends ``MCP-Protocol-Version`` on every
later request.

``protocol="auto"`` (the default) settles the era by probing: a modern
``server/discover``, falling back to ``initialize`` when the server answers as a
legacy server would (a 4xx, or a JSON-RPC error in a 2xx, that is not a recognized
modern error; ``-32022`` listing a legacy revision). What was found is kept in an
:class:`EraCache`: each client has its own unless clients are given one to share, so
nothing is remembered for the whole process and no test has to clear anything. An
era taken from a shared cache is probed again once if a later answer contradicts it.

Writing requests and reading answers is :mod:`~pytest_osfoundry.client._jsonrpc`
(answers as ``application/json`` or ``text/event-stream``, strictly: anything the
protocol does not allow raises :class:`ProtocolViolation` rather than being guessed
around, because the conformance suite uses it to judge servers -- except a missing
``resultType``, which the MCP changelog says to read as ``"complete"``). Tool results: a result with
``isError: true`` raises :class:`~pytest_osfoundry.client._errors.ToolError` (its
message is ``content[0].text``, SPEC R3).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Mapping, MutableMapping
from typing import Any

from pytest_osfoundry._masking import mask_token, mask_url
from pytest_osfoundry._mcp_vocabulary import (
    INVALID_PARAMS,
    LEGACY_VERSIONS,
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_VERSION,
    METHOD_NOT_FOUND,
    MODERN_ONLY_CODES,
    MODERN_VERSION,
    PROTOCOL_VERSION_HEADER,
    SESSION_ID_HEADER,
    UNSUPPORTED_VERSION,
)
from pytest_osfoundry._origin import origin_of
from pytest_osfoundry._vocabulary import (
    CANCEL_GRAPH_RUN,
    GET_GRAPH_RUN,
    LIST_GRAPH_SESSIONS,
    RUN_GRAPH_SESSION,
    VERSION,
)
from pytest_osfoundry.client._errors import (
    HttpStatusError,
    JsonRpcError,
    ProtocolViolation,
    ToolError,
)
from pytest_osfoundry.client._jsonrpc import (
    ACCEPT,
    AnswerReader,
    header_value,
    read_answer,
    request_body,
)
from pytest_osfoundry.client._tool_result import read_tool_result
from pytest_osfoundry.client._transport import FixedHeaders, Transport
from pytest_osfoundry.http import Response

__all__ = [
    "CLIENT_NAME",
    "LEGACY_PROTOCOL_VERSIONS",
    "MAX_TOOL_PAGES",
    "MODERN_PROTOCOL_VERSION",
    "PROTOCOL_CHOICES",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "EraCache",
    "McpClient",
    "is_modern_error",
    "mcp_header_value",
]

SUPPORTED_PROTOCOL_VERSIONS = frozenset(LEGACY_VERSIONS)
"""Legacy revisions the client accepts from the server at ``initialize`` (SPEC R1)."""
LEGACY_PROTOCOL_VERSIONS = LEGACY_VERSIONS
MODERN_PROTOCOL_VERSION = MODERN_VERSION
PROTOCOL_CHOICES = ("auto", MODERN_PROTOCOL_VERSION, *LEGACY_PROTOCOL_VERSIONS)
"""What ``protocol=`` accepts: ``auto`` or one pinned revision."""

_ERAS = ("modern", "legacy")


class EraCache:
    """The era (``"modern"`` or ``"legacy"``) found per origin, for the clients given it.

    ``mapping`` is where the eras are kept, keyed by origin (``http://host:port``, as
    :func:`~pytest_osfoundry._origin.origin_of` writes it; a URL that is no http(s)
    URL is its own key); a new dict by default; pass a dict to see or seed them.
    Thread-safe: clients on several threads may share one.
    """

    def __init__(self, mapping: MutableMapping[str, str] | None = None) -> None:
        self.mapping: MutableMapping[str, str] = {} if mapping is None else mapping
        self._lock = threading.Lock()

    def get(self, url: str) -> str | None:
        """The era found at ``url``'s origin, or None."""
        with self._lock:
            return self.mapping.get(origin_of(url, url))

    def remember(self, url: str, era: str) -> None:
        """Note ``era`` for ``url``'s origin.

        Raises:
            ValueError: ``era`` is not ``"modern"`` or ``"legacy"``.
        """
        if era not in _ERAS:
            raise ValueError(f"an era is 'modern' or 'legacy', got {era!r}")
        with self._lock:
            self.mapping[origin_of(url, url)] = era

    def forget(self, url: str) -> None:
        """Drop what is known of ``url``'s origin."""
        with self._lock:
            self.mapping.pop(origin_of(url, url), None)

    def __repr__(self) -> str:
        with self._lock:
            return f"EraCache({dict(self.mapping)!r})"


def mcp_header_value(value: str) -> str:
    """``value`` as an ``Mcp-Name`` header: itself when plain, else the Base64 sentinel.

    Plain means visible ASCII and inner spaces only, no surrounding whitespace, and
    not itself shaped like a sentinel (MCP 2026-07-28, Value Encoding).
    """
    plain = (
        value == value.strip(" \t")
        and all(" " <= ch <= "~" for ch in value)
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    if plain:
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def _modern_error(reply: Response) -> dict[str, Any] | None:
    """The error object of ``reply`` when it is a recognized modern JSON-RPC error."""
    try:
        message = read_answer(reply, None).message
    except ProtocolViolation:
        return None
    error = message.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(error, dict) or not isinstance(code, int):
        return None
    status = reply.status
    recognized = (
        code in MODERN_ONLY_CODES
        or (status == 400 and code == INVALID_PARAMS)
        or (status == 404 and code == METHOD_NOT_FOUND)
    )
    return error if recognized else None


def is_modern_error(reply: Response) -> bool:
    """Whether an HTTP answer (JSON or event stream) is a recognized modern JSON-RPC error.

    ``-32020``/``-32021``/``-32022`` anywhere; ``-32602`` with HTTP 400 (a request
    without ``_meta``); ``-32601`` with HTTP 404 (a method the revision lacks).
    """
    return _modern_error(reply) is not None


CLIENT_NAME = "pytest-osfoundry"
"""``clientInfo.name`` sent at ``initialize``."""

MAX_TOOL_PAGES = 100
"""The most ``tools/list`` pages :meth:`McpClient.list_tools` follows."""

_SESSION_KEY = SESSION_ID_HEADER.lower()


class McpClient:
    """A Streamable HTTP MCP client bound to one endpoint and (optionally) one token.

    * ``token`` is sent as ``Authorization: Bearer <token>`` on every request when
      set; it never appears in ``repr`` or in any error message.
    * ``protocol`` is ``"auto"`` (probe, fall back, cache the era per origin) or a
      pinned revision of :data:`PROTOCOL_CHOICES`.
    * ``protocol_version`` is the legacy revision offered at ``initialize`` (a pinned
      legacy ``protocol`` sets it); the server's answer must be one of
      :data:`SUPPORTED_PROTOCOL_VERSIONS`.
    * ``era_cache`` is where the era found per origin is kept (``auto`` only): an
      :class:`EraCache` (or a dict, wrapped in one); by default the client's own, so
      nothing is shared between clients unless they are given the same cache.
    * With ``auto_initialize`` (the default) the first request settles the era
      (:meth:`connect`): a modern client just sends; a legacy one runs
      :meth:`initialize` first, once. Without it nothing is sent on the client's
      behalf: a pinned modern client still sends the modern envelope, any other
      sends bare legacy requests.
    * With ``renew_session`` (off by default: the conformance suite judges a server's
      404s itself), a request naming its ``Mcp-Session-Id`` that is answered ``404``
      (the server ended the session, which MCP 2025-11-25 allows at any time) starts a
      new session with :meth:`initialize` and is sent once more, as MCP asks of a
      client.

    JSON-RPC ids are consecutive integers starting at 1. Results and errors:
    :meth:`rpc` returns ``result``; a non-2xx reply raises
    :class:`~pytest_osfoundry.client._errors.HttpStatusError`, an error object
    :class:`~pytest_osfoundry.client._errors.JsonRpcError`, anything malformed
    :class:`ProtocolViolation`; a lost reply raises ``ReplyLost`` from the transport.
    MCP's methods (:meth:`ping`, :meth:`list_tools`, :meth:`call_tool`) and the four
    osFoundry tools (SPEC D3: :meth:`run_graph_session`, :meth:`get_graph_run`,
    :meth:`cancel_graph_run`, :meth:`list_graph_sessions`) are methods of the client.
    """

    def __init__(
        self,
        transport: Transport,
        url: str,
        token: str | None = None,
        *,
        protocol: str = "auto",
        protocol_version: str = LEGACY_VERSIONS[0],
        auto_initialize: bool = True,
        era_cache: EraCache | MutableMapping[str, str] | None = None,
        renew_session: bool = False,
    ) -> None:
        if protocol not in PROTOCOL_CHOICES:
            raise ValueError(
                f"protocol must be one of {', '.join(PROTOCOL_CHOICES)}, got {protocol!r}"
            )
        self.transport = transport
        self.url = url
        self._token = token
        self.protocol = protocol
        self.protocol_version = (
            protocol if protocol in LEGACY_PROTOCOL_VERSIONS else protocol_version
        )
        self.auto_initialize = auto_initialize
        self.renew_session = renew_session
        self.era_cache = era_cache if isinstance(era_cache, EraCache) else EraCache(era_cache)
        """The eras found per origin (see :class:`EraCache`)."""
        self.era: str | None = "modern" if protocol == MODERN_PROTOCOL_VERSION else None
        """``"modern"`` or ``"legacy"`` once settled (``None`` before)."""
        self.negotiated_version: str | None = None
        """The revision in use: chosen by the server at ``initialize`` (legacy), or
        ``2026-07-28`` once the modern era is settled (``None`` before)."""
        self.session_id: str | None = None
        """The ``Mcp-Session-Id`` the server issued at ``initialize``, if any."""
        self.initialize_result: dict[str, Any] | None = None
        """The whole ``initialize`` result (``serverInfo``, ``capabilities``, ...)."""
        self.discover_result: dict[str, Any] | None = None
        """The ``server/discover`` result of the modern probe, when one was made."""
        self._initialized = False
        self._era_from_cache = False
        self._next_id = 0
        self._headers = FixedHeaders({})
        self._modern_headers: dict[tuple[str, str | None], FixedHeaders] = {}
        self._meta: dict[str, Any] = {
            META_VERSION: MODERN_PROTOCOL_VERSION,
            META_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": CLIENT_NAME, "version": VERSION},
        }
        if self.era == "modern":
            self.negotiated_version = MODERN_PROTOCOL_VERSION
        self._reader = AnswerReader(self._mask, self._where)
        self._rebuild_headers()

    # -- state ----------------------------------------------------------------

    @property
    def initialized(self) -> bool:
        """Whether the ``initialize`` handshake has completed (legacy era only)."""
        return self._initialized

    @property
    def ready(self) -> bool:
        """Whether the era is settled (and, in the legacy era, the handshake done)."""
        return self.era == "modern" or self._initialized

    @property
    def has_token(self) -> bool:
        """Whether requests carry a bearer token (the token itself is not exposed)."""
        return self._token is not None

    def _rebuild_headers(self) -> None:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        self._modern_headers = {}
        self._modern_base = dict(headers, **{PROTOCOL_VERSION_HEADER: MODERN_PROTOCOL_VERSION})
        if self.negotiated_version is not None and self.era != "modern":
            headers[PROTOCOL_VERSION_HEADER] = self.negotiated_version
        if self.session_id is not None:
            headers[SESSION_ID_HEADER] = self.session_id
        self._headers = FixedHeaders(headers)

    def request_headers(self, method: str | None = None, name: str | None = None) -> dict[str, str]:
        """A copy of the headers a request will carry (token included).

        In the modern era they depend on the request: pass its ``method`` (and, for
        ``tools/call``, the tool ``name``).
        """
        if self.era == "modern" and method is not None:
            return dict(self._modern_headers_for(method, name))
        return dict(self._headers)

    def _modern_headers_for(self, method: str, name: str | None) -> FixedHeaders:
        key = (method, name)
        headers = self._modern_headers.get(key)
        if headers is None:  # kept per (method, name): the same headers every call
            written = dict(self._modern_base, **{MCP_METHOD_HEADER: method})
            if name is not None:
                written[MCP_NAME_HEADER] = mcp_header_value(name)
            if len(self._modern_headers) >= 64:
                self._modern_headers.clear()
            headers = self._modern_headers[key] = FixedHeaders(written)
        return headers

    def _mask(self, text: str) -> str:
        return mask_token(text, (self._token,))

    def _where(self) -> str:
        return mask_url(self.url, (self._token,))

    def _read_result(self, reply: Response, request_id: int) -> Any:
        return self._reader.result(reply, request_id)

    # -- sending ----------------------------------------------------------------

    def _send(
        self, method: str, params: Mapping[str, Any] | None, *, notification: bool = False
    ) -> Response:
        """POST one JSON-RPC message as this client's era sends it.

        A request (not a ``notification``) takes the next id. In the modern era the
        params carry ``_meta`` and the headers name the method (and, for
        ``tools/call``, the tool).
        """
        request_id = None
        if not notification:
            self._next_id += 1
            request_id = self._next_id
        if self.era == "modern":
            sent = self.envelope(method, params)
            assert sent is not None  # the modern envelope always has _meta
            params = sent
            name = sent.get("name") if method == "tools/call" else None
            headers = self._modern_headers_for(method, name)
        else:
            headers = self._headers
        body = request_body(method, params, request_id)
        return self.transport.request("POST", self.url, headers, body)

    def _ensure_initialized(self) -> None:
        if self.auto_initialize and not self.ready:
            self.connect()

    def envelope(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """``params`` as this client's era sends them: with ``_meta`` when modern."""
        if self.era != "modern":
            return None if params is None else dict(params)
        out = dict(params or {})
        extra = out.get("_meta")
        out["_meta"] = {**self._meta, **extra} if isinstance(extra, dict) else self._meta
        return out

    def rpc_raw(self, method: str, params: Mapping[str, Any] | None = None) -> Response:
        """Send one JSON-RPC request and return the HTTP reply unparsed.

        Settles the era first (unless ``method`` is ``initialize``). The request's
        id is :attr:`last_id`.
        """
        if method != "initialize" and not self.ready:
            self._ensure_initialized()
        return self._send(method, params)

    @property
    def last_id(self) -> int:
        """The id of the most recent JSON-RPC request (0 before the first)."""
        return self._next_id

    def rpc(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send one JSON-RPC request and return its ``result``.

        When the era came from the per-origin cache and the answer contradicts it
        (a legacy-looking refusal to a modern request), the era is probed again
        once and the request re-sent; with ``renew_session``, a ``404`` to a request
        naming the session starts a new session and the request is re-sent once.
        """
        named = self.session_id
        reply = self.rpc_raw(method, params)
        if self._era_from_cache and self._contradicted(reply):
            reply = self.rpc_raw(method, params)
        elif (
            self.renew_session
            and reply.status == 404
            and named is not None
            and named == self.session_id
            and method != "initialize"
        ):
            self.initialize()  # the server ended the session: a new one, then again
            reply = self.rpc_raw(method, params)
        return self._read_result(reply, self._next_id)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> Response:
        """Send a JSON-RPC notification and return the HTTP reply whatever its status.

        SPEC R1 wants ``202`` with no body; checking that is the caller's business.
        Settles the era first unless ``method`` is ``notifications/initialized``.
        """
        if method != "notifications/initialized":
            self._ensure_initialized()
        return self._send(method, params, notification=True)

    # -- the era ------------------------------------------------------------------

    def connect(self) -> str:
        """Settle the era (probing and falling back when ``protocol="auto"``).

        A legacy era runs ``initialize``. Returns ``"modern"`` or ``"legacy"``.
        """
        if self.protocol == MODERN_PROTOCOL_VERSION:
            self._settle("modern")
            return "modern"
        if self.protocol != "auto":
            self.initialize()
            return "legacy"
        cached = self.era_cache.get(self.url)
        if cached == "modern":
            self._settle("modern")
            self._era_from_cache = True
            return "modern"
        if cached == "legacy":
            try:
                self.initialize()
            except HttpStatusError as err:
                if not is_modern_error(Response(err.status, err.headers, err.body)):
                    raise
                self.era = None  # a modern server now: probe below
            else:
                self._era_from_cache = True
                return "legacy"
        era = self._probe()
        self.era_cache.remember(self.url, era)
        if era == "legacy":
            self.initialize()
        return era

    def _contradicted(self, reply: Response) -> bool:
        """Whether ``reply`` shows the era taken from the cache is wrong; if so, the
        cache forgets it and the era is unsettled (the caller sends again)."""
        if not self._era_from_cache:
            return False
        if not (
            self.era == "modern" and reply.status in (400, 404, 405) and not is_modern_error(reply)
        ):
            return False
        self._era_from_cache = False
        self.era_cache.forget(self.url)
        self.era = None
        self.negotiated_version = None
        self._rebuild_headers()
        return True

    def _settle(self, era: str) -> str:
        self.era = era
        self.negotiated_version = MODERN_PROTOCOL_VERSION if era == "modern" else None
        self._rebuild_headers()
        return era

    def _probe(self) -> str:
        """Send a modern ``server/discover``; ``"modern"`` or ``"legacy"`` from its answer.

        A result, or a recognized modern error (the server is modern even if it
        refused ``server/discover`` itself), is modern; ``-32022`` listing a legacy
        revision, any other ``4xx`` and a JSON-RPC error in a ``2xx`` are legacy;
        ``-32022`` listing only other modern revisions is raised (no common revision).
        """
        self._settle("modern")
        reply = self._send("server/discover", None)
        if 400 <= reply.status <= 499:
            error = _modern_error(reply)
            if error is None:
                return self._settle("legacy")
            if error["code"] != UNSUPPORTED_VERSION:
                return "modern"
            data = error.get("data")
            supported = data.get("supported") if isinstance(data, dict) else None
            if isinstance(supported, list) and any(
                v in LEGACY_PROTOCOL_VERSIONS for v in supported
            ):
                return self._settle("legacy")
        try:
            result = self._read_result(reply, self._next_id)
        except JsonRpcError:  # 2xx with an error: a server without server/discover
            return self._settle("legacy")
        except BaseException:
            self.era = None
            raise
        if isinstance(result, dict):
            self.discover_result = result
        return "modern"

    # -- the handshake ------------------------------------------------------------

    def initialize(self) -> dict[str, Any]:
        """Run the handshake: ``initialize``, then ``notifications/initialized``.

        Starts a fresh session: any earlier session id and negotiated version are
        dropped first, so the ``initialize`` request carries neither
        ``Mcp-Session-Id`` nor ``MCP-Protocol-Version``. Remembers the session id
        from the reply, checks the negotiated version, then sends the notification
        (with both headers) and expects ``202`` (``200``/``204`` tolerated).
        Returns the ``initialize`` result. Settles the legacy era.
        """
        self._initialized = False
        self.era = "legacy"
        self.session_id = None
        self.negotiated_version = None
        self._rebuild_headers()
        params = {
            "protocolVersion": self.protocol_version,
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": VERSION},
        }
        reply = self._send("initialize", params)
        result = self._read_result(reply, self._next_id)
        if not isinstance(result, dict):
            raise ProtocolViolation("initialize result is not an object")
        version = result.get("protocolVersion")
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise ProtocolViolation(
                f"server chose protocol version {version!r}; "
                f"supported: {', '.join(sorted(SUPPORTED_PROTOCOL_VERSIONS))}"
            )
        session = header_value(reply.headers, _SESSION_KEY)
        if session is not None and (
            not session or not all("\x21" <= ch <= "\x7e" for ch in session)
        ):
            raise ProtocolViolation("Mcp-Session-Id must be non-empty visible ASCII")
        self.session_id = session
        self.negotiated_version = version
        self.initialize_result = result
        self._initialized = True
        self._rebuild_headers()
        ack = self.notify("notifications/initialized")
        if ack.status not in (200, 202, 204):
            self._initialized = False
            if ack.status < 200 or ack.status > 299:
                raise self._reader.status_error(ack)
            raise ProtocolViolation(
                f"notifications/initialized was answered {ack.status}; expected 202"
            )
        return result

    # -- tools --------------------------------------------------------------------

    def ping(self) -> None:
        """Send ``ping``; return when the server answers with a result."""
        self.rpc("ping")

    def list_tools(self) -> list[dict[str, Any]]:
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

    def call_tool_raw(self, name: str, arguments: Mapping[str, Any] | None = None) -> Response:
        """Send ``tools/call`` and return the HTTP reply unparsed (exact bytes)."""
        return self.rpc_raw("tools/call", {"name": name, "arguments": dict(arguments or {})})

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
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
        self,
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

    def get_graph_run(self, command_id: str) -> dict[str, Any]:
        """``get_graph_run``: a run's status and result (SPEC R6)."""
        return self.call_tool(GET_GRAPH_RUN, {"command_id": command_id})

    def cancel_graph_run(self, command_id: str) -> dict[str, Any]:
        """``cancel_graph_run``: cancel a run (SPEC R7)."""
        return self.call_tool(CANCEL_GRAPH_RUN, {"command_id": command_id})

    def list_graph_sessions(self, project_id: str, limit: int | None = None) -> dict[str, Any]:
        """``list_graph_sessions``: the project's shared sessions (SPEC R8)."""
        args: dict[str, Any] = {"project_id": project_id}
        if limit is not None:
            args["limit"] = limit
        return self.call_tool(LIST_GRAPH_SESSIONS, args)

    def __repr__(self) -> str:
        token = "***" if self._token is not None else None
        return (
            f"McpClient(url={self._where()!r}, token={token!r}, era={self.era!r}, "
            f"session_id={self.session_id!r}, protocol_version={self.negotiated_version!r})"
        )
