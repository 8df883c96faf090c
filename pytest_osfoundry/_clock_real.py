"""RealClock: wall-clock time on the same scheduler, events run by :meth:`RealClock.run`.

Scheduling is safe from any thread and wakes :meth:`RealClock.run`; events run on the
thread that called it, until :meth:`RealClock.stop` or its ``until`` holds. Import it
from :mod:`pytest_osfoundry.clock`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from pytest_osfoundry._clock_process import Signal, Timer, check_delay
from pytest_osfoundry._clock_scheduler import _Scheduler

__all__ = ["RealClock"]


class RealClock(_Scheduler):
    """Wall-clock time with the same scheduler; :meth:`run` executes events as they fall due.

    ``call_at`` is safe from any thread; events run on the thread that calls
    :meth:`run`.
    """

    def __init__(self) -> None:
        super().__init__()
        self._cond = threading.Condition(self._lock)
        self._stopped = False

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(check_delay(seconds))

    def _schedule(self, when: float, fn: Callable[[], None]) -> Timer:
        """Queue as every clock does, then wake :meth:`run` (it may wait for less now)."""
        timer = super()._schedule(when, fn)
        with self._cond:
            self._cond.notify_all()
        return timer

    def stop(self) -> None:
        """Make :meth:`run` return after the event it is running (from any thread)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def run(self, until: Signal | Callable[[], bool] | None = None) -> None:
        """Run events on wall-clock time until :meth:`stop`, or ``until`` holds.

        A :meth:`stop` that came before ``run`` (say, a signal during set-up) makes it
        return at once; either way the stop is used up when ``run`` returns.
        """
        try:
            self._run_real(until)
        finally:
            with self._cond:
                self._stopped = False

    def _run_real(self, until: Signal | Callable[[], bool] | None) -> None:

        def done() -> bool:
            if self._stopped:
                return True
            if until is None:
                return False
            return until.is_set if isinstance(until, Signal) else until()

        while not done():
            entry = self._pop_due(self.now())
            if entry is not None:
                self.events_run += 1
                entry.fn()
                continue
            with self._cond:
                if self._stopped:
                    break
                due = self.next_due()
                wait = 0.5 if due is None else min(0.5, max(0.0, due - self.now()))
                self._cond.wait(wait)
