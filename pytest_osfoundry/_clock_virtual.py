"""VirtualClock: a clock that moves only when told, running every due event at once.

:meth:`VirtualClock.advance` and :meth:`VirtualClock.run_until` run every event due
on the way in time order (ties in scheduling order); nothing sleeps. Import it from
:mod:`pytest_osfoundry.clock`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from heapq import heappop
from operator import attrgetter

from pytest_osfoundry._checks import check_number, is_number
from pytest_osfoundry._clock_process import Signal, check_delay
from pytest_osfoundry._clock_scheduler import _Scheduler

__all__ = ["DEFAULT_START", "VirtualClock"]

#: Where a virtual clock starts unless told otherwise: 2026-11-08T00:00:00Z, the day
#: the seed read the live tool listing. Any fixed instant would do; a fixed one keeps
#: timestamps in reports reproducible.
DEFAULT_START = 1_794_096_000.0


_IS_SET = attrgetter("is_set")
"""``_IS_SET(signal)`` is ``signal.is_set``, in C (run_until's check on a Signal)."""


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
        return self._now

    def on_move(self, listener: Callable[[float], None]) -> None:
        """Call ``listener(new_time)`` whenever the clock moves."""
        if not callable(listener):
            raise TypeError(f"on_move needs a callable, got {listener!r}")
        self._listeners.append(listener)

    def _move(self, when: float) -> None:
        if when != self._now:
            self._now = when
            for listener in self._listeners:
                listener(when)

    def advance(self, seconds: float) -> float:
        """Move ``seconds`` forward, running every event due on the way; returns the new time.

        Called from inside an event (e.g. a patched ``time.sleep`` in code the clock
        itself is running), it runs the nested events too.
        """
        target = self._now + check_delay(seconds, "seconds")
        if math.isinf(target):
            raise ValueError("advance() needs a finite number of seconds, got inf")
        self._run(target)
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
        if isinstance(until, Signal):
            # C-level calls, no Python frame per event (issue 23, profile-guided)
            check: Callable[[], bool] = partial(_IS_SET, until)
        elif callable(until):
            check = until
        else:
            raise TypeError(f"run_until takes a time, a predicate or a Signal, got {until!r}")
        deadline = self._now + check_delay(limit, "limit")
        queue, lock = self._queue, self._lock
        while not check():
            # _pop_due(deadline) inlined: the one call every event of a simulation made
            # (issue 23, profile-guided); same lock, same order, same skipping.
            entry = None
            lock.acquire()
            try:
                while queue:
                    when, _, head = queue[0]
                    if head.cancelled:
                        heappop(queue)
                        continue
                    if when <= deadline:
                        heappop(queue)
                        entry = head
                    break
            finally:
                lock.release()
            if entry is None:
                raise TimeoutError(
                    f"condition not met after {self._now - (deadline - limit):.1f} s of "
                    "virtual time" + (" (nothing left to run)" if self.next_due() is None else "")
                )
            if entry.when != self._now:
                self._move(entry.when)
            self.events_run += 1
            entry.fn()
        return self._now

    def run_all(self, *, limit: float = 365 * 86400.0) -> float:
        """Run events until none are left (or ``limit`` seconds pass); returns the time."""
        deadline = self._now + check_delay(limit, "limit")
        self._run(deadline)
        return self._now

    def _run(self, target: float) -> None:
        while True:
            entry = self._pop_due(target)
            if entry is None:
                return
            self._move(entry.when)
            self.events_run += 1
            entry.fn()

    def sleep(self, seconds: float) -> None:
        """Advance the clock by ``seconds`` (nothing really sleeps)."""
        self.advance(seconds)
