"""How late a process gets to run: a timer that asks to wake every ``period`` seconds.

:class:`LatenessProbe` records how late each wake-up came: the worst lateness, and
each wake-up later than ``late`` as a stall (from when it was due to when it came,
the latest ``kept`` of them). Two parts of the kit judge by it:

* a load process (:mod:`pytest_osfoundry.load`): every user of a Locust process shares
  one event loop, so the probe (a greenlet there) is late exactly when the desktops'
  pass timers and the agents' polls are; its worst lateness over a tenth of a pass
  interval makes the run "not valid";
* the relay suite (:mod:`pytest_osfoundry.conformance.relay`): the probe (a thread
  there) sees when the suite's own process was kept from running, and a cadence
  check's upper bound is judged on each gap less the stalls within it.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable

__all__ = ["LatenessProbe"]


class LatenessProbe:
    """Wakes every ``period`` seconds; keeps the worst lateness and the stalls (see the
    module). ``sleep`` and ``now`` are the process's own (``now``'s epoch is the one
    :meth:`within` is asked in)."""

    def __init__(
        self,
        period: float,
        *,
        late: float = math.inf,
        kept: int = 10_000,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        if not period > 0:
            raise ValueError(f"period must be > 0, got {period!r}")
        self.period = period
        self.late = late
        self.worst = 0.0
        self.wakes = 0
        self._stalls: collections.deque[tuple[float, float]] = collections.deque(maxlen=kept)
        self._sleep = sleep
        self._now = now
        self._running = False

    def tick(self) -> None:
        """Sleep one period and record how late the wake came."""
        due = self._now() + self.period
        self._sleep(self.period)
        self.woke(due, self._now())

    def woke(self, due: float, now: float) -> None:
        """A wake-up due at ``due`` came at ``now``: its lateness, a stall if over ``late``."""
        self.wakes += 1
        self.worst = max(self.worst, now - due)
        if now - due > self.late:
            self._stalls.append((due, now))

    def within(self, start: float, end: float) -> float:
        """Seconds of stalls between ``start`` and ``end``."""
        return sum(max(0.0, min(b, end) - max(a, start)) for a, b in list(self._stalls))

    def run(self) -> None:
        """Tick until :meth:`stop`."""
        self._running = True
        while self._running:
            self.tick()

    def stop(self) -> None:
        """Make :meth:`run` return after its current tick."""
        self._running = False
