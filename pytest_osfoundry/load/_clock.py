"""The clock of one Locust user: wall-clock time, waited for on gevent's hub.

``UserClock`` is a ``RealClock`` (same time, same
event queue, same ``stop``) whose ``UserClock.run`` waits for the next event with
``gevent.sleep`` instead of a condition variable. It may: a user's clock is run by
that user's greenlet alone, and everything scheduled on it while it runs (the
agent's polls, the relay's passes, the engine's ends) is scheduled from inside its
own events, so no other thread or greenlet ever has to wake it. A ``stop`` or an
``until`` that comes from elsewhere (the end of the load) is seen within
``MAX_WAIT`` seconds. Waiting on the hub's timer is the cheapest wait gevent has:
the condition's wait costs more than twice its CPU, and a load does one per request.
"""

from __future__ import annotations

from collections.abc import Callable

import gevent

from pytest_osfoundry.clock import RealClock, Signal

__all__ = ["MAX_WAIT", "UserClock"]

#: The longest single wait: how late a stop from another greenlet is seen.
MAX_WAIT = 0.5


class UserClock(RealClock):
    """A real clock run by one greenlet (see the module docstring)."""

    def run(self, until: Signal | Callable[[], bool] | None = None) -> None:
        """Run events as they fall due until ``stop`` or ``until`` holds."""

        def done() -> bool:
            if self._stopped:
                return True
            if until is None:
                return False
            return until.is_set if isinstance(until, Signal) else until()

        try:
            while not done():
                entry = self._pop_due(self.now())
                if entry is not None:
                    self.events_run += 1
                    entry.fn()
                    continue
                due = self.next_due()
                gevent.sleep(MAX_WAIT if due is None else min(MAX_WAIT, max(0.0, due - self.now())))
        finally:
            self._stopped = False
