"""Time for everything in the kit: a virtual clock with a scheduler, and a real one.

Both clocks share one interface (:class:`Clock`):

* :meth:`~Clock.now` — seconds since the Unix epoch (a float).
* :meth:`~Clock.call_at` / :meth:`~Clock.call_later` — run a callable at a time; the
  :class:`Timer` returned cancels it.
* :meth:`~Clock.spawn` / :meth:`~Clock.start` — run a *process*: a generator that
  yields what it waits for. A process may yield a number (sleep that many seconds), a
  :class:`Signal` (wait until it is set; resumes with ``True``) or a :class:`Wait` (a
  signal with a timeout; resumes with ``True`` if the signal fired, ``False`` on
  timeout); anything else is a ``TypeError`` naming the process.

Both keep every scheduled call in one queue, in time order, ties in the order they
were scheduled, and differ only in what ``now`` is and who runs what is due. On the
:class:`VirtualClock` nothing sleeps: :meth:`VirtualClock.advance` and
:meth:`VirtualClock.run_until` run every due event in order, moving time to each.
The :class:`RealClock` runs the same events on wall-clock time from
:meth:`RealClock.run`, so one relay implementation serves both.

Threads: scheduling on either clock (``call_at``, ``call_later``, ``spawn``,
``Signal.set``) is safe from any thread, on any Python, with or without the GIL:
every push and pop of the queue holds its lock. Events run on one thread: the one
that moves the virtual clock, or the one in :meth:`RealClock.run`.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from functools import partial
from heapq import heappop, heappush
from operator import attrgetter
from typing import Any, Protocol, TypeAlias

from pytest_osfoundry._checks import check_number, check_seconds, is_number

__all__ = [
    "DEFAULT_START",
    "Clock",
    "Process",
    "ProcessGen",
    "RealClock",
    "Signal",
    "Timer",
    "VirtualClock",
    "Wait",
]

#: Where a virtual clock starts unless told otherwise: 2026-11-08T00:00:00Z, the day
#: the seed read the live tool listing. Any fixed instant would do; a fixed one keeps
#: timestamps in reports reproducible.
DEFAULT_START = 1_794_096_000.0


def _check_delay(seconds: object, name: str = "a delay") -> float:
    """A delay may be ``inf`` (never), never negative or NaN."""
    return check_seconds(seconds, name, finite=False)


# --------------------------------------------------------------------------- processes


class Timer:
    """A handle on a scheduled call; :meth:`cancel` stops it from running.

    It is also the queue's own record of the call (``when``, ``fn``, ``cancelled``:
    read them, do not set them), so scheduling allocates one object.
    """

    __slots__ = ("cancelled", "fn", "when")

    def __init__(self, when: float, fn: Callable[[], None]) -> None:
        self.when = when
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        """Do not run the call (no effect once it has run)."""
        self.cancelled = True


class Signal:
    """A one-shot flag a process can wait on. :meth:`set` wakes every waiter once."""

    __slots__ = ("_clock", "_waiters", "is_set", "value")

    def __init__(self, clock: _Scheduler) -> None:
        self._clock = clock
        self._waiters: list[Callable[[bool], None]] = []
        self.is_set = False
        self.value: Any = None

    def set(self, value: Any = None) -> None:
        """Set the flag (idempotent) and resume every waiting process at the current time."""
        if self.is_set:
            return
        self.is_set = True
        self.value = value
        waiters, self._waiters = self._waiters, []
        clock = self._clock
        for wake in waiters:
            clock._schedule(clock.now(), partial(wake, True))

    def _add_waiter(self, wake: Callable[[bool], None]) -> None:
        self._waiters.append(wake)

    def _remove_waiter(self, wake: Callable[[bool], None]) -> None:
        # Not contextlib.suppress: it costs more than the removal itself.
        try:  # noqa: SIM105
            self._waiters.remove(wake)
        except ValueError:  # already woken: nothing to remove
            pass


_IS_SET = attrgetter("is_set")
"""``_IS_SET(signal)`` is ``signal.is_set``, in C: how a run waits for a signal."""


@dataclass(frozen=True)
class Wait:
    """Yielded by a process: wait for ``signal`` at most ``timeout`` seconds."""

    signal: Signal
    timeout: float

    def __post_init__(self) -> None:
        if not isinstance(self.signal, Signal):
            raise TypeError(f"Wait needs a Signal (clock.signal()), got {self.signal!r}")
        _check_delay(self.timeout, "Wait.timeout")


Yieldable: TypeAlias = float | int | Signal | Wait
ProcessGen: TypeAlias = Generator[Yieldable, Any, Any]


class Process:
    """A running generator process. ``done`` is set with its return value when it ends."""

    def __init__(self, clock: _Scheduler, gen: ProcessGen, name: str = "") -> None:
        self._clock = clock
        self._gen = gen
        self.name = name
        self.done = Signal(clock)
        self.error: BaseException | None = None
        self._timer: Timer | None = None
        # Made once: every sleep reuses them. They refer back to the process, so
        # _release() drops them when it ends (no reference cycle is left for the
        # garbage collector to find).
        self._resume: Callable[[], None] = partial(self._step, None)
        self._fired: Callable[[], None] = partial(self._step, True)

    @property
    def finished(self) -> bool:
        """True once the generator has returned (or raised)."""
        return self.done.is_set

    def _step(self, value: Any) -> None:
        """Send ``value`` into the generator and wait for what it yields next."""
        if self.done.is_set:
            return
        try:
            item = self._gen.send(value)
        except StopIteration as stop:
            self._release()
            self.done.set(stop.value)
            return
        except BaseException as exc:
            self._release()
            self.error = exc
            self.done.set(None)
            raise
        clock = self._clock
        if (type(item) is float or type(item) is int) and item >= 0:  # the common case: a sleep
            self._timer = clock._schedule(clock.now() + item, self._resume)
            return
        self._wait_for(item)

    def _wait_for(self, item: Yieldable) -> None:
        clock = self._clock
        if isinstance(item, Signal):
            if item.is_set:
                clock._schedule(clock.now(), self._fired)
            else:
                item._add_waiter(self._step)
            return
        if isinstance(item, Wait):
            sig = item.signal
            if sig.is_set:
                clock._schedule(clock.now(), self._fired)
                return
            _Waiting(self, sig, item.timeout)
            return
        if is_number(item):
            self._timer = clock._schedule(clock.now() + _check_delay(item), self._resume)
            return
        raise TypeError(
            f"process {self.name or self._gen!r} yielded {item!r}; "
            "yield a number of seconds, a Signal or a Wait(signal, timeout)"
        )

    def cancel(self) -> None:
        """Stop the process where it waits; ``done`` is set with ``None``."""
        if self.done.is_set:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._release()
        self._gen.close()
        self.done.set(None)

    def _release(self) -> None:
        self._timer = None
        self._resume = self._fired = _nothing


def _nothing() -> None:
    """What a finished process's wake-ups do."""


_SPENT = Timer(0.0, _nothing)
_SPENT.cancelled = True


class _Waiting:
    """A process waiting on a :class:`Wait`: whichever of signal and timeout comes first wins.

    It is itself the signal's waiter (called with ``True``), so that removing it on a
    timeout finds it by identity.
    """

    __slots__ = ("fired", "proc", "signal", "timer")

    def __init__(self, proc: Process, signal: Signal, timeout: float) -> None:
        self.proc = proc
        self.signal = signal
        self.fired = False
        clock = proc._clock
        self.timer = clock._schedule(clock.now() + timeout, self.on_timeout)
        signal._add_waiter(self)

    def __call__(self, _: bool) -> None:
        """The signal fired first."""
        if self.fired:
            return
        self.fired = True
        self.timer.cancel()
        self.timer = _SPENT  # the cancelled timer refers back to us: no cycle
        self.proc._step(True)

    def on_timeout(self) -> None:
        if self.fired:
            return
        self.fired = True
        self.timer = _SPENT
        self.signal._remove_waiter(self)
        self.proc._step(False)


def _condition(until: object, what: str) -> Callable[[], bool]:
    """``until`` (a :class:`Signal` or a predicate) as a predicate; ``what`` names the call."""
    if isinstance(until, Signal):
        return partial(_IS_SET, until)  # C-level: no Python frame per event
    if callable(until):
        return until
    raise TypeError(f"{what}, got {until!r}")


# --------------------------------------------------------------------------- the clocks


class Clock(Protocol):
    """What the server, relay, engine and agent need of time."""

    def now(self) -> float:
        """Seconds since the Unix epoch."""
        ...

    def call_at(self, when: float, fn: Callable[[], None]) -> Timer:
        """Run ``fn`` at ``when`` (at once if that is past)."""
        ...

    def call_later(self, delay: float, fn: Callable[[], None]) -> Timer:
        """Run ``fn`` ``delay`` seconds from now."""
        ...

    def spawn(self, gen: ProcessGen, name: str = "", delay: float = 0.0) -> Process:
        """Start a process ``delay`` seconds from now."""
        ...

    def signal(self) -> Signal:
        """A new :class:`Signal` bound to this clock."""
        ...

    def start(self, gen: ProcessGen, name: str = "") -> Process:
        """Start a process now: its first step runs before this returns."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block the caller for ``seconds`` (virtual: advance the clock that far)."""
        ...


class _Scheduler:
    """The event queue both clocks are: every scheduled call, in time order.

    :meth:`_schedule` is the one way onto the queue (``call_at``, ``call_later``,
    ``spawn``, a process's sleeps and waits, a signal's wake-ups) and :meth:`_pop_due`
    the one way off it. Both hold :attr:`_lock`, taken with ``acquire()``/``release()``
    rather than ``with``: on CPython 3.11 that halves the lock's cost, on the path
    every event takes. A runner that waits for the next event (:meth:`RealClock.run`)
    waits on :attr:`_wakeup` (the same lock) with :attr:`_sleeping` set, and every
    push then wakes it: a new event may be due sooner than it meant to wait.
    """

    def __init__(self) -> None:
        # (when, seq, timer): ordered by plain tuple comparison, ties in scheduling
        # order since seq is unique.
        self._queue: list[tuple[float, int, Timer]] = []
        self._next_seq = itertools.count().__next__
        self._lock = threading.RLock()
        self._wakeup = threading.Condition(self._lock)
        self._sleeping = False
        self.events_run = 0
        """How many events have run on this clock."""

    def now(self) -> float:  # pragma: no cover - every clock defines it
        raise NotImplementedError

    def call_at(self, when: float, fn: Callable[[], None]) -> Timer:
        """Run ``fn`` at ``when`` (at once if that is past)."""
        if not callable(fn):
            raise TypeError(f"call_at needs a callable, got {fn!r}")
        when = check_number(when, "when", finite=False)
        return self._schedule(max(when, self.now()), fn)

    def call_later(self, delay: float, fn: Callable[[], None]) -> Timer:
        """Run ``fn`` ``delay`` seconds from now."""
        if not callable(fn):
            raise TypeError(f"call_later needs a callable, got {fn!r}")
        return self._schedule(self.now() + _check_delay(delay), fn)

    def spawn(self, gen: ProcessGen, name: str = "", delay: float = 0.0) -> Process:
        """Start a process ``delay`` seconds from now."""
        if not isinstance(gen, Generator):
            raise TypeError(f"spawn needs a generator (call the generator function), got {gen!r}")
        when = self.now() + _check_delay(delay)
        proc = Process(self, gen, name)
        self._schedule(when, proc._resume)
        return proc

    def start(self, gen: ProcessGen, name: str = "") -> Process:
        """Start a process now: its first step runs before this returns."""
        if not isinstance(gen, Generator):
            raise TypeError(f"start needs a generator (call the generator function), got {gen!r}")
        proc = Process(self, gen, name)
        proc._step(None)
        return proc

    def signal(self) -> Signal:
        """A new :class:`Signal` bound to this clock."""
        return Signal(self)

    def next_due(self) -> float | None:
        """The time of the earliest pending event, or ``None`` when nothing is scheduled."""
        with self._lock:
            while self._queue and self._queue[0][2].cancelled:
                heappop(self._queue)
            return self._queue[0][0] if self._queue else None

    @property
    def pending(self) -> int:
        """How many events are scheduled and not cancelled."""
        with self._lock:
            return sum(1 for _, _, e in self._queue if not e.cancelled)

    def _schedule(self, when: float, fn: Callable[[], None]) -> Timer:
        """Queue ``fn`` at ``when`` (a float, not in the past): callers have validated."""
        timer = Timer(when, fn)
        lock = self._lock
        lock.acquire()
        try:
            heappush(self._queue, (when, self._next_seq(), timer))
            if self._sleeping:
                self._wakeup.notify_all()
        finally:
            lock.release()
        return timer

    def _pop_due(self, limit: float) -> Timer | None:
        """Take the earliest live event due at or before ``limit``; ``None`` if there is none."""
        lock = self._lock
        lock.acquire()
        try:
            queue = self._queue
            while queue:
                when, _, head = queue[0]
                if head.cancelled:
                    heappop(queue)
                    continue
                if when <= limit:
                    heappop(queue)
                    return head
                return None
            return None
        finally:
            lock.release()


class VirtualClock(_Scheduler):
    """A clock that only moves when told to; every due event runs, in order, at once.

    ``listeners`` registered with :meth:`on_move` are called with the new time each
    time the clock moves (the ``osf_clock`` fixture uses this to keep freezegun's
    ``datetime.now()``/``time.time()`` in step).

    Threads: move it (``advance``, ``run_until``, ``run_all``) from one thread at a
    time; scheduling on it from any thread is safe (the queue is locked).
    """

    def __init__(self, start: float = DEFAULT_START) -> None:
        super().__init__()
        self._now = check_number(start, "start (an epoch time)", low=0)
        self._listeners: list[Callable[[float], None]] = []

    def now(self) -> float:
        """The clock's time, in seconds since the Unix epoch."""
        return self._now

    def on_move(self, listener: Callable[[float], None]) -> None:
        """Call ``listener(new_time)`` whenever the clock moves."""
        if not callable(listener):
            raise TypeError(f"on_move needs a callable, got {listener!r}")
        self._listeners.append(listener)

    def advance(self, seconds: float) -> float:
        """Move ``seconds`` forward, running every event due on the way; returns the new time.

        Called from inside an event (e.g. a patched ``time.sleep`` in code the clock
        itself is running), it runs the nested events too.
        """
        target = self._now + _check_delay(seconds, "seconds")
        if math.isinf(target):
            raise ValueError("advance() needs a finite number of seconds, got inf")
        self._run(target, None)
        self._move(max(self._now, target))
        return self._now

    def run_until(
        self,
        until: float | Callable[[], bool] | Signal,
        *,
        limit: float = 365 * 86400.0,
    ) -> float:
        """Run events until an absolute time, a predicate is true, or a signal is set.

        With a predicate or signal, stops as soon as it holds after an event and
        raises ``TimeoutError`` if it still does not hold once ``limit`` seconds of
        virtual time have passed or nothing is left to run. Returns the time reached.
        """
        if is_number(until):
            if until < self._now:
                raise ValueError(
                    f"run_until({until}) is in the past (now is {self._now}); "
                    "use advance() for relative moves"
                )
            return self.advance(until - self._now)
        done = _condition(until, "run_until takes a time, a predicate or a Signal")
        started = self._now
        if not self._run(started + _check_delay(limit, "limit"), done):
            raise TimeoutError(
                f"condition not met after {self._now - started:.1f} s of virtual time"
                + (" (nothing left to run)" if self.next_due() is None else "")
            )
        return self._now

    def run_all(self, *, limit: float = 365 * 86400.0) -> float:
        """Run events until none are left (or ``limit`` seconds pass); returns the time."""
        self._run(self._now + _check_delay(limit, "limit"), None)
        return self._now

    def sleep(self, seconds: float) -> None:
        """Advance the clock by ``seconds`` (nothing really sleeps)."""
        self.advance(seconds)

    def _run(self, deadline: float, done: Callable[[], bool] | None) -> bool:
        """Run due events in order up to ``deadline``, moving time to each, until ``done``
        holds (checked before the first and after each); whether it holds."""
        pop = self._pop_due
        while True:
            # Tested here, not as `while done is None or not done()`: CPython 3.11 runs
            # this shape in fewer instructions an event (benchmarks/RESULTS.md).
            if done is not None and done():
                return True
            timer = pop(deadline)
            if timer is None:
                return False
            if timer.when != self._now:
                self._move(timer.when)
            self.events_run += 1
            timer.fn()

    def _move(self, when: float) -> None:
        if when != self._now:
            self._now = when
            for listener in self._listeners:
                listener(when)


class RealClock(_Scheduler):
    """Wall-clock time with the same queue; :meth:`run` executes events as they fall due.

    Scheduling is safe from any thread and wakes :meth:`run`; events run on the
    thread that called it, until :meth:`stop` or its ``until`` holds.
    """

    def __init__(self) -> None:
        super().__init__()
        self._stopped = False

    def now(self) -> float:
        """Wall-clock time: seconds since the Unix epoch."""
        return time.time()

    def sleep(self, seconds: float) -> None:
        """Block the caller for ``seconds`` of wall time."""
        time.sleep(_check_delay(seconds))

    def stop(self) -> None:
        """Make :meth:`run` return after the event it is running (from any thread)."""
        with self._wakeup:
            self._stopped = True
            self._wakeup.notify_all()

    def run(self, until: Signal | Callable[[], bool] | None = None) -> None:
        """Run events on wall-clock time until :meth:`stop`, or ``until`` holds.

        A :meth:`stop` that came before ``run`` (say, a signal during set-up) makes it
        return at once; either way the stop is used up when ``run`` returns.
        """
        done = (
            None if until is None else _condition(until, "run takes a Signal, a predicate or None")
        )
        try:
            while not self._stopped and (done is None or not done()):
                timer = self._pop_due(self.now())
                if timer is not None:
                    self.events_run += 1
                    timer.fn()
                else:
                    self._nap()
        finally:
            with self._wakeup:
                self._stopped = False

    def _nap(self) -> None:
        """Wait for the next event's time (at most half a second: ``until`` may come to
        hold from another thread), or until a new event or :meth:`stop` wakes us."""
        with self._wakeup:
            if self._stopped:
                return
            due = self.next_due()
            self._sleeping = True
            try:
                self._wakeup.wait(0.5 if due is None else min(0.5, max(0.0, due - self.now())))
            finally:
                self._sleeping = False
