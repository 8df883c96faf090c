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
virtual time would otherwise run past it. But the loop cannot see a request *in
flight* to a thread or process it did not start (anyio's own worker threads
included): bytes sent to a server thread are in the kernel, not in the loop. While
a request waits on a loopback server, the loop therefore jumps to its next timer (a
read timeout fires at once, in virtual time). Point async agents at the in-process mount
(:class:`pytest_osfoundry.server.Httpx2Mount`, the ``osf_httpx2`` fixture), which
answers inside the loop, and use ``osf_loopback`` with synchronous agents.

When every task waits and nothing is scheduled on the loop or on the clock, only
real I/O from another thread could wake it: the loop waits for that for at most
``stall_timeout`` wall-clock seconds, then raises :class:`VirtualLoopStalled`
naming the situation instead of hanging.

Use it with :func:`run` (``run(agent(), clock)``), through the ``osf`` marker
(``@pytest.mark.osf(virtual_loop=True)`` on an ``async def`` test), or as anyio's
loop (``anyio_backend = ("asyncio", {"loop_factory": loop_factory(clock)})``).
"""

from __future__ import annotations

import asyncio
import math
import selectors
import sys
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_osfoundry._checks import check_seconds
from pytest_osfoundry.clock import VirtualClock

__all__ = ["VirtualEventLoop", "VirtualLoopStalled", "loop_factory", "run"]

T = TypeVar("T")
if TYPE_CHECKING:  # annotations only: Python 3.10's typing has no TypeVarTuple
    from typing_extensions import TypeVarTuple, Unpack

    Ts = TypeVarTuple("Ts")

#: Wall-clock seconds a virtual loop with nothing scheduled waits for real I/O.
DEFAULT_STALL_TIMEOUT = 10.0


class VirtualLoopStalled(RuntimeError):
    """Every task waits, and nothing is scheduled on the loop, on the clock or in I/O."""


class _JumpingSelector(selectors.DefaultSelector):
    """The platform's selector, except that an idle wait jumps virtual time instead."""

    def __init__(self, clock: VirtualClock, stall_timeout: float) -> None:
        super().__init__()
        self._clock = clock
        self._stall = stall_timeout
        self.threads_busy = 0
        """Executor jobs (``run_in_executor``, ``asyncio.to_thread``) not yet done."""
        self.held = False
        """Set once the main coroutine is done: clean-up waits in real time, never jumps."""

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """Ready I/O at once if any; otherwise move virtual time to the next due event."""
        ready: list[tuple[selectors.SelectorKey, int]] = super().select(0)
        if ready or (timeout is not None and timeout <= 0):
            return ready
        if self.threads_busy or self.held:
            # A thread is working for a task (its answer is the next thing to happen),
            # or the run is over: wait in real time, never let virtual time run on.
            ready = super().select(self._stall)
            if ready:
                return ready
            raise VirtualLoopStalled(
                "virtual event loop: " + ("an executor job ran over" if self.threads_busy
                else "time is held (the main coroutine is done) and nothing arrived in")
                + f" {self._stall:g} s of wall time"
            )
        clock = self._clock
        now = clock.now()
        # The loop's next timer, on the clock's scale (its timeout counts from now).
        loop_due = math.inf if timeout is None else now + timeout
        clock_due = clock.next_due()
        if clock_due is not None and clock_due <= loop_due:
            clock.advance(max(0.0, clock_due - now))  # clock events first on a tie
            return []
        if not math.isinf(loop_due):
            # At least one step of the clock's float: a timeout smaller than that
            # would leave the clock where it is and the timer never due.
            clock.advance(max(timeout or 0.0, math.ulp(now)))
            return []
        # Nothing is due anywhere: only another thread or process can wake the loop.
        ready = super().select(self._stall)
        if ready:
            return ready
        raise VirtualLoopStalled(
            "virtual event loop: every task is waiting and nothing is scheduled on the loop "
            f"or on the virtual clock, and no I/O arrived in {self._stall:g} s of wall time "
            "(a deadlock: an event or future nobody will set?)"
        )


class VirtualEventLoop(asyncio.SelectorEventLoop):
    """A selector event loop that runs on ``clock`` (see the module's docstring)."""

    def __new__(
        cls, clock: VirtualClock, *, stall_timeout: float = DEFAULT_STALL_TIMEOUT
    ) -> VirtualEventLoop:
        # Checked here, not in __init__: a loop half made would complain as it is collected.
        if not isinstance(clock, VirtualClock):
            raise TypeError(f"VirtualEventLoop needs a VirtualClock, got {clock!r}")
        check_seconds(stall_timeout, "stall_timeout")
        return super().__new__(cls)

    def __init__(
        self, clock: VirtualClock, *, stall_timeout: float = DEFAULT_STALL_TIMEOUT
    ) -> None:
        stall = check_seconds(stall_timeout, "stall_timeout")
        self.clock = clock
        self.origin = clock.now()
        """The clock's time when the loop was made: ``loop.time()`` counts from it."""
        self._jumping = _JumpingSelector(clock, stall)
        super().__init__(self._jumping)

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


class _LoopFactory:
    """``loop_factory`` for asyncio.Runner / anyio: a new :class:`VirtualEventLoop` each call."""

    def __init__(self, clock: VirtualClock, stall_timeout: float) -> None:
        if not isinstance(clock, VirtualClock):
            raise TypeError(f"loop_factory needs a VirtualClock, got {clock!r}")
        self.clock = clock
        self.stall_timeout = check_seconds(stall_timeout, "stall_timeout")

    def __call__(self) -> VirtualEventLoop:
        return VirtualEventLoop(self.clock, stall_timeout=self.stall_timeout)

    def __repr__(self) -> str:
        return f"loop_factory(<VirtualClock at {self.clock.now():.3f}>)"


def loop_factory(
    clock: VirtualClock, *, stall_timeout: float = DEFAULT_STALL_TIMEOUT
) -> _LoopFactory:
    """A callable making virtual loops on ``clock``: for ``asyncio.Runner(loop_factory=...)``
    and anyio's ``("asyncio", {"loop_factory": ...})`` backend option."""
    return _LoopFactory(clock, stall_timeout)


def run(
    main: Coroutine[Any, Any, T],
    clock: VirtualClock,
    *,
    stall_timeout: float = DEFAULT_STALL_TIMEOUT,
) -> T:
    """Run ``main`` to completion on a new :class:`VirtualEventLoop` on ``clock``.

    Like :func:`asyncio.run`: tasks left over are cancelled and the loop is closed
    afterwards. Refuses (``RuntimeError``) to run inside a running event loop.
    """
    if not asyncio.iscoroutine(main):
        raise TypeError(f"run needs a coroutine (call the async function), got {main!r}")
    try:
        factory = loop_factory(clock, stall_timeout=stall_timeout)
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


def _run_310(main: Coroutine[Any, Any, T], factory: _LoopFactory) -> T:
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
