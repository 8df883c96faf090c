"""Bounded HTTP over httpx: a deadline for a whole exchange.

A hostile or merely lazy server can drip a byte every few seconds, send headers
forever, or leave an event stream open after it answered. Per-read time-outs bound
none of these. Here:

* :class:`BoundedClient` is an :class:`httpx.Client` whose every request is bounded
  by one deadline (``deadline`` seconds for connect, headers and body together):
  its network streams clip each socket operation to the time left, so even a server
  dripping its headers one byte at a time is cut off on time. It also carries the
  response size cap (``max_bytes``) that :class:`~pytest_osfoundry.client.HttpxTransport`
  applies.
* :func:`exchange_deadline` sets a deadline for the calling thread (an exchange made
  of several requests, such as redirects, shares one); the tighter deadline wins.

Where an event stream's answer ends is :class:`~pytest_osfoundry.client._jsonrpc.AnswerWatch`'s
business (the one reply reader); the transports stop reading there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MAX_BYTES",
    "BoundedClient",
    "exchange_deadline",
    "format_size",
    "time_left",
]

DEFAULT_DEADLINE = 10.0
"""Seconds a whole exchange may take unless told otherwise."""

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Largest response body read unless told otherwise (16 MiB)."""

_local = threading.local()


def time_left() -> float | None:
    """Seconds left before the calling thread's deadline (``None``: no deadline set)."""
    at: float | None = getattr(_local, "deadline", None)
    return None if at is None else at - time.monotonic()


@contextmanager
def exchange_deadline(at: float) -> Iterator[None]:
    """Bound every socket operation of this thread by ``at`` (``time.monotonic()``).

    Nested deadlines keep the tighter one; the previous deadline is restored on exit.
    """
    previous: float | None = getattr(_local, "deadline", None)
    _local.deadline = at if previous is None else min(previous, at)
    try:
        yield
    finally:
        _local.deadline = previous


def _clip(timeout: float | None) -> float | None:
    """``timeout`` shortened to the time left; raises ``ReadTimeout`` once it has run out."""
    left = time_left()
    if left is None:
        return timeout
    if left <= 0:
        raise httpcore.ReadTimeout("the exchange's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation ends by the thread's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clip(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clip(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, _clip(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's socket backend with :class:`_DeadlineStream` streams."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, _clip(timeout), local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(path, _clip(timeout), socket_options)
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineBody(httpx.SyncByteStream):
    """A response body read under the deadline of the request that fetched it."""

    def __init__(self, inner: httpx.SyncByteStream, at: float) -> None:
        self._inner = inner
        self._at = at

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self._inner)
        while True:
            with exchange_deadline(self._at):
                chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _DeadlineTransport(httpx.HTTPTransport):
    """httpx's socket transport, each request bounded by ``deadline`` seconds in all."""

    def __init__(self, deadline: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.deadline = deadline
        # httpx builds its pool without a backend parameter; httpcore reads this
        # attribute for every new connection. tests/hostile/test_hostile_client.py fails
        # (a drip of headers hangs) if a later httpx stops honouring it.
        pool = self._pool
        if isinstance(pool, httpcore.ConnectionPool):
            pool._network_backend = _DeadlineBackend()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        at = time.monotonic() + self.deadline
        with exchange_deadline(at):
            response = super().handle_request(request)
        assert isinstance(response.stream, httpx.SyncByteStream)
        response.stream = _DeadlineBody(response.stream, at)
        return response


class _OnFirstUse(httpx.BaseTransport):
    """A transport made when the first request needs it, not before.

    httpx's socket transport loads the system's certificates when it is made: a
    client that ends up sending nothing, such as the conformance suite's
    fallback for an ``http://`` target (``SocketTransport`` sends those), should not
    pay for it. Thread-safe: one transport is made, whichever thread asks first.
    """

    def __init__(self, make: Callable[[], httpx.BaseTransport]) -> None:
        self._make = make
        self._made: httpx.BaseTransport | None = None
        self._lock = threading.Lock()

    @property
    def inner(self) -> httpx.BaseTransport:
        """The transport, made now if it was not yet."""
        with self._lock:
            if self._made is None:
                self._made = self._make()
            return self._made

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(request)

    def close(self) -> None:
        with self._lock:
            made, self._made = self._made, None
        if made is not None:
            made.close()


_HTTPX_DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)
"""What :class:`httpx.Client` uses when given no ``limits`` (and no transport)."""


class BoundedClient(httpx.Client):
    """An :class:`httpx.Client` bounded in time (``deadline``) and read size (``max_bytes``).

    Every request, through this client directly or through an
    :class:`~pytest_osfoundry.client.HttpxTransport`, ends within ``deadline``
    seconds: connect, headers and body together (a read then raises
    :class:`httpx.ReadTimeout`). ``max_bytes`` is the response size an
    ``HttpxTransport`` over this client accepts. Redirects are not followed unless
    asked. ``limits`` (:class:`httpx.Limits`, httpx's default when not given) bounds its
    connection pool. Other keyword arguments go to :class:`httpx.Client`.
    """

    def __init__(
        self,
        *,
        deadline: float = DEFAULT_DEADLINE,
        max_bytes: int = DEFAULT_MAX_BYTES,
        **kwargs: Any,
    ) -> None:
        if not deadline > 0:
            raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes!r}")
        kwargs.setdefault("timeout", deadline)
        kwargs.setdefault("follow_redirects", False)
        limits = kwargs.pop("limits", None) or _HTTPX_DEFAULT_LIMITS
        transport = _OnFirstUse(lambda: _DeadlineTransport(deadline, limits=limits))
        super().__init__(transport=transport, **kwargs)
        self.deadline = deadline
        self.max_bytes = max_bytes


def format_size(size: int) -> str:
    """``16 MiB``, ``512 KiB`` or ``100 bytes``: a size as a person reads it."""
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} byte{'' if size == 1 else 's'}"
