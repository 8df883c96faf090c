"""Async tests on virtual time: the ``virtual_loop`` marker option and the frozen-time guard.

* :func:`run_virtual_test` runs an ``async def`` test marked
  ``@pytest.mark.osf(virtual_loop=True)`` on a
  :class:`~pytest_osfoundry.aio.VirtualEventLoop` on its world's clock (the plugin's
  ``pytest_pyfunc_call`` calls it; no async plugin is needed).
* :func:`guard_real_loops` makes any *other* asyncio loop refuse, with a message, to
  set a timer while freezegun holds time still (``osf_clock``, ``patch_sleep``): such
  a loop reads the frozen monotonic clock, so its timers would never fall due and the
  test would hang.

The plugin imports this module only when a test uses one of these.
"""

from __future__ import annotations

import asyncio.base_events
import inspect
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_osfoundry.world import OsfWorld

__all__ = ["REAL_LOOP_ON_FROZEN_TIME", "VIRTUAL_WORLD", "guard_real_loops", "run_virtual_test"]

#: Where ``osf_world`` leaves itself for :func:`run_virtual_test`.
VIRTUAL_WORLD: pytest.StashKey[OsfWorld] = pytest.StashKey()

#: The message of an ordinary event loop that set a timer on frozen time.
REAL_LOOP_ON_FROZEN_TIME = (
    "an asyncio event loop set a timer while {what} holds time still (freezegun freezes the "
    "monotonic clock the loop reads, so the timer would never fire and the test would hang). "
    "Run async code on the virtual clock instead: @pytest.mark.osf(virtual_loop=True) on an "
    "async def test, or pytest_osfoundry.aio.run(coro, osf_clock) from a sync one"
)


def guard_real_loops(patch: pytest.MonkeyPatch, what: str) -> None:
    """Until ``patch`` is undone, an ordinary asyncio loop refuses to set a timer, naming the fix.

    The refusal is a ``RuntimeError`` raised where the timer is asked for (inside the
    ``await asyncio.sleep(...)`` or ``anyio.fail_after(...)`` of the code under test),
    so the test fails there with the message and the loop shuts down normally. A loop
    that sets no timer keeps working; the kit's
    :class:`~pytest_osfoundry.aio.VirtualEventLoop` is not affected.
    """
    from pytest_osfoundry.aio import VirtualEventLoop

    message = REAL_LOOP_ON_FROZEN_TIME.format(what=what)
    loop_class = asyncio.base_events.BaseEventLoop
    original = loop_class.call_at

    def guarded_call_at(
        self: asyncio.base_events.BaseEventLoop, when: float, callback: Any, *args: Any,
        **kwargs: Any,
    ) -> asyncio.TimerHandle:
        if isinstance(self, VirtualEventLoop):
            return original(self, when, callback, *args, **kwargs)
        raise RuntimeError(message)

    patch.setattr(loop_class, "call_at", guarded_call_at)


def _options(item: pytest.Function) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers("osf"))):
        options.update(marker.kwargs)
    return options


def wants_virtual_loop(item: pytest.Function) -> bool:
    """Whether an ``osf`` marker of ``item`` asks for ``virtual_loop`` (cheap)."""
    return item.get_closest_marker("osf") is not None and bool(
        _options(item).get("virtual_loop")
    )


def run_virtual_test(item: pytest.Function) -> bool:
    """Run ``item`` (an ``async def`` test) on its world's virtual loop; ``True`` once run.

    Refuses, with a usage error naming what to change: a test that is not
    ``async def``, one that anyio's plugin runs too, one with no ``osf_`` fixture.
    Beside pytest-asyncio (strict or auto mode) the virtual loop wins: the test's
    coroutine runs here, never on pytest-asyncio's loop.
    """
    from pytest_osfoundry import aio

    # pytest-asyncio (either mode) hands pytest a sync wrapper of the test made with
    # functools.wraps; the coroutine function under it is what runs here, on the virtual
    # loop, and the wrapper (pytest-asyncio's own loop) is never called.
    test_function = inspect.unwrap(item.obj, stop=inspect.iscoroutinefunction)
    if not inspect.iscoroutinefunction(test_function):
        raise pytest.UsageError(
            f"{item.nodeid}: virtual_loop=True is for async def tests (this one is not async); "
            "a sync test moves the clock with osf_clock.advance() or patch_sleep=True"
        )
    if "anyio_backend" in item.funcargs:
        raise pytest.UsageError(
            f"{item.nodeid}: virtual_loop=True and anyio's plugin both run this test; use one "
            "(drop the anyio marker, or drop virtual_loop and give anyio the kit's loop: "
            "anyio_backend = ('asyncio', {'loop_factory': aio.loop_factory(osf_world.clock)}))"
        )
    world = item.stash.get(VIRTUAL_WORLD, None)
    if world is None:
        raise pytest.UsageError(
            f"{item.nodeid}: virtual_loop=True needs the world: request osf_world (or any "
            "osf_ fixture built on it, such as osf_httpx2)"
        )
    kwargs = {name: item.funcargs[name] for name in item._fixtureinfo.argnames}
    aio.run(test_function(**kwargs), world.clock)
    return True
