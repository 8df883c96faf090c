"""The Clock protocol, and the one locked event queue both clocks share.

:class:`_Scheduler` keeps every scheduled call in time order, ties in the order they
were scheduled; scheduling from any thread is safe (every push and pop holds its
lock). :class:`~pytest_osfoundry._clock_virtual.VirtualClock` and
:class:`~pytest_osfoundry._clock_real.RealClock` differ only in what ``now`` is and
how due events are run. Import :class:`Clock` from :mod:`pytest_osfoundry.clock`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Generator
from heapq import heappop, heappush
from typing import Protocol

from pytest_osfoundry._checks import check_number
from pytest_osfoundry._clock_process import Process, ProcessGen, Signal, Timer, check_delay

__all__ = ["Clock"]


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
    """The event queue both clocks share.

    Every push and pop holds :attr:`_lock`, so scheduling from any thread is safe on
    any Python, with or without the GIL. The two calls every event makes,
    :meth:`_schedule` and :meth:`_pop_due`, take it with ``acquire()``/``release()``
    rather than ``with``: on CPython 3.11 that halves the lock's cost, on the path
    every event of ``osfoundry-sim`` takes.
    """

    def __init__(self) -> None:
        # (when, seq, timer): ordered by plain tuple comparison, ties in scheduling
        # order since seq is unique.
        self._queue: list[tuple[float, int, Timer]] = []
        self._next_seq = itertools.count().__next__
        self._lock = threading.RLock()
        self.events_run = 0

    def now(self) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def call_at(self, when: float, fn: Callable[[], None]) -> Timer:
        if not callable(fn):
            raise TypeError(f"call_at needs a callable, got {fn!r}")
        when = check_number(when, "when", finite=False)
        return self._schedule(max(when, self.now()), fn)

    def _schedule(self, when: float, fn: Callable[[], None]) -> Timer:
        """Queue ``fn`` at ``when`` (a float, not in the past): callers have validated."""
        timer = Timer(when, fn)
        lock = self._lock
        lock.acquire()
        try:
            heappush(self._queue, (when, self._next_seq(), timer))
        finally:
            lock.release()
        return timer

    def call_later(self, delay: float, fn: Callable[[], None]) -> Timer:
        if not callable(fn):
            raise TypeError(f"call_later needs a callable, got {fn!r}")
        return self._schedule(self.now() + check_delay(delay), fn)

    def spawn(self, gen: ProcessGen, name: str = "", delay: float = 0.0) -> Process:
        if not isinstance(gen, Generator):
            raise TypeError(f"spawn needs a generator (call the generator function), got {gen!r}")
        proc = Process(self, gen, name)
        self.call_later(delay, lambda: proc._step(None))
        return proc

    def start(self, gen: ProcessGen, name: str = "") -> Process:
        if not isinstance(gen, Generator):
            raise TypeError(f"start needs a generator (call the generator function), got {gen!r}")
        proc = Process(self, gen, name)
        proc._step(None)
        return proc

    def signal(self) -> Signal:
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
