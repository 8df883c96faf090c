"""An MCP client speaking Streamable HTTP (SPEC R1-R3) over any :class:`Transport`.

:class:`McpClient` speaks both eras of MCP. In the *modern* era (``2026-07-28``)
every request carries ``params._meta`` (protocol version, client capabilities,
client info) and the ``MCP-Protocol-Version``, ``Mcp-Method`` and (for
``tools/call``) ``Mcp-Name`` headers; there is no handshake. In the *legacy* era
(``2025-11-25``, ``2025-06-18``) it runs ``initialize``, keeps the
``Mcp-Session-Id`` the server issued and sends ``MCP-Protocol-Version`` on every
later request. ``protocol="auto"`` (the default) probes and falls back
(:mod:`~pytest_osfoundry.client._mcp_eras`, where the era found is kept in the
client's :class:`~pytest_osfoundry.client._mcp_eras.EraCache`, shared only when
clients are given the same one).

This module holds the client's state, its headers and how it sends a request;
reading answers is :mod:`~pytest_osfoundry.client._jsonrpc` (``application/json``
or ``text/event-stream``, strictly: anything the protocol does not allow raises
:class:`ProtocolViolation` rather than being guessed around, because the
conformance suite uses it to judge servers — except a missing ``resultType``, which
the MCP changelog says to read as ``"complete"``); the tools are
:mod:`~pytest_osfoundry.client._mcp_tools`.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from pytest_osfoundry import __version__
from pytest_osfoundry._mcp_vocabulary import (
    LEGACY_VERSIONS,
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_VERSION,
    PROTOCOL_VERSION_HEADER,
    SESSION_ID_HEADER,
)
from pytest_osfoundry._wirejson import dumps as _dumps
from pytest_osfoundry.client._errors import ProtocolViolation
from pytest_osfoundry.client._exchange import mask_token, mask_url
from pytest_osfoundry.client._jsonrpc import AnswerReader, header_value
from pytest_osfoundry.client._mcp_eras import (
    LEGACY_PROTOCOL_VERSIONS,
    MODERN_PROTOCOL_VERSION,
    PROTOCOL_CHOICES,
    SUPPORTED_PROTOCOL_VERSIONS,
    EraCache,
    EraNegotiation,
    is_modern_error,
    mcp_header_value,
)
from pytest_osfoundry.client._mcp_tools import ToolCalls
from pytest_osfoundry.client._transport import FixedHeaders, Transport
from pytest_osfoundry.http import Response

__all__ = [
    "CLIENT_NAME",
    "LEGACY_PROTOCOL_VERSIONS",
    "MODERN_PROTOCOL_VERSION",
    "PROTOCOL_CHOICES",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "EraCache",
    "McpClient",
    "is_modern_error",
    "mcp_header_value",
]

CLIENT_NAME = "pytest-osfoundry"
"""``clientInfo.name`` sent at ``initialize``."""

_ACCEPT = "application/json, text/event-stream"
_SESSION_KEY = SESSION_ID_HEADER.lower()


class McpClient(EraNegotiation, ToolCalls):
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

    JSON-RPC ids are consecutive integers starting at 1. Results and errors:
    :meth:`rpc` returns ``result``; a non-2xx reply raises
    :class:`~pytest_osfoundry.client._errors.HttpStatusError`, an error object
    :class:`~pytest_osfoundry.client._errors.JsonRpcError`, anything malformed
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
        era_cache: EraCache | MutableMapping[str, str] | None = None,
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
            META_CLIENT_INFO: {"name": CLIENT_NAME, "version": __version__},
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
        if self._era_from_cache and self._contradicted(reply):
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

    def __repr__(self) -> str:
        token = "***" if self._token is not None else None
        return (
            f"McpClient(url={self._where()!r}, token={token!r}, era={self.era!r}, "
            f"session_id={self.session_id!r}, protocol_version={self.negotiated_version!r})"
        )
