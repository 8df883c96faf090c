"""The load generator's own health: it reads the real time.

:func:`refuse_frozen_time` — a load process reads the real time or does not run:
freezegun (which the kit's virtual-clock fixtures use) freezes the time Locust's
statistics read and the timestamps the accounting compares, so a load process with it
active stops at once with :class:`FrozenTime`. (That its timers run on time is
:class:`~pytest_osfoundry._lateness.LatenessProbe`'s to see.)
"""

from __future__ import annotations

import sys
import time

__all__ = ["FrozenTime", "refuse_frozen_time"]


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
