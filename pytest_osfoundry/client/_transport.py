"""Transports: how a client's request reaches a server and its reply comes back.

A :class:`Transport` takes an absolute URL and returns a
:class:`~pytest_osfoundry.http.Response` whose header names are lower-case. A
transport that gets no reply raises :class:`~pytest_osfoundry.client._errors.ReplyLost`;
any HTTP status, 4xx and 5xx included, is a reply and is returned, not raised.
Transports never mutate the ``headers`` mapping they are given.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from pytest_osfoundry.client._errors import ProtocolViolation, ReplyLost
from pytest_osfoundry.client._exchange import Exchange, mask_url, secrets_in
from pytest_osfoundry.http import Handler, Request, Response

if TYPE_CHECKING:  # imported where used: the in-process path never loads httpx
    import httpx

__all__ = [
    "DirectTransport",
    "HttpxTransport",
    "RecordingTransport",
    "Transport",
    "split_target",
]


class Transport(Protocol):
    """Sends one HTTP request to an absolute URL and returns the reply."""

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Send the request; return the reply (any status) or raise ``ReplyLost``."""
        ...


@lru_cache(maxsize=65_536)
def split_target(url: str) -> tuple[str, str]:
    """``(path, query)`` of an absolute URL, as an HTTP server would see them.

    The path stays percent-encoded as on the wire and is ``/`` when empty; the
    query is raw (no ``?``); a fragment is dropped. Results are cached, since a
    client reuses a handful of URLs many times; a plain ``http(s)://`` URL is split
    by hand, the same way :func:`urllib.parse.urlsplit` splits it (tested).
    """
    if url.startswith(("https://", "http://")) and _PLAIN.fullmatch(url) is not None:
        rest = url.partition("://")[2].partition("#")[0]
        cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
        path, _, query = rest[cut:].partition("?")
        return path or "/", query
    parts = urlsplit(url)
    return parts.path or "/", parts.query


#: URLs split by hand: ASCII letters, digits and URL punctuation only (no "@" of a
#: user, no "[" of an IPv6 host, no space, backslash or control character).
_PLAIN = re.compile(r"[A-Za-z0-9\-._~:/?#%&=+,;!$'()*]*")


class DirectTransport:
    """Calls a :class:`~pytest_osfoundry.http.Handler` in-process: the fast path.

    No sockets and no httpx: the URL is split into path and query, header names
    are lower-cased, and the handler's :class:`Response` is returned as it is.
    Whatever the handler raises propagates (it is a bug in the handler, not a lost
    reply); only fault-injecting wrappers raise ``ReplyLost``.

    The handler gets the headers as a read-only mapping. Each client sends the same
    headers dict call after call, so the lower-cased copy made for a dict is kept
    (for up to 64 dicts) and reused while the dict still holds what it held then.
    """

    __slots__ = ("_lowered", "handler")

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        # id(headers) -> (a copy of them, lower-cased read-only version); one tuple per
        # entry, so threads sharing the transport never see one half without the other.
        self._lowered: dict[int, tuple[dict[str, str], Mapping[str, str]]] = {}

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Build a :class:`Request` and hand it to the handler."""
        path, query = split_target(url)
        seen = self._lowered.get(id(headers))
        if seen is not None and seen[0] == headers:
            lowered = seen[1]
        else:
            lowered = MappingProxyType({k.lower(): v for k, v in headers.items()})
            if len(self._lowered) >= 64:
                self._lowered.clear()
            self._lowered[id(headers)] = (dict(headers), lowered)
        return self.handler(Request(method.upper(), path, lowered, body, query))

    def __repr__(self) -> str:
        return f"DirectTransport({self.handler!r})"


class HttpxTransport:
    """Sends through an :class:`httpx.Client`: a real socket, or a respx mount.

    ``timeout`` (seconds) applies to every request, whether the client was given
    or made here. Transport failures and timeouts become ``ReplyLost`` naming the
    URL (token-like query values masked); a body httpx cannot decode becomes
    ``ProtocolViolation``. :meth:`close` closes the client only when this transport
    made it.
    """

    def __init__(self, client: httpx.Client | None = None, *, timeout: float = 10.0) -> None:
        import httpx

        self._owned = client is None
        self.client = client if client is not None else httpx.Client(timeout=timeout)
        self.timeout = timeout

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Send the request and read the whole reply."""
        import httpx

        try:
            reply = self.client.request(
                method, url, headers=dict(headers), content=body, timeout=self.timeout
            )
        except httpx.TransportError as exc:
            where = mask_url(url, secrets_in(url, headers))
            kind = "timed out" if isinstance(exc, httpx.TimeoutException) else "failed"
            raise ReplyLost(
                f"no reply from {method} {where}: {type(exc).__name__} ({kind})", url=where
            ) from exc
        except httpx.DecodingError as exc:
            where = mask_url(url, secrets_in(url, headers))
            raise ProtocolViolation(
                f"reply from {method} {where} could not be decoded: {type(exc).__name__}"
            ) from exc
        return Response(reply.status_code, dict(reply.headers.items()), reply.content)

    def close(self) -> None:
        """Close the httpx client if this transport made it (idempotent)."""
        if self._owned:
            self.client.close()

    def __enter__(self) -> HttpxTransport:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HttpxTransport(timeout={self.timeout})"


class RecordingTransport:
    """Wraps a transport and keeps the last ``keep`` exchanges, lost replies included.

    A request whose reply was lost is recorded with ``status=0`` and the error
    message, then the ``ReplyLost`` is re-raised. Any other exception propagates
    unrecorded.
    """

    def __init__(self, inner: Transport, *, keep: int = 50) -> None:
        if keep < 1:
            raise ValueError("keep must be at least 1")
        self.inner = inner
        self._log: deque[Exchange] = deque(maxlen=keep)

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Forward to the inner transport and record what happened."""
        sent = dict(headers)
        start = time.perf_counter()
        try:
            reply = self.inner.request(method, url, headers, body)
        except ReplyLost as exc:
            elapsed = time.perf_counter() - start
            self._log.append(
                Exchange(method, url, sent, body, 0, {}, b"", elapsed, error=exc.message)
            )
            raise
        elapsed = time.perf_counter() - start
        self._log.append(
            Exchange(
                method, url, sent, body, reply.status, dict(reply.headers), reply.body, elapsed
            )
        )
        return reply

    @property
    def exchanges(self) -> list[Exchange]:
        """The recorded exchanges, oldest first (a copy)."""
        return list(self._log)

    def clear(self) -> None:
        """Forget every recorded exchange."""
        self._log.clear()

    def __repr__(self) -> str:
        return f"RecordingTransport({self.inner!r}, recorded={len(self._log)})"
