"""The process's time and the kit's clocks: the one place that bends one to the other.

* :func:`follow_clock` -- while a test's virtual clock is in charge: ``datetime.now()``
  and ``time.time()`` follow it (freezegun, moved each time the clock moves),
  ``time.sleep(s)`` advances it instead of sleeping (``patch_sleep``), and an ordinary
  asyncio loop that sets a timer fails naming the fix (freezegun freezes the monotonic
  clock such a loop reads, so the timer would never fire). The ``osf_clock`` fixture
  and ``patch_sleep`` use it; the returned function undoes all of it.
* :func:`real_monotonic` -- the real monotonic clock, even while freezegun holds
  ``time.monotonic`` still: what bounds a virtual loop's stall in wall time.
* :func:`refuse_frozen_time` -- a load process reads the real time or does not run:
  freezegun freezes the time Locust's statistics read and the timestamps the
  accounting compares, so a load process with it active stops at once with
  :class:`FrozenTime`. (That its timers run on time is
  :class:`~pytest_osfoundry._lateness.LatenessProbe`'s to see.)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from freezegun import api as freezegun_api

if TYPE_CHECKING:
    import asyncio

    from pytest_osfoundry.clock import VirtualClock

__all__ = [
    "REAL_LOOP_ON_FROZEN_TIME",
    "FrozenTime",
    "follow_clock",
    "real_monotonic",
    "refuse_frozen_time",
]

#: The message of an ordinary event loop that set a timer on frozen time.
REAL_LOOP_ON_FROZEN_TIME = (
    "an asyncio event loop set a timer while {what} holds time still (freezegun freezes the "
    "monotonic clock the loop reads, so the timer would never fire and the test would hang). "
    "Run async code on the virtual clock instead: @pytest.mark.osf(virtual_loop=True) on an "
    "async def test, or pytest_osfoundry.aio.run(coro, osf_clock) from a sync one"
)


def follow_clock(
    clock: VirtualClock,
    *,
    patch_sleep: bool,
    what: str,
    own_loop: type[asyncio.AbstractEventLoop],
) -> Callable[[], None]:
    """Bend the process's time to ``clock`` until the returned function is called.

    ``datetime.now()``/``time.time()`` follow the clock (pytest's own timing,
    ``--durations`` and JUnit times, keeps wall time); with ``patch_sleep``,
    ``time.sleep`` advances it. Meanwhile an asyncio loop other than ``own_loop`` (the
    loop class that runs on the clock) refuses to set a timer with a ``RuntimeError``
    naming ``what`` holds time still, raised where the timer is asked for (inside the
    ``await asyncio.sleep(...)`` or ``anyio.fail_after(...)`` of the code under test),
    so the test fails there and the loop shuts down normally; a loop that sets no timer
    keeps working.
    """
    import asyncio.base_events

    from freezegun import freeze_time

    freezer = freeze_time(
        datetime.fromtimestamp(clock.now(), timezone.utc), tick=False, ignore=["_pytest.timing"]
    )
    frozen = freezer.start()
    clock.on_move(lambda t: frozen.move_to(datetime.fromtimestamp(t, timezone.utc)))
    patched: list[tuple[object, str, Any]] = []

    def patch(owner: object, name: str, value: Any) -> None:
        patched.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    if patch_sleep:
        patch(time, "sleep", clock.sleep)
    message = REAL_LOOP_ON_FROZEN_TIME.format(what=what)
    loop_class = asyncio.base_events.BaseEventLoop
    original = loop_class.call_at

    def guarded_call_at(
        self: asyncio.base_events.BaseEventLoop, when: float, callback: Any, *args: Any,
        **kwargs: Any,
    ) -> asyncio.TimerHandle:
        if isinstance(self, own_loop):
            return original(self, when, callback, *args, **kwargs)
        raise RuntimeError(message)

    patch(loop_class, "call_at", guarded_call_at)

    def restore() -> None:
        for owner, name, value in reversed(patched):
            setattr(owner, name, value)
        patched.clear()
        freezer.stop()

    return restore


def real_monotonic() -> float:
    """The real monotonic clock, even while freezegun holds ``time.monotonic`` still.

    Read from freezegun's module at each call: freezegun swaps every module attribute
    that *is* the real ``time.monotonic`` for its fake when it starts, but never its own.
    """
    return freezegun_api.real_monotonic()


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
