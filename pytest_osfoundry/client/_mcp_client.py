"""An MCP client speaking Streamable HTTP (SPEC R1-R3) over any :class:`Transport`.

:class:`McpClient` speaks both eras of MCP. In the *modern* era (``2026-07-28``)
every request carries ``params._meta`` (protocol version, client capabilities,
client info) and the ``MCP-Protocol-Version``, ``Mcp-Method`` and (for
``tools/call``) ``Mcp-Name`` headers; there is no handshake. In the *legacy* era
(``2025-11-25``, ``2025-06-18``) it runs ``initialize``, keeps the
``Mcp-Session-Id`` the server issued and sends ``MCP-Protocol-Version`` on every
later request. ``protocol="auto"`` (the default) probes with a modern
``server/discover`` and falls back to ``initialize`` when the server answers as a
legacy server would (a 4xx, or a JSON-RPC error, that is not a recognized modern
error); the era found is cached per origin for the process, and re-probed once if
a later answer contradicts it.

It reads answers whether they come as ``application/json`` or as a
``text/event-stream``. It is strict: anything the protocol does not allow raises
:class:`ProtocolViolation` rather than being guessed around, because the
conformance suite uses it to judge servers — except a missing ``resultType``, which
the MCP changelog says to read as ``"complete"`` (the suite checks it separately).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pytest_osfoundry import __version__
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
from pytest_osfoundry._wirejson import dumps as _dumps
from pytest_osfoundry._wirejson import loads as _fast_loads
from pytest_osfoundry.client._errors import (
    HttpStatusError,
    JsonRpcError,
    ProtocolViolation,
    ToolError,
)
from pytest_osfoundry.client._exchange import mask_token, mask_url
from pytest_osfoundry.client._tool_result import read_tool_result
from pytest_osfoundry.client._transport import FixedHeaders, Transport
from pytest_osfoundry.http import Response

__all__ = [
    "CLIENT_NAME",
    "LEGACY_PROTOCOL_VERSIONS",
    "MODERN_PROTOCOL_VERSION",
    "PROTOCOL_CHOICES",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "McpClient",
    "forget_eras",
    "is_modern_error",
    "mcp_header_value",
    "parse_sse",
]

CLIENT_NAME = "pytest-osfoundry"
"""``clientInfo.name`` sent at ``initialize``."""

SUPPORTED_PROTOCOL_VERSIONS = frozenset(LEGACY_VERSIONS)
"""Legacy revisions the client accepts from the server at ``initialize`` (SPEC R1)."""
LEGACY_PROTOCOL_VERSIONS = LEGACY_VERSIONS
MODERN_PROTOCOL_VERSION = MODERN_VERSION
PROTOCOL_CHOICES = ("auto", MODERN_PROTOCOL_VERSION, *LEGACY_PROTOCOL_VERSIONS)
"""What ``protocol=`` accepts: ``auto`` or one pinned revision."""


_eras: dict[str, str] = {}  # origin -> "modern" | "legacy"
_eras_lock = threading.Lock()


def forget_eras() -> None:
    """Forget every cached server era (the next client of each origin probes again)."""
    with _eras_lock:
        _eras.clear()


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc.rpartition('@')[2]).lower()}"


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


def is_modern_error(status: int, body: bytes) -> bool:
    """Whether an HTTP answer is a recognized modern JSON-RPC error.

    ``-32020``/``-32021``/``-32022`` anywhere; ``-32602`` with HTTP 400 (a request
    without ``_meta``); ``-32601`` with HTTP 404 (a method the revision lacks).
    """
    try:
        message = json.loads(body)
    except ValueError:
        return False
    error = message.get("error") if isinstance(message, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(code, int):
        return False
    return (
        code in MODERN_ONLY_CODES
        or (status == 400 and code == INVALID_PARAMS)
        or (status == 404 and code == METHOD_NOT_FOUND)
    )


_ACCEPT = "application/json, text/event-stream"
_MAX_TOOL_PAGES = 100
_loads = json.JSONDecoder().decode  # str only: JSON on the wire is UTF-8 (RFC 8259)


def _lenient(data: bytes | str) -> Any:
    """The standard library's reading of a reply (UTF-8 only; ``NaN`` tolerated)."""
    return _loads(data.decode("utf-8") if isinstance(data, bytes) else data)


def parse_sse(text: str) -> list[tuple[str, str]]:
    """The events of a ``text/event-stream`` body, as ``(event type, data)`` pairs.

    Follows the WHATWG rules: lines end in CRLF, LF or CR; lines starting with
    ``:`` are comments; ``data:`` lines of one event are joined with newlines; one
    space after the colon is dropped; a blank line ends an event; an event whose
    data is empty (such as a priming event) is not dispatched; the type defaults to
    ``message``. An event that is not ended by a blank line before the stream ends
    is discarded, as browsers and the MCP SDKs do.
    """
    return _parse_sse(text)[0]


def _parse_sse(text: str) -> tuple[list[tuple[str, str]], str | None]:
    """:func:`parse_sse`, plus the data of a trailing unterminated event (or None)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    events: list[tuple[str, str]] = []
    data: list[str] = []
    event_type = ""
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()  # the "" after a final line end is not a blank line
    for line in lines:
        if not line:
            joined = "\n".join(data)
            if joined:
                events.append((event_type or "message", joined))
            data = []
            event_type = ""
            continue
        if line[0] == ":":
            continue
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event_type = value
        # "id" and "retry" are about reconnecting; this client reads one reply.
    pending = "\n".join(data)
    return events, (pending or None)


def _id_matches(message: Mapping[str, Any], request_id: int) -> bool:
    """Whether ``message`` answers ``request_id`` (an error with id null answers any)."""
    mid = message.get("id")
    return (type(mid) is int and mid == request_id) or (mid is None and "error" in message)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        for key, val in headers.items():
            if key.lower() == name:
                return val
    return value


class McpClient:
    """A Streamable HTTP MCP client bound to one endpoint and (optionally) one token.

    * ``token`` is sent as ``Authorization: Bearer <token>`` on every request when
      set; it never appears in ``repr`` or in any error message.
    * ``protocol`` is ``"auto"`` (probe, fall back, cache the era per origin) or a
      pinned revision of :data:`PROTOCOL_CHOICES`.
    * ``protocol_version`` is the legacy revision offered at ``initialize`` (a pinned
      legacy ``protocol`` sets it); the server's answer must be one of
      :data:`SUPPORTED_PROTOCOL_VERSIONS`.
    * ``era_cache`` maps origins to the era found there (``auto`` only); by default
      one cache is shared by the whole process (:func:`forget_eras` clears it).
    * With ``auto_initialize`` (the default) the first request settles the era
      (:meth:`connect`): a modern client just sends; a legacy one runs
      :meth:`initialize` first, once. Without it nothing is sent on the client's
      behalf: a pinned modern client still sends the modern envelope, any other
      sends bare legacy requests.

    JSON-RPC ids are consecutive integers starting at 1. Results and errors:
    :meth:`rpc` returns ``result``; a non-2xx reply raises :class:`HttpStatusError`,
    an error object :class:`JsonRpcError`, anything malformed
    :class:`ProtocolViolation`; a lost reply raises ``ReplyLost`` from the transport.
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
        era_cache: dict[str, str] | None = None,
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
        self._era_cache = _eras if era_cache is None else era_cache
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
            META_CLIENT_INFO: {"name": CLIENT_NAME, "version": __version__},
        }
        if self.era == "modern":
            self.negotiated_version = MODERN_PROTOCOL_VERSION
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
        headers = {"Content-Type": "application/json", "Accept": _ACCEPT}
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

    # -- sending ----------------------------------------------------------------

    def _send(
        self, method: str, params: Mapping[str, Any] | None, *, notification: bool = False
    ) -> Response:
        """POST one JSON-RPC message as this client's era sends it.

        A request (not a ``notification``) takes the next id. In the modern era the
        params carry ``_meta`` and the headers name the method (and, for
        ``tools/call``, the tool).
        """
        payload: dict[str, Any] = {"jsonrpc": "2.0"}
        if not notification:
            self._next_id += 1
            payload["id"] = self._next_id
        payload["method"] = method
        if self.era == "modern":
            sent = self.envelope(method, params)
            assert sent is not None  # the modern envelope always has _meta
            payload["params"] = sent
            name = sent.get("name") if method == "tools/call" else None
            headers = self._modern_headers_for(method, name)
        else:
            if params is not None:  # serialized right away: no copy needed for a dict
                payload["params"] = params if type(params) is dict else dict(params)
            headers = self._headers
        return self.transport.request("POST", self.url, headers, _dumps(payload))

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
        once and the request re-sent.
        """
        reply = self.rpc_raw(method, params)
        if self._era_from_cache and self._contradicts(reply):
            self._era_from_cache = False
            with _eras_lock:
                self._era_cache.pop(_origin(self.url), None)
            self.era = None
            self.negotiated_version = None
            self._rebuild_headers()
            reply = self.rpc_raw(method, params)
        return self._read_result(reply, self._next_id)

    def _contradicts(self, reply: Response) -> bool:
        return (
            self.era == "modern"
            and reply.status in (400, 404, 405)
            and not is_modern_error(reply.status, reply.body)
        )

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> Response:
        """Send a JSON-RPC notification and return the HTTP reply whatever its status.

        SPEC R1 wants ``202`` with no body; checking that is the caller's business.
        Settles the era first unless ``method`` is ``notifications/initialized``.
        """
        if method != "notifications/initialized":
            self._ensure_initialized()
        return self._send(method, params, notification=True)

    # -- eras -------------------------------------------------------------------

    def connect(self) -> str:
        """Settle the era (probing and falling back when ``protocol="auto"``).

        A legacy era runs :meth:`initialize`. Returns ``"modern"`` or ``"legacy"``.
        """
        if self.protocol == MODERN_PROTOCOL_VERSION:
            self._settle("modern")
            return "modern"
        if self.protocol != "auto":
            self.initialize()
            return "legacy"
        origin = _origin(self.url)
        with _eras_lock:
            cached = self._era_cache.get(origin)
        if cached == "modern":
            self._settle("modern")
            self._era_from_cache = True
            return "modern"
        if cached == "legacy":
            try:
                self.initialize()
            except HttpStatusError as err:
                if not is_modern_error(err.status, err.body):
                    raise
                self.era = None  # a modern server now: probe below
            else:
                self._era_from_cache = True
                return "legacy"
        era = self._probe()
        with _eras_lock:
            self._era_cache[origin] = era
        if era == "legacy":
            self.initialize()
        return era

    def _settle(self, era: str) -> None:
        self.era = era
        self.negotiated_version = MODERN_PROTOCOL_VERSION if era == "modern" else None
        self._rebuild_headers()

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
            if not is_modern_error(reply.status, reply.body):
                return self._settle_legacy()
            error = json.loads(reply.body)["error"]
            if error["code"] != UNSUPPORTED_VERSION:
                return "modern"
            data = error.get("data")
            supported = data.get("supported") if isinstance(data, dict) else None
            if isinstance(supported, list) and any(
                v in LEGACY_PROTOCOL_VERSIONS for v in supported
            ):
                return self._settle_legacy()
        try:
            result = self._read_result(reply, self._next_id)
        except JsonRpcError:
            return self._settle_legacy()  # 2xx with an error: a server without server/discover
        except BaseException:
            self.era = None
            raise
        if isinstance(result, dict):
            self.discover_result = result
        return "modern"

    def _settle_legacy(self) -> str:
        self.era = "legacy"
        self.negotiated_version = None
        self._rebuild_headers()
        return "legacy"

    # -- reading ----------------------------------------------------------------

    def _read_result(self, reply: Response, request_id: int) -> Any:
        status = reply.status
        if status < 200 or status > 299:
            raise HttpStatusError(
                status,
                reply.headers,
                reply.body,
                url=self._where(),
                body_text=self._mask(reply.body.decode("utf-8", "replace")),
            )
        ctype = reply.headers.get("content-type")
        if ctype != "application/json":  # the common case needs no normalising
            ctype = (_header(reply.headers, "content-type") or "").partition(";")[0].strip().lower()
        if ctype == "application/json":
            message = self._decode_json(reply.body, "response body")
            if not isinstance(message, dict):
                raise ProtocolViolation(
                    f"response to request {request_id} is a JSON {type(message).__name__}, "
                    "not a JSON-RPC response object"
                )
            if not _id_matches(message, request_id):
                raise ProtocolViolation(
                    f"response id {self._mask(repr(message.get('id')))} does not match "
                    f"request id {request_id}"
                )
            return self._unwrap(message, request_id)
        if ctype == "text/event-stream":
            return self._unwrap(self._find_in_stream(reply.body, request_id), request_id)
        if status == 202:
            raise ProtocolViolation(
                f"request {request_id} was answered 202 Accepted with no response; "
                "only notifications may be"
            )
        raise ProtocolViolation(
            f"response to request {request_id} has Content-Type {ctype or '(none)'!r}; "
            "expected application/json or text/event-stream"
        )

    def _decode_json(self, data: bytes | str, what: str) -> Any:
        try:
            return _fast_loads(data, _lenient)
        except ValueError as exc:  # UnicodeDecodeError included
            text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
            snippet = self._mask(text[:120])
            raise ProtocolViolation(f"{what} is not valid JSON ({exc}): {snippet!r}") from None

    def _find_in_stream(self, body: bytes, request_id: int) -> dict[str, Any]:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolViolation("event stream is not valid UTF-8") from None
        events, pending = _parse_sse(text)
        seen: list[str] = []
        for event_type, data in events:
            if event_type != "message":
                seen.append(f"event {event_type!r}")
                continue
            message = self._decode_json(data, "event-stream data")
            if not isinstance(message, dict):
                raise ProtocolViolation(
                    f"event-stream data is a JSON {type(message).__name__}, not a JSON-RPC message"
                )
            is_response = "result" in message or "error" in message
            if is_response and _id_matches(message, request_id):
                return message
            if is_response:
                seen.append(f"response to id {self._mask(repr(message.get('id')))}")
            else:
                seen.append(repr(message.get("method", "?")))
        hint = ""
        if pending is not None:
            hint = "; its last event is not ended by a blank line, so it does not count"
        got = ", ".join(seen) if seen else "no JSON-RPC messages"
        raise ProtocolViolation(
            f"event stream ended without the response to request {request_id}; "
            f"it carried {got}{hint}"
        )

    def _unwrap(self, message: dict[str, Any], request_id: int) -> Any:
        if message.get("jsonrpc") != "2.0":
            raise ProtocolViolation(f'response to request {request_id} lacks "jsonrpc": "2.0"')
        has_result = "result" in message
        if "error" in message:
            if has_result:
                raise ProtocolViolation(
                    f"response to request {request_id} has both result and error"
                )
            error = message["error"]
            code = error.get("code") if isinstance(error, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            if not isinstance(code, int) or isinstance(code, bool) or not isinstance(text, str):
                raise ProtocolViolation(
                    f"response to request {request_id} has a malformed error object "
                    "(needs integer code and string message)"
                )
            raise JsonRpcError(code, self._mask(text), error.get("data"))
        if not has_result:
            raise ProtocolViolation(
                f"response to request {request_id} has neither result nor error"
            )
        return message["result"]

    # -- MCP methods -------------------------------------------------------------

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
            "clientInfo": {"name": CLIENT_NAME, "version": __version__},
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
        session = _header(reply.headers, SESSION_ID_HEADER.lower())
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
                raise HttpStatusError(
                    ack.status,
                    ack.headers,
                    ack.body,
                    url=self._where(),
                    body_text=self._mask(ack.body.decode("utf-8", "replace")),
                )
            raise ProtocolViolation(
                f"notifications/initialized was answered {ack.status}; expected 202"
            )
        return result

    def ping(self) -> None:
        """Send ``ping``; return when the server answers with a result."""
        self.rpc("ping")

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool ``tools/list`` lists, following ``nextCursor`` pages."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_TOOL_PAGES):
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
        raise ProtocolViolation(f"tools/list did not end within {_MAX_TOOL_PAGES} pages")

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
        return self.call_tool("run_graph_session", args)

    def get_graph_run(self, command_id: str) -> dict[str, Any]:
        """``get_graph_run``: a run's status and result (SPEC R6)."""
        return self.call_tool("get_graph_run", {"command_id": command_id})

    def cancel_graph_run(self, command_id: str) -> dict[str, Any]:
        """``cancel_graph_run``: cancel a run (SPEC R7)."""
        return self.call_tool("cancel_graph_run", {"command_id": command_id})

    def list_graph_sessions(self, project_id: str, limit: int | None = None) -> dict[str, Any]:
        """``list_graph_sessions``: the project's shared sessions (SPEC R8)."""
        args: dict[str, Any] = {"project_id": project_id}
        if limit is not None:
            args["limit"] = limit
        return self.call_tool("list_graph_sessions", args)

    def __repr__(self) -> str:
        token = "***" if self._token is not None else None
        return (
            f"McpClient(url={self._where()!r}, token={token!r}, era={self.era!r}, "
            f"session_id={self.session_id!r}, protocol_version={self.negotiated_version!r})"
        )
