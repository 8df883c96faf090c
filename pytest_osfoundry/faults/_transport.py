"""Faults, each one argument away: wrap a transport, or schedule a desktop outage.

:class:`FaultyTransport` wraps any :class:`~pytest_osfoundry.client._transport.Transport`
and applies its faults in order to every request:

* :class:`DropReplies` — the request reaches the server, a seeded fraction of the
  replies never come back (the caller gets ``ReplyLost``): what makes an agent retry.
* :class:`LoseRequests` — the next ``count`` matching requests never reach the
  server (``ReplyLost``): a lost completion POST is ``LoseRequests(1, "/complete")``.
* :class:`ServerErrors` — matching requests are answered with an error status
  (503 by default) without reaching the server, ``count`` times or always.
* :class:`Latency` — matching requests wait ``seconds`` on the clock first.

:func:`schedule_offline` takes a relay offline for a window of (virtual) time (asleep,
or its network gone);
:func:`schedule_death` kills its process at a chosen time, with whatever it holds.

:class:`FaultyHandler` applies the same faults on the server side of any door (the
respx mount, the loopback server): what your own HTTP client sends goes through them
too, and a lost reply reaches it as a transport error.

``match`` is a substring of the URL path (``"/complete"``, ``"/mcp"``), or ``None``
for every request; ``method`` narrows it further.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pytest_osfoundry._checks import (
    check_count,
    check_flag,
    check_fraction,
    check_http_error,
    check_number,
    check_seconds,
)
from pytest_osfoundry.client._errors import ReplyLost
from pytest_osfoundry.client._transport import Transport
from pytest_osfoundry.clock import Clock, ProcessGen
from pytest_osfoundry.http import (
    DropConnection,
    Handler,
    HandlerWrapper,
    Request,
    Response,
    json_response,
)

if TYPE_CHECKING:
    from pytest_osfoundry.relay._desktop import FakeRelay, OfflineMode

__all__ = [
    "Death",
    "DropReplies",
    "Fault",
    "FaultyHandler",
    "FaultyTransport",
    "Latency",
    "LoseRequests",
    "ServerErrors",
    "schedule_death",
    "schedule_offline",
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


def schedule_offline(
    clock: Clock,
    relay: FakeRelay,
    at: float,
    duration: float,
    *,
    mode: OfflineMode = "asleep",
    keep_phase: bool = False,
) -> None:
    """Take ``relay`` offline at absolute time ``at`` for ``duration`` seconds.

    Meanwhile it reaches the server for nothing (no sync, start, control poll or
    completion). ``mode="asleep"`` (the default): the machine sleeps, and a Graph it is
    running stands still until it wakes; ``mode="network"``: awake with its network
    gone, the Graph runs on and its completion waits in the outbox
    (:meth:`~pytest_osfoundry.relay.FakeRelay.go_offline`). It passes the moment it is
    back, unless ``keep_phase``: then its timer keeps its phase through the outage and
    the first pass is its next tick.
    """
    from pytest_osfoundry.relay._desktop import check_offline_mode

    start = check_number(at, "at")
    length = check_seconds(duration, "duration")
    how = check_offline_mode(mode)
    check_flag(keep_phase, "keep_phase")
    clock.call_at(start, lambda: relay.go_offline(mode=how, keep_phase=keep_phase))
    clock.call_at(start + length, relay.go_online)


# ---------------------------------------------------------------------- the desktop dies
@dataclass(frozen=True)
class Death:
    """What a relay held when it died (see :func:`schedule_death`).

    ``running``: the command it was running (left ``running`` on the server for
    good); ``outbox_kept``: completions not yet delivered that survive in its file
    outbox (a relay started later on the same file re-sends them);
    ``outbox_lost``: those that died with an in-memory outbox.
    """

    at: float
    running: str | None
    outbox_kept: tuple[str, ...]
    outbox_lost: tuple[str, ...]


class _MortalClock:
    """The relay's view of the clock: its processes end silently once it is dead."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.dead = False

    def start(self, gen: ProcessGen, name: str = "") -> Any:
        return self._clock.start(self._mortal(gen), name)

    def spawn(self, gen: ProcessGen, name: str = "", delay: float = 0.0) -> Any:
        return self._clock.spawn(self._mortal(gen), name, delay)

    def _mortal(self, gen: ProcessGen) -> ProcessGen:
        """``gen``, closed (its ``finally`` blocks run, nothing else) when it would resume
        after the death."""
        sent: Any = None
        while True:
            try:
                item = gen.send(sent)
            except StopIteration as stop:
                return stop.value
            sent = yield item
            if self.dead:
                gen.close()
                return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._clock, name)


def schedule_death(clock: Clock, relay: FakeRelay, at: float) -> list[Death]:
    """Kill ``relay``'s process at absolute time ``at``, with whatever it holds.

    From then on it makes no request at all: no pass, no control poll, no
    completion, no outbox re-send. The command it was running stays ``running`` on
    the server for good (the documented relay has no lease; SPEC D11), and the
    Graph it ran stops with it. Completions still in its outbox survive only if the
    outbox is a :class:`~pytest_osfoundry.relay._outbox.FileOutbox` (a relay started
    later on the same file delivers them); an in-memory outbox is emptied.

    Call it before the passes it should end begin (the world does so when built).
    Returns a list that holds the :class:`Death` record once it happened.
    """
    when = check_number(at, "at")
    from pytest_osfoundry.relay._desktop import RelayEvent
    from pytest_osfoundry.relay._outbox import FileOutbox

    mortal = _MortalClock(relay.clock)
    relay.clock = mortal
    record: list[Death] = []

    def die() -> None:
        mortal.dead = True
        running, handle = relay.current, relay.current_run
        relay.stop()
        relay.online = False
        if handle is not None:
            handle.cancel()  # the Graph dies with the desktop process
        pending = tuple(command_id for command_id, _ in (relay.outbox or _NoOutbox()).items())
        kept = pending if isinstance(relay.outbox, FileOutbox) else ()
        if relay.outbox is not None and not kept:
            for command_id in pending:
                relay.outbox.remove(command_id)
        death = Death(clock.now(), running, kept, () if kept else pending)
        record.append(death)
        relay.events.append(
            RelayEvent(clock.now(), "died", running, f"{len(pending)} completion(s) pending")
        )

    clock.call_at(when, die)
    return record


class _NoOutbox:
    def items(self) -> list[tuple[str, Any]]:
        return []
