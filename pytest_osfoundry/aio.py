"""An asyncio event loop whose time is the kit's virtual clock.

:class:`VirtualEventLoop` is an ordinary selector event loop with two changes:

* ``loop.time()`` is the kit's clock, counted from the moment the loop was made
  (``clock.now() - loop.origin``: small numbers, so asyncio's nanosecond resolution
  still tells instants apart, which it cannot at epoch magnitudes): every timer of
  the loop (``asyncio.sleep``, ``anyio.sleep``, ``anyio.fail_after``,
  ``loop.call_later``) is set on the kit's clock.
* When every task waits (no callback is ready and no socket or pipe has anything to
  read), the loop does not sleep: it jumps to whichever comes first, the loop's next
  timer or the clock's next event (a relay pass, a Graph's completion, a control
  poll), and runs it; clock events due at the same instant as a loop timer run first.
  This is what :meth:`~pytest_osfoundry.clock.VirtualClock.advance` does for
  synchronous code, so a synchronous and an asynchronous agent on the same seed see
  the same times.

Real I/O still works (a socket or a pipe that has bytes is served before any jump),
and while a job of the loop's executor runs (``run_in_executor``,
``asyncio.to_thread``) time holds still: the loop waits for it in real time, as
virtual time would otherwise run past it.

**In-process servers hold time too.** A server running in this process on its own
threads (the kit's :class:`~pytest_osfoundry.server.LoopbackServer`, the
``osf_loopback`` fixture; anything that registers with :func:`serve_in_process`) can
say whether it holds a request (``idle()``). Before every jump the loop waits in real
time, up to ``stall_timeout``, until every registered server is idle and no byte one of
the loop's own sockets wrote is still on its way (:func:`in_flight`), then reads what
arrived meanwhile. So a request any async client on the loop sent to such a server
(aiohttp, httpx's or httpx2's async client, the MCP SDK over real sockets) is
answered, and its answer read, before virtual time moves on: a read timeout never
fires because a worker thread was slow, and a synchronous and an asynchronous agent
on the same seed end at the same virtual time. The loop cannot see a server in
another process (``osfoundry-fake serve``): time jumps past a request in flight there,
so drive such a server's clock over its admin door instead. A server that holds a
request for longer than ``stall_timeout`` fails the loop (:class:`VirtualLoopStalled`).

A **stall** is a loop whose tasks wait on nothing that anything due can complete:
every task waits, the loop's own next timer (if any) is further off than
``stall_after`` virtual seconds (one virtual day by default), and nothing the clock
runs meanwhile (relay passes, Graph completions, control polls: they keep coming for
ever) wakes a task. The loop then raises :class:`VirtualLoopStalled`, naming what each
task awaits and the two options, instead of jumping the clock for ever. It happens
within ``stall_after`` virtual seconds of the moment the loop ran out of work of its
own, and within ``stall_timeout`` seconds of wall time (10 by default) of the moment
it found nothing of its own within that limit: the loop gives real I/O from another
thread or process that long to arrive, and stops jumping through the clock's events
once that much wall time is spent. A timer of the loop's own within ``stall_after``
(an agent's poll, a read timeout, a test sleeping three virtual hours) is no stall:
time jumps to it, however many clock events run on the way. A wait meant to be
longer than a day needs a larger ``stall_after``
(``@pytest.mark.osf(virtual_loop=True, stall_after=...)``, ``run(..., stall_after=...)``,
``loop_factory(clock, stall_after=...)``).

Use it with :func:`run` (``run(agent(), clock)``), through the ``osf`` marker
(``@pytest.mark.osf(virtual_loop=True)`` on an ``async def`` test), or as anyio's
loop (``anyio_backend = ("asyncio", {"loop_factory": loop_factory(clock)})``).
"""

from __future__ import annotations

import asyncio
import math
import os
import selectors
import socket
import struct
import sys
import weakref
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from types import CodeType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pytest_osfoundry._checks import check_seconds
from pytest_osfoundry._process_time import real_monotonic
from pytest_osfoundry.clock import VirtualClock

__all__ = [
    "InProcessServer",
    "LoopFactory",
    "VirtualEventLoop",
    "VirtualLoopStalled",
    "in_flight",
    "loop_factory",
    "run",
    "serve_in_process",
    "stop_serving_in_process",
]

T = TypeVar("T")


if TYPE_CHECKING:  # annotations only: Python 3.10's typing has no TypeVarTuple
    from typing_extensions import TypeVarTuple, Unpack

    Ts = TypeVarTuple("Ts")

#: Wall-clock seconds a stalled virtual loop waits (for real I/O) before it fails.
DEFAULT_STALL_TIMEOUT = 10.0

#: Virtual seconds a virtual loop may move with nothing of its own coming due: one day.
DEFAULT_STALL_AFTER = 86_400.0

#: The options a stall message names, and where they are given.
_FIX = (
    "If the wait is meant, raise the limit: stall_after (virtual seconds) or stall_timeout "
    "(wall seconds), in @pytest.mark.osf(virtual_loop=True, stall_after=...), "
    "pytest_osfoundry.aio.run(..., stall_after=...) or loop_factory(clock, stall_after=...)"
)

#: How many tasks a stall message describes.
_TASKS_SHOWN = 5


class VirtualLoopStalled(RuntimeError):
    """The loop's tasks wait on nothing that anything due can complete (see the module)."""


class InProcessServer(Protocol):
    """A server on threads of this process that can say whether it holds a request."""

    def idle(self) -> bool:
        """True when no request is arriving, being answered or answered and not yet in
        the client's socket."""
        ...


_SERVERS: weakref.WeakSet[InProcessServer] = weakref.WeakSet()
"""The in-process servers every virtual loop waits for before it moves time."""


def serve_in_process(server: InProcessServer) -> None:
    """Register ``server``: until :func:`stop_serving_in_process` (or until it is
    collected), every virtual loop waits for it to be idle before moving time."""
    if not callable(getattr(server, "idle", None)):
        raise TypeError(f"an in-process server needs an idle() method, got {server!r}")
    _SERVERS.add(server)


def stop_serving_in_process(server: InProcessServer) -> None:
    """Forget ``server`` (what its ``close()`` calls); a server not registered is ignored."""
    _SERVERS.discard(server)


#: Linux's SIOCOUTQNSD: the bytes a socket was given and has not yet sent (over loopback a
#: byte sent is in the peer's socket when the call returns). TIOCOUTQ would count the
#: bytes sent and not yet acknowledged, which a delayed ACK keeps up for 40 ms.
_SIOCOUTQNSD = 0x894B


def in_flight(sock: socket.socket | int) -> bool:
    """Whether ``sock`` (a socket or its descriptor) holds written bytes the kernel has
    not yet sent (Linux; False elsewhere, and for anything but a socket)."""
    if not sys.platform.startswith("linux"):  # pragma: no cover - other kernels
        return False
    import fcntl

    try:
        unsent = fcntl.ioctl(sock, _SIOCOUTQNSD, b"\0\0\0\0")
    except (OSError, ValueError, TypeError):
        return False
    return bool(struct.unpack("i", unsent)[0])


#: Wall seconds between two looks at the in-process servers while one is busy.
_SERVER_POLL = 0.0005


def _where(code: CodeType, line: int | None) -> str:
    name = getattr(code, "co_qualname", code.co_name)  # co_qualname: Python 3.11+
    return f"{name} ({os.path.basename(code.co_filename)}:{line})"


def _awaits(task: asyncio.Task[Any]) -> str:
    """What ``task`` waits on: its chain of coroutines, outermost first, then the awaitable."""
    steps: list[str] = []
    awaitable: object = task.get_coro()
    while awaitable is not None and len(steps) < 12:
        frame = getattr(awaitable, "cr_frame", None) or getattr(awaitable, "gi_frame", None)
        code = getattr(awaitable, "cr_code", None) or getattr(awaitable, "gi_code", None)
        if code is None:  # a future (or another awaitable object): what the task waits on
            waiter = getattr(task, "_fut_waiter", None)  # the future, not its iterator
            text = repr(waiter if waiter is not None else awaitable)
            steps.append(text if len(text) <= 80 else text[:77] + "...")
            break
        steps.append(_where(code, frame.f_lineno if frame is not None else None))
        awaitable = getattr(awaitable, "cr_await", None) or getattr(awaitable, "gi_yieldfrom", None)
    return f"  {task.get_name()}: " + " > ".join(steps)


def _describe_waits(loop: asyncio.AbstractEventLoop) -> str:
    """One indented line per pending task of ``loop`` (at most five): what it awaits."""
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    lines = [_awaits(task) for task in pending[:_TASKS_SHOWN]]
    if len(pending) > _TASKS_SHOWN:
        lines.append(f"  ... and {len(pending) - _TASKS_SHOWN} more task(s)")
    return "\n".join(lines) if lines else "  no task is pending"


class _JumpingSelector(selectors.DefaultSelector):
    """The platform's selector, except that an idle wait jumps virtual time instead.

    It also keeps the stall's two bounds: where the loop's idle stretch began, in
    virtual and in wall time (``None`` while the loop has work of its own).
    """

    def __init__(self, clock: VirtualClock, stall_timeout: float, stall_after: float) -> None:
        super().__init__()
        self._clock = clock
        self._stall = stall_timeout
        self._after = stall_after
        self.threads_busy = 0
        """Executor jobs (``run_in_executor``, ``asyncio.to_thread``) not yet done."""
        self.held = False
        """Set once the main coroutine is done: clean-up waits in real time, never jumps."""
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop this selector serves (its tasks are what a stall message names)."""
        self._idle_virtual: float | None = None
        self._idle_wall: float | None = None

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """Ready I/O at once if any; otherwise move virtual time to the next due event."""
        ready: list[tuple[selectors.SelectorKey, int]] = super().select(0)
        if ready or (timeout is not None and timeout <= 0):
            self._idle_virtual = None  # the loop has work of its own
            return ready
        if _SERVERS and not self.held:
            ready = self._settle()
            if ready:
                self._idle_virtual = None
                return ready
        if self.threads_busy or self.held:
            # A thread is working for a task (its answer is the next thing to happen),
            # or the run is over: wait in real time, never let virtual time run on.
            ready = super().select(self._stall)
            if ready:
                self._idle_virtual = None
                return ready
            raise VirtualLoopStalled(
                "virtual event loop: " + ("an executor job ran over" if self.threads_busy
                else "time is held (the main coroutine is done) and nothing arrived in")
                + f" {self._stall:g} s of wall time"
            )
        clock = self._clock
        now = clock.now()
        idle_since = self._idle_virtual
        if idle_since is None:
            idle_since = self._idle_virtual = now
            self._idle_wall = None
        deadline = idle_since + self._after
        # The loop's next timer, on the clock's scale (its timeout counts from now).
        loop_due = math.inf if timeout is None else now + timeout
        clock_due = clock.next_due()
        if clock_due is not None and clock_due <= loop_due and clock_due <= deadline:
            # A clock event first (first on a tie, too). With no timer of the loop's own
            # within the limit it may be a stall: then wall time bounds the jumping.
            if loop_due > deadline and self._wall_spent() > self._stall:
                raise self._stalled(now, loop_due, "wall")
            clock.advance(max(0.0, clock_due - now))
            return []
        if loop_due <= deadline:
            # At least one step of the clock's float: a timeout smaller than that
            # would leave the clock where it is and the timer never due.
            clock.advance(max(timeout or 0.0, math.ulp(now)))
            self._idle_virtual = None  # the loop's own timer is due: its work
            return []
        # Nothing of the loop's comes due within the limit: only real I/O from another
        # thread or process can still wake it, for what is left of the wall budget.
        ready = super().select(max(0.0, self._stall - self._wall_spent()))
        if ready:
            self._idle_virtual = None
            return ready
        raise self._stalled(now, loop_due, "virtual" if clock_due is not None else "nothing")

    def _settle(self) -> list[tuple[selectors.SelectorKey, int]]:
        """Wait in real time until every in-process server is idle and none of the loop's
        sockets has bytes on their way, then return what is ready (see the module).

        Raises :class:`VirtualLoopStalled` when that takes more than ``stall_timeout``.
        """
        started: float | None = None
        while True:
            busy = [server for server in list(_SERVERS) if not server.idle()]
            if not busy and not self._sending():
                return super().select(0)  # an answer that arrived while we looked
            if started is None:
                started = real_monotonic()
            elif real_monotonic() - started > self._stall:
                raise VirtualLoopStalled(
                    f"virtual event loop: an in-process server ({busy[0]!r}) held a request "
                    f"for {self._stall:g} s of wall time (stall_timeout), so time could not "
                    "move on"
                    if busy
                    else "virtual event loop: a socket of the loop could not send what it "
                    f"wrote in {self._stall:g} s of wall time (stall_timeout)"
                )
            ready = super().select(_SERVER_POLL)
            if ready:
                return ready

    def _sending(self) -> bool:
        """Whether a socket of the loop is still sending: a connection being made or a
        write buffered (a writer registered), or bytes the kernel has not delivered."""
        for key in list(self.get_map().values()):
            if key.events & selectors.EVENT_WRITE or in_flight(key.fd):
                return True
        return False

    def _wall_spent(self) -> float:
        """Wall seconds since the idle stretch first had nothing of the loop's own in reach
        (read only then: a loop that keeps finding its own timers never reads wall time)."""
        if self._idle_wall is None:
            self._idle_wall = real_monotonic()
            return 0.0
        return real_monotonic() - self._idle_wall

    def _stalled(self, now: float, loop_due: float, bound: str) -> VirtualLoopStalled:
        """The error for a stall found at ``now``: which bound, what the tasks await, the fix."""
        assert self._idle_virtual is not None
        moved = now - self._idle_virtual
        if bound == "nothing":
            head = (
                "every task is waiting and nothing is scheduled on the loop or on the "
                f"virtual clock, and no I/O arrived in {self._stall:g} s of wall time "
                "(a deadlock: an event or future nobody will set?)"
            )
        elif bound == "wall":
            head = (
                f"the tasks waited {self._stall:g} s of wall time (stall_timeout) while the "
                f"clock's own events moved it {moved:g} virtual seconds, and none of them "
                "woke a task"
            )
        else:
            head = (
                f"the tasks waited {self._after:g} virtual seconds (stall_after) while the "
                "clock's own events ran (relay passes, Graph completions, ...), none of "
                "them woke a task, and no I/O arrived"
            )
        timer = (
            "the loop has no timer"
            if math.isinf(loop_due)
            else f"the loop's next timer is due in {loop_due - now:g} virtual seconds"
        )
        waits = _describe_waits(self.loop) if self.loop is not None else "unknown"
        return VirtualLoopStalled(
            f"virtual event loop stalled: {head}; {timer}. The tasks await:\n{waits}\n{_FIX}"
        )


class VirtualEventLoop(asyncio.SelectorEventLoop):
    """A selector event loop that runs on ``clock`` (see the module's docstring).

    ``stall_after`` (virtual seconds) and ``stall_timeout`` (wall seconds) bound a
    stall; see the module's docstring.
    """

    def __new__(
        cls,
        clock: VirtualClock,
        *,
        stall_timeout: float = DEFAULT_STALL_TIMEOUT,
        stall_after: float = DEFAULT_STALL_AFTER,
    ) -> VirtualEventLoop:
        # Checked here, not in __init__: a loop half made would complain as it is collected.
        if not isinstance(clock, VirtualClock):
            raise TypeError(f"VirtualEventLoop needs a VirtualClock, got {clock!r}")
        _check_bounds(stall_timeout, stall_after)
        return super().__new__(cls)

    def __init__(
        self,
        clock: VirtualClock,
        *,
        stall_timeout: float = DEFAULT_STALL_TIMEOUT,
        stall_after: float = DEFAULT_STALL_AFTER,
    ) -> None:
        self.clock = clock
        self.origin = clock.now()
        """The clock's time when the loop was made: ``loop.time()`` counts from it."""
        self._jumping = _JumpingSelector(clock, *_check_bounds(stall_timeout, stall_after))
        super().__init__(self._jumping)
        self._jumping.loop = self

    def run_in_executor(
        self, executor: Executor | None, func: Callable[[Unpack[Ts]], T], *args: Unpack[Ts]
    ) -> asyncio.Future[T]:
        """As asyncio's, and time holds still until the job is done (see the module)."""
        future = super().run_in_executor(executor, func, *args)
        self._jumping.threads_busy += 1
        future.add_done_callback(self._job_done)
        return future

    def _job_done(self, _: asyncio.Future[Any]) -> None:
        self._jumping.threads_busy -= 1

    def hold_time(self) -> None:
        """From now on never move the clock (what :func:`run` does once its coroutine is
        done, so shutting the executor down does not run the world on)."""
        self._jumping.held = True

    def time(self) -> float:
        """The loop's time: virtual seconds since :attr:`origin` (only ever moves forward)."""
        return self.clock.now() - self.origin


def _check_bounds(stall_timeout: object, stall_after: object) -> tuple[float, float]:
    """The stall's bounds, checked: wall seconds (0 or more), virtual seconds (more than 0)."""
    return (
        check_seconds(stall_timeout, "stall_timeout"),
        check_seconds(stall_after, "stall_after", positive=True),
    )


class LoopFactory:
    """What :func:`loop_factory` returns: each call makes a new :class:`VirtualEventLoop` on
    :attr:`clock`, with :attr:`stall_timeout` and :attr:`stall_after` (read them to tell
    which clock a factory serves)."""

    def __init__(self, clock: VirtualClock, stall_timeout: float, stall_after: float) -> None:
        if not isinstance(clock, VirtualClock):
            raise TypeError(f"loop_factory needs a VirtualClock, got {clock!r}")
        self.clock = clock
        self.stall_timeout, self.stall_after = _check_bounds(stall_timeout, stall_after)

    def __call__(self) -> VirtualEventLoop:
        return VirtualEventLoop(
            self.clock, stall_timeout=self.stall_timeout, stall_after=self.stall_after
        )

    def __repr__(self) -> str:
        return f"loop_factory(<VirtualClock at {self.clock.now():.3f}>)"


def loop_factory(
    clock: VirtualClock,
    *,
    stall_timeout: float = DEFAULT_STALL_TIMEOUT,
    stall_after: float = DEFAULT_STALL_AFTER,
) -> LoopFactory:
    """A callable making virtual loops on ``clock``: for ``asyncio.Runner(loop_factory=...)``
    and anyio's ``("asyncio", {"loop_factory": ...})`` backend option."""
    return LoopFactory(clock, stall_timeout, stall_after)


def run(
    main: Coroutine[Any, Any, T],
    clock: VirtualClock,
    *,
    stall_timeout: float = DEFAULT_STALL_TIMEOUT,
    stall_after: float = DEFAULT_STALL_AFTER,
) -> T:
    """Run ``main`` to completion on a new :class:`VirtualEventLoop` on ``clock``.

    Like :func:`asyncio.run`: tasks left over are cancelled and the loop is closed
    afterwards. Refuses (``RuntimeError``) to run inside a running event loop.
    ``stall_after``/``stall_timeout`` bound a stall (see the module's docstring).
    """
    if not asyncio.iscoroutine(main):
        raise TypeError(f"run needs a coroutine (call the async function), got {main!r}")
    try:
        factory = loop_factory(clock, stall_timeout=stall_timeout, stall_after=stall_after)
        _refuse_a_running_loop()
    except (TypeError, ValueError, RuntimeError):
        main.close()  # never awaited: no "coroutine was never awaited" warning either
        raise
    if sys.version_info >= (3, 11):
        with asyncio.Runner(loop_factory=factory) as runner:
            try:
                return runner.run(main)
            finally:
                loop = runner.get_loop()
                if isinstance(loop, VirtualEventLoop):
                    loop.hold_time()
    return _run_310(main, factory)  # pragma: no cover - Python 3.10 only (tested directly)


def _refuse_a_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        "pytest_osfoundry.aio.run() cannot be called from a running event loop: "
        "await the coroutine instead"
    )


def _run_310(main: Coroutine[Any, Any, T], factory: LoopFactory) -> T:
    """:func:`run` for Python 3.10, which has no ``asyncio.Runner``."""
    loop = factory()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        loop.hold_time()
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()
