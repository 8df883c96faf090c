"""Which MCP era a server speaks: the revisions, the probe, the fallback, the memo.

``protocol="auto"`` sends a modern ``server/discover`` and falls back to
``initialize`` when the server answers as a legacy server would (a 4xx, or a
JSON-RPC error in a 2xx, that is not a recognized modern error; ``-32022`` listing a
legacy revision). What was found is kept in an :class:`EraCache`: each client has
its own unless clients are given one to share, so nothing is remembered for the
whole process and no test has to clear anything. An era taken from a shared cache
is probed again once if a later answer contradicts it.

:class:`EraNegotiation` is the part of :class:`~pytest_osfoundry.client.McpClient`
that settles the era; it works on the client's state (:class:`_Negotiating`).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import MutableMapping
from typing import Any, Protocol
from urllib.parse import urlsplit

from pytest_osfoundry._mcp_vocabulary import (
    INVALID_PARAMS,
    LEGACY_VERSIONS,
    METHOD_NOT_FOUND,
    MODERN_ONLY_CODES,
    MODERN_VERSION,
    UNSUPPORTED_VERSION,
)
from pytest_osfoundry.client._errors import HttpStatusError, JsonRpcError, ProtocolViolation
from pytest_osfoundry.client._jsonrpc import read_answer
from pytest_osfoundry.http import Response

__all__ = [
    "LEGACY_PROTOCOL_VERSIONS",
    "MODERN_PROTOCOL_VERSION",
    "PROTOCOL_CHOICES",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "EraCache",
    "EraNegotiation",
    "is_modern_error",
    "mcp_header_value",
    "origin_of",
]

SUPPORTED_PROTOCOL_VERSIONS = frozenset(LEGACY_VERSIONS)
"""Legacy revisions the client accepts from the server at ``initialize`` (SPEC R1)."""
LEGACY_PROTOCOL_VERSIONS = LEGACY_VERSIONS
MODERN_PROTOCOL_VERSION = MODERN_VERSION
PROTOCOL_CHOICES = ("auto", MODERN_PROTOCOL_VERSION, *LEGACY_PROTOCOL_VERSIONS)
"""What ``protocol=`` accepts: ``auto`` or one pinned revision."""

_ERAS = ("modern", "legacy")


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-cased, user information dropped."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc.rpartition('@')[2]).lower()}"


class EraCache:
    """The era (``"modern"`` or ``"legacy"``) found per origin, for the clients given it.

    ``mapping`` is where the eras are kept (a new dict by default; pass a dict to
    see or seed them). Thread-safe: clients on several threads may share one.
    """

    def __init__(self, mapping: MutableMapping[str, str] | None = None) -> None:
        self.mapping: MutableMapping[str, str] = {} if mapping is None else mapping
        self._lock = threading.Lock()

    def get(self, url: str) -> str | None:
        """The era found at ``url``'s origin, or None."""
        with self._lock:
            return self.mapping.get(origin_of(url))

    def remember(self, url: str, era: str) -> None:
        """Note ``era`` for ``url``'s origin.

        Raises:
            ValueError: ``era`` is not ``"modern"`` or ``"legacy"``.
        """
        if era not in _ERAS:
            raise ValueError(f"an era is 'modern' or 'legacy', got {era!r}")
        with self._lock:
            self.mapping[origin_of(url)] = era

    def forget(self, url: str) -> None:
        """Drop what is known of ``url``'s origin."""
        with self._lock:
            self.mapping.pop(origin_of(url), None)

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


class _Negotiating(Protocol):
    """What :class:`EraNegotiation` needs of the client it is part of."""

    url: str
    protocol: str
    era: str | None
    negotiated_version: str | None
    discover_result: dict[str, Any] | None
    era_cache: EraCache
    _era_from_cache: bool
    _next_id: int

    def _rebuild_headers(self) -> None: ...

    def _settle(self, era: str) -> str: ...

    def _probe(self) -> str: ...

    def _send(self, method: str, params: Any, *, notification: bool = False) -> Response: ...

    def _read_result(self, reply: Response, request_id: int) -> Any: ...

    def initialize(self) -> dict[str, Any]: ...


class EraNegotiation:
    """Settling a client's era: :meth:`connect`, the probe, the fallback, the memo.

    The state it settles is the client's (declared here, set by the client).
    """

    era: str | None
    negotiated_version: str | None
    discover_result: dict[str, Any] | None
    _era_from_cache: bool

    def connect(self: _Negotiating) -> str:
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

    def _contradicted(self: _Negotiating, reply: Response) -> bool:
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

    def _settle(self: _Negotiating, era: str) -> str:
        self.era = era
        self.negotiated_version = MODERN_PROTOCOL_VERSION if era == "modern" else None
        self._rebuild_headers()
        return era

    def _probe(self: _Negotiating) -> str:
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
