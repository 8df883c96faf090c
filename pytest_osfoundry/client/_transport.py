"""Transports: how a client's request reaches a server and its reply comes back.

A :class:`Transport` takes an absolute URL and returns a
:class:`~pytest_osfoundry.http.Response` whose header names are lower-case. A
transport that gets no reply raises :class:`~pytest_osfoundry.client._errors.ReplyLost`;
any HTTP status, 4xx and 5xx included, is a reply and is returned, not raised.
Transports never mutate the ``headers`` mapping they are given.
"""

from __future__ import annotations

import functools
import time
from collections import deque
from collections.abc import Mapping
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from pytest_osfoundry.client._errors import ProtocolViolation, ReplyLost
from pytest_osfoundry.client._exchange import Exchange, mask_url, secrets_in
from pytest_osfoundry.client._jsonrpc import AnswerWatch, content_type, request_id_of
from pytest_osfoundry.http import Handler, Request, Response

if TYPE_CHECKING:  # imported where used: the in-process path never loads httpx
    import httpx

__all__ = [
    "ConnectionLost",
    "DeadlineExceeded",
    "DirectTransport",
    "FixedHeaders",
    "HttpxTransport",
    "RecordingTransport",
    "ResponseTooLarge",
    "Transport",
    "split_target",
]


class Transport(Protocol):
    """Sends one HTTP request to an absolute URL and returns the reply."""

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Send the request; return the reply (any status) or raise ``ReplyLost``."""
        ...


def split_target(url: str) -> tuple[str, str]:
    """``(path, query)`` of an absolute URL, as an HTTP server would see them.

    The path stays percent-encoded as on the wire and is ``/`` when empty; the
    query is raw (no ``?``); a fragment is dropped.
    """
    parts = urlsplit(url)  # urlsplit keeps its own cache of recent URLs
    return parts.path or "/", parts.query


class FixedHeaders(dict[str, str]):
    """Request headers a client builds once and sends with many requests.

    The mapping holds the headers as written (what exchange logs and reports show);
    :attr:`lowered` is the read-only view with lower-case names that
    :class:`DirectTransport` hands its handler, made once here rather than on every
    request (lower-casing a copy per request showed in ``osfoundry-sim``'s CPU). It
    cannot be changed by item once built (that
    would leave :attr:`lowered` behind): build a new one; ``dict(headers)`` is a
    plain, changeable copy.
    """

    __slots__ = ("lowered",)

    def __init__(self, headers: Mapping[str, str]) -> None:
        super().__init__(headers)
        self.lowered: Mapping[str, str] = MappingProxyType(
            {k.lower(): v for k, v in headers.items()}
        )

    def __setitem__(self, key: str, value: str) -> None:
        raise TypeError("FixedHeaders cannot change once built; build new ones")

    def __delitem__(self, key: str) -> None:
        raise TypeError("FixedHeaders cannot change once built; build new ones")

    def __reduce__(self) -> tuple[type[FixedHeaders], tuple[dict[str, str]]]:
        """Copied and pickled by building anew from the headers as written."""
        return (FixedHeaders, (dict(self),))


class DirectTransport:
    """Calls a :class:`~pytest_osfoundry.http.Handler` in-process: the fast path.

    No sockets and no httpx: the URL is split into path and query, header names
    are lower-cased (a :class:`FixedHeaders` comes with its lower-cased view), and
    the handler's :class:`Response` is returned as it is.
    Whatever the handler raises propagates (it is a bug in the handler, not a lost
    reply); only fault-injecting wrappers raise ``ReplyLost``. The handler gets the
    headers as a read-only mapping.
    """

    __slots__ = ("handler",)

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Build a :class:`Request` and hand it to the handler."""
        path, query = split_target(url)
        if isinstance(headers, FixedHeaders):
            lowered = headers.lowered
        else:
            lowered = MappingProxyType({k.lower(): v for k, v in headers.items()})
        return self.handler(Request(method.upper(), path, lowered, body, query))

    def __repr__(self) -> str:
        return f"DirectTransport({self.handler!r})"


class DeadlineExceeded(ReplyLost):
    """The exchange did not end within its deadline (connect, headers and body in all).

    The message says what the server did: sent nothing, dripped its body, or kept
    an event stream open without the answer.
    """


class ResponseTooLarge(ReplyLost):
    """The response was larger than the size cap; reading stopped at the cap."""


class ConnectionLost(ReplyLost):
    """The connection was refused or reset before any answer (no status line came back).

    Raised for a refused or failed connect, and for a connection the server closed or
    reset while the request was sent or its headers awaited; a failure after the
    headers arrived (while the body was read) is a plain :class:`ReplyLost`. Usual
    causes: the server is down, or its listen backlog or worker pool overflowed.
    """


class HttpxTransport:
    """Sends through an :class:`httpx.Client`: a real socket, or a respx mount.

    Every exchange is bounded:

    * in time: ``timeout`` seconds for the whole exchange (connect, headers and
      body; default: the client's ``deadline`` when it is a
      :class:`~pytest_osfoundry.client._bounded_http.BoundedClient`, else 10 s). Over real
      sockets each read is cut off at the deadline only when the client is a
      ``BoundedClient`` (the one made here is); with any other client the deadline is
      checked between reads.
    * in size: at most ``max_bytes`` of body (default: the client's, else 16 MiB).
    * an event-stream answer to a JSON-RPC request is read only until the event
      carrying the answer to that request's id is complete; the stream is then
      closed, whatever the server meant to send after it (SPEC R1). An event stream
      answering anything else (a ``GET``, a notification) has no answer to wait for:
      it is closed once its headers are in, and the reply's body is empty.

    Failures raise ``ReplyLost`` naming the URL (token-like query values masked):
    :class:`DeadlineExceeded` ("no answer within 10 s", "the event stream stayed
    open without an answer ...") and :class:`ResponseTooLarge` ("the response
    exceeded 16 MiB") are its subclasses. A body httpx cannot decode becomes
    ``ProtocolViolation``. :meth:`close` closes the client only when this transport
    made it.
    """

    def __init__(
        self,
        client: httpx.Client | None = None,
        *,
        timeout: float | None = None,
        max_bytes: int | None = None,
    ) -> None:
        from pytest_osfoundry.client._bounded_http import (
            DEFAULT_DEADLINE,
            DEFAULT_MAX_BYTES,
            BoundedClient,
        )

        # Read by attribute, not by class: a second import of the client modules (pytest
        # in-process runs drop and re-import them) makes a BoundedClient of another class.
        if timeout is None:
            timeout = float(getattr(client, "deadline", None) or DEFAULT_DEADLINE)
        if max_bytes is None:
            max_bytes = int(getattr(client, "max_bytes", None) or DEFAULT_MAX_BYTES)
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes!r}")
        self._owned = client is None
        self.client = (
            client if client is not None else BoundedClient(deadline=timeout, max_bytes=max_bytes)
        )
        self.timeout = timeout
        self.max_bytes = max_bytes

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Send the request and read the reply, within the deadline and the size cap."""
        import httpx

        from pytest_osfoundry.client._bounded_http import exchange_deadline

        at = time.monotonic() + self.timeout
        reading = _Reading(self, method, url, headers, body)
        try:
            with exchange_deadline(at):
                sent = self.client.build_request(
                    method, url, headers=dict(headers), content=body, timeout=self.timeout
                )
                reply = self.client.send(sent, stream=True)
                try:
                    content = reading.body_of(reply, at)
                finally:
                    reply.close()
        except httpx.TransportError as exc:
            if isinstance(exc, httpx.TimeoutException) and time.monotonic() >= at - 0.05:
                raise reading.too_slow() from exc
            kind = "timed out" if isinstance(exc, httpx.TimeoutException) else "failed"
            lost = ConnectionLost if _before_any_answer(exc, reading) else ReplyLost
            raise lost(
                f"no reply from {method} {reading.where}: {type(exc).__name__} ({kind})",
                url=reading.where,
            ) from exc
        except httpx.TooManyRedirects as exc:
            raise ReplyLost(
                f"no reply from {method} {reading.where}: it redirected again and again ({exc})",
                url=reading.where,
            ) from exc
        except httpx.DecodingError as exc:
            raise ProtocolViolation(
                f"reply from {method} {reading.where} could not be decoded: {type(exc).__name__}"
            ) from exc
        return Response(reply.status_code, dict(reply.headers.items()), content)

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
        return f"HttpxTransport(timeout={self.timeout}, max_bytes={self.max_bytes})"


def _before_any_answer(exc: BaseException, reading: _Reading) -> bool:
    """Whether ``exc`` is a refused or reset connection before the reply's headers."""
    import httpx

    if isinstance(exc, httpx.ConnectError):
        return True
    connection_level = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
    return reading.phase == "headers" and isinstance(exc, connection_level)


class _Bounds(Protocol):
    """What :class:`_Reading` words its errors with: a transport's two bounds."""

    timeout: float
    max_bytes: int


class _Reading:
    """One exchange of a socket transport being read: what to say if it fails."""

    def __init__(
        self,
        transport: _Bounds,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes,
    ) -> None:
        self.transport = transport
        self.method = method
        self.body = body
        self._url = url
        self._headers = headers
        self.phase = "headers"  # then "body", or "stream" for an unanswered event stream

    @functools.cached_property
    def where(self) -> str:
        """The URL with token-like values masked: worked out only for an error."""
        return mask_url(self._url, secrets_in(self._url, self._headers))

    def _seconds(self) -> str:
        return f"{self.transport.timeout:g} s"

    def too_slow(self) -> DeadlineExceeded:
        """The error for a deadline that passed, worded by how far the reply had come."""
        what = {
            "headers": f"no answer within {self._seconds()}",
            "body": f"the response body did not arrive within {self._seconds()}",
            "stream": (f"the event stream stayed open without an answer for {self._seconds()}"),
        }[self.phase]
        return DeadlineExceeded(f"{what} ({self.method} {self.where})", url=self.where)

    def too_large(self) -> ResponseTooLarge:
        from pytest_osfoundry.client._bounded_http import format_size

        size = format_size(self.transport.max_bytes)
        return ResponseTooLarge(
            f"the response exceeded {size} ({self.method} {self.where})", url=self.where
        )

    def body_of(self, reply: httpx.Response, at: float) -> bytes:
        """The reply's body, read under the deadline and the size cap (SSE: to the answer)."""
        cap = self.transport.max_bytes
        declared = reply.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise self.too_large()
        watch = None
        if content_type(reply.headers) == "text/event-stream":
            rid = request_id_of(self.body)
            if rid is None:  # nothing of ours can come on it: its headers are the answer
                return b""
            watch = AnswerWatch(rid)
        self.phase = "stream" if watch is not None else "body"
        parts: list[bytes] = []
        size = 0
        for chunk in reply.iter_bytes():
            size += len(chunk)
            if size > cap:
                raise self.too_large()
            parts.append(chunk)
            if watch is not None and watch.feed(chunk):
                self.phase = "body"
                break
            if time.monotonic() >= at:
                raise self.too_slow()
        return b"".join(parts)


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

    def forget_last(self) -> None:
        """Drop the latest recorded exchange (one that proved nothing); none: no-op."""
        if self._log:
            self._log.pop()

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
