"""The load generator's own health: real time, and timers that run on time.

* :func:`refuse_frozen_time` — a load process reads the real time or does not run:
  freezegun (which the kit's virtual-clock fixtures use) freezes the time Locust's
  statistics read and the timestamps the accounting compares, so a load process with
  it active stops at once with :class:`FrozenTime`.
* :class:`LatenessProbe` — a timer that asks to wake every ``period`` seconds and
  records how late each wake came. Every user of a Locust process shares one event
  loop, so the probe is late exactly when the desktops' pass timers and the agents'
  polls are: its worst lateness, over a tenth of a pass interval, makes the run
  "not valid" (:mod:`pytest_osfoundry.load._accounting`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

__all__ = ["FrozenTime", "LatenessProbe", "refuse_frozen_time"]


class FrozenTime(RuntimeError):
    """freezegun is active in a load process."""


def refuse_frozen_time() -> None:
    """Raise :class:`FrozenTime` if freezegun has frozen time in this process."""
    api = sys.modules.get("freezegun.api")
    active = bool(getattr(api, "freeze_factories", None)) if api is not None else False
    if active or getattr(time.time, "__module__", "time") != "time":
        raise FrozenTime(
            "freezegun is active in this process: a load reads the real time (Locust's "
            "statistics and the accounting's timestamps would freeze); stop the freeze "
            "before starting the load"
        )


class LatenessProbe:
    """Wakes every ``period`` seconds and keeps the worst lateness (see the module)."""

    def __init__(
        self,
        period: float,
        *,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        if not period > 0:
            raise ValueError(f"period must be > 0, got {period!r}")
        self.period = period
        self.worst = 0.0
        self.wakes = 0
        self._sleep = sleep
        self._now = now
        self._running = False

    def tick(self) -> None:
        """Sleep one period and record how late the wake came."""
        due = self._now() + self.period
        self._sleep(self.period)
        self.wakes += 1
        self.worst = max(self.worst, self._now() - due)

    def run(self) -> None:
        """Tick until :meth:`stop`."""
        self._running = True
        while self._running:
            self.tick()

    def stop(self) -> None:
        """Make :meth:`run` return after its current tick."""
        self._running = False
