"""Transport faults, each one argument away: wrap a transport or a handler.

:class:`FaultyTransport` wraps any :class:`~pytest_osfoundry.client.Transport`
and applies its faults in order to every request:

* :class:`DropReplies` — the request reaches the server, a seeded fraction of the
  replies never come back (the caller gets ``ReplyLost``): what makes an agent retry.
* :class:`LoseRequests` — the next ``count`` matching requests never reach the
  server (``ReplyLost``): a lost completion POST is ``LoseRequests(1, "/complete")``.
* :class:`ServerErrors` — matching requests are answered with an error status
  (503 by default) without reaching the server, ``count`` times or always.
* :class:`Latency` — matching requests wait ``seconds`` on the clock first.

:class:`FaultyHandler` applies the same faults on the server side of any door (the
respx door, the loopback server): what your own HTTP client sends goes through them
too, and a lost reply reaches it as a transport error.

``match`` is a substring of the URL path (``"/complete"``, ``"/mcp"``), or ``None``
for every request; ``method`` narrows it further.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from pytest_osfoundry._checks import (
    check_count,
    check_fraction,
    check_http_error,
    check_seconds,
)
from pytest_osfoundry.client import ReplyLost, Transport
from pytest_osfoundry.clock import Clock
from pytest_osfoundry.http import (
    DropConnection,
    Handler,
    HandlerWrapper,
    Request,
    Response,
    json_response,
)

__all__ = [
    "DropReplies",
    "Fault",
    "FaultyHandler",
    "FaultyTransport",
    "Latency",
    "LoseRequests",
    "ServerErrors",
]


def _path_of(url: str) -> str:
    rest = url.split("://", 1)[-1]
    slash = rest.find("/")
    return "/" if slash < 0 else rest[slash:].split("?", 1)[0]


@dataclass
class _Match:
    match: str | None = None
    method: str | None = None

    def _check_match(self) -> None:
        name = type(self).__name__
        if self.match is not None and not isinstance(self.match, str):
            raise TypeError(
                f"{name}.match must be a URL path substring or None, got {self.match!r}"
            )
        if self.method is not None and not isinstance(self.method, str):
            raise TypeError(f"{name}.method must be an HTTP method or None, got {self.method!r}")

    def applies(self, method: str, url: str) -> bool:
        if self.method is not None and method.upper() != self.method.upper():
            return False
        return self.match is None or self.match in _path_of(url)


class Fault(Protocol):
    """A fault: may answer or refuse before the request, or lose the reply after it."""

    def before(self, method: str, url: str) -> Response | None:
        """Return a response to answer without reaching the server, or raise ReplyLost."""
        ...

    def after(self, method: str, url: str, response: Response) -> None:
        """Raise ReplyLost to lose ``response`` after the server handled the request."""
        ...


@dataclass
class DropReplies(_Match):
    """Lose a seeded ``fraction`` of replies after the server handled the request."""

    fraction: float = 0.0
    seed: int | None = 0
    dropped: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._check_match()
        self.fraction = check_fraction(self.fraction, "DropReplies.fraction")
        self._rng = random.Random(self.seed)

    def before(self, method: str, url: str) -> Response | None:
        return None

    def after(self, method: str, url: str, response: Response) -> None:
        if self.applies(method, url) and self._rng.random() < self.fraction:
            self.dropped += 1
            raise ReplyLost(f"reply dropped (fault injected) for {method} {_path_of(url)}")


@dataclass
class LoseRequests(_Match):
    """The next ``count`` matching requests never reach the server."""

    count: int = 1
    lost: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._check_match()
        check_count(self.count, "LoseRequests.count")

    def before(self, method: str, url: str) -> Response | None:
        if self.lost < self.count and self.applies(method, url):
            self.lost += 1
            raise ReplyLost(f"request lost (fault injected): {method} {_path_of(url)}")
        return None

    def after(self, method: str, url: str, response: Response) -> None:
        return None


@dataclass
class ServerErrors(_Match):
    """Answer matching requests with ``status`` (``count`` times; ``None``: always)."""

    status: int = 503
    count: int | None = None
    served: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._check_match()
        check_http_error(self.status, "ServerErrors.status")
        if self.count is not None:
            check_count(self.count, "ServerErrors.count")

    def before(self, method: str, url: str) -> Response | None:
        if not self.applies(method, url) or (self.count is not None and self.served >= self.count):
            return None
        self.served += 1
        return json_response(self.status, {"error": f"injected HTTP {self.status}"})

    def after(self, method: str, url: str, response: Response) -> None:
        return None


@dataclass
class Latency(_Match):
    """Matching requests wait ``seconds`` on ``clock`` before they are sent."""

    seconds: float = 0.0
    clock: Clock | None = None

    def __post_init__(self) -> None:
        self._check_match()
        self.seconds = check_seconds(self.seconds, "Latency.seconds")
        if self.clock is None:
            raise ValueError("Latency needs the clock to wait on (clock=...)")
        if not callable(getattr(self.clock, "sleep", None)):
            raise TypeError(
                f"Latency.clock must be a VirtualClock or RealClock, got {self.clock!r}"
            )

    def before(self, method: str, url: str) -> Response | None:
        if self.applies(method, url) and self.seconds and self.clock is not None:
            self.clock.sleep(self.seconds)
        return None

    def after(self, method: str, url: str, response: Response) -> None:
        return None


class FaultyTransport:
    """A transport that applies ``faults`` (in order) around an inner transport."""

    def __init__(self, inner: Transport, *faults: Fault) -> None:
        if not callable(getattr(inner, "request", None)):
            raise TypeError(f"inner must be a Transport, got {inner!r}")
        for fault in faults:
            if isinstance(fault, type) or not (
                callable(getattr(fault, "before", None)) and callable(getattr(fault, "after", None))
            ):
                raise TypeError(f"not a fault: {fault!r}")
        self.inner = inner
        self.faults = list(faults)

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Send through the faults and the inner transport."""
        for fault in self.faults:
            early = fault.before(method, url)
            if early is not None:
                return early
        response = self.inner.request(method, url, headers, body)
        for fault in self.faults:
            fault.after(method, url, response)
        return response


class FaultyHandler(HandlerWrapper[Handler]):
    """An HTTP handler that applies ``faults`` (in order) around an inner handler.

    Where :class:`FaultyTransport` sits in a client, this sits in front of a server,
    so faults reach any client: a fault's ``ReplyLost`` becomes
    :class:`~pytest_osfoundry.http.DropConnection` (the request did reach the inner
    handler when the reply is dropped after it), which the loopback server and the
    respx mount turn into a connection closed without a reply.
    """

    def __init__(self, inner: Handler, *faults: Fault) -> None:
        if not callable(inner):
            raise TypeError(f"inner must be a handler (Request -> Response), got {inner!r}")
        super().__init__(inner)
        self._transport = FaultyTransport(_HandlerTransport(inner), *faults)
        self.faults = self._transport.faults

    def __getattr__(self, name: str) -> object:
        """Everything else (``provision``, ``mcp_path``, ``state``) is the inner handler's."""
        if name.startswith("__") or name in ("inner", "_transport", "faults"):
            raise AttributeError(name)  # not set yet (a copy being made): no recursion
        return getattr(self.inner, name)

    def __call__(self, request: Request, /) -> Response:
        url = request.path + (f"?{request.query}" if request.query else "")
        try:
            return self._transport.request(request.method, url, request.headers, request.body)
        except ReplyLost as err:
            raise DropConnection(str(err)) from None


class _HandlerTransport:
    """A transport over a handler that keeps the original request (for FaultyHandler)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        path, _, query = url.partition("?")
        return self.handler(Request(method, path, headers, body, query))
