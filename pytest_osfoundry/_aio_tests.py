"""Async tests on virtual time: the ``virtual_loop`` option and the set-up refusals.

* :func:`run_virtual_test` runs an ``async def`` test whose world has
  ``virtual_loop=True`` on a :class:`~pytest_osfoundry.aio.VirtualEventLoop` on its
  world's clock, with the world's ``stall_after``/``stall_timeout`` (the plugin's
  ``pytest_pyfunc_call`` calls it; no async plugin is needed).
* :func:`check_async_test` refuses at set-up, naming the fix, an ``async def`` test
  that uses the world on any other loop (pytest-asyncio's, in strict or auto mode;
  anyio's plugin without the kit's loop factory): the world's clock would never move
  there, the run would stay ``queued`` and the test would hang. It refuses too
  ``virtual_loop=True`` on a sync test's own marker, and beside anyio's plugin.

The plugin imports this module only when a test uses one of these.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import pytest

from pytest_osfoundry._fixtures import is_async_test, refuse

if TYPE_CHECKING:
    from pytest_osfoundry.world import OsfWorld

__all__ = ["ASYNC_OFF_THE_VIRTUAL_LOOP", "check_async_test", "run_virtual_test"]

#: The kit's loop for anyio's plugin, as a user writes it.
ANYIO_KIT_LOOP = (
    "anyio_backend = ('asyncio', {'loop_factory': "
    "pytest_osfoundry.aio.loop_factory(osf_world.clock)})"
)

#: The set-up refusal of an async test that uses the world on an ordinary loop.
ASYNC_OFF_THE_VIRTUAL_LOOP = (
    "{nodeid}: this async test uses the osf_ world, and {runner} would run it on an "
    "ordinary event loop, where the world's clock never moves: a queued run would never "
    "be picked up and a poll, sleep or timeout under osf_clock/patch_sleep would never "
    "end, so the test would hang. Add virtual_loop=True to its @pytest.mark.osf (the kit "
    "then runs it on the world's clock; no async plugin is needed), or give anyio's "
    "plugin the kit's loop: {anyio_kit_loop}"
)


def _anyio_backend(item: pytest.Function) -> tuple[str, dict[str, Any]] | None:
    """The backend anyio's plugin runs ``item`` on (name, options), or ``None`` if it does not."""
    backend = item.funcargs.get("anyio_backend") if "anyio_backend" in item.funcargs else None
    if backend is None:
        return None
    if isinstance(backend, str):
        return backend, {}
    if isinstance(backend, tuple) and len(backend) == 2 and isinstance(backend[1], dict):
        return str(backend[0]), backend[1]
    return str(backend), {}


def _own_virtual_loop(item: pytest.Function) -> bool:
    """Whether the test's own ``osf`` marker (not its module's or class's) asks for it."""
    return any(m.name == "osf" and m.kwargs.get("virtual_loop") for m in item.own_markers)


def check_async_test(item: pytest.Function, world: OsfWorld) -> None:
    """Refuse, once the test's fixtures are set up, a test whose world would hang it.

    ``virtual_loop=True`` from the test's own marker on a sync test, or beside anyio's
    plugin; an ``async def`` test on any loop but the world's virtual one (see the
    module). ``virtual_loop`` set for a group (a module or class marker,
    ``osf_config``) applies to the group's async tests and leaves its sync ones alone.
    """
    from pytest_osfoundry import aio

    virtual = world.config.virtual_loop
    if not is_async_test(item):
        if virtual and _own_virtual_loop(item):
            refuse(
                f"{item.nodeid}: virtual_loop=True is for async def tests (this one is not "
                "async); a sync test moves the clock with osf_clock.advance() or "
                "patch_sleep=True"
            )
        return
    backend = _anyio_backend(item)
    if virtual:
        if backend is not None:
            refuse(
                f"{item.nodeid}: virtual_loop=True and anyio's plugin both run this test; use "
                "one (drop the anyio marker, or drop virtual_loop and give anyio the kit's "
                f"loop: {ANYIO_KIT_LOOP})"
            )
        return
    if backend is not None:
        name, options = backend
        factory = options.get("loop_factory")
        if (
            name == "asyncio"
            and isinstance(factory, aio.LoopFactory)
            and factory.clock is world.clock
        ):
            return  # anyio runs it on the world's virtual loop
        runner = f"anyio's plugin (backend {name!r}" + (
            ", with a loop factory that is not the kit's on this world's clock)"
            if factory is not None
            else ")"
        )
    elif item.get_closest_marker("asyncio") is not None:
        runner = "pytest-asyncio"
    else:
        runner = "an async plugin (or none)"
    refuse(
        ASYNC_OFF_THE_VIRTUAL_LOOP.format(
            nodeid=item.nodeid, runner=runner, anyio_kit_loop=ANYIO_KIT_LOOP
        )
    )


def run_virtual_test(item: pytest.Function, world: OsfWorld) -> bool:
    """Run ``item`` (an ``async def`` test) on its world's virtual loop; ``True`` once run.

    A stall fails the test with the :class:`~pytest_osfoundry.aio.VirtualLoopStalled`
    message alone. Beside pytest-asyncio (strict or auto mode) the virtual loop wins: the test's
    coroutine runs here, never on pytest-asyncio's loop.
    """
    from pytest_osfoundry import aio

    # pytest-asyncio (either mode) hands pytest a sync wrapper of the test made with
    # functools.wraps; the coroutine function under it is what runs here, on the virtual
    # loop, and the wrapper (pytest-asyncio's own loop) is never called.
    test_function = inspect.unwrap(item.obj, stop=inspect.iscoroutinefunction)
    config = world.config
    bounds: dict[str, float] = {}
    if config.stall_after is not None:
        bounds["stall_after"] = config.stall_after
    if config.stall_timeout is not None:
        bounds["stall_timeout"] = config.stall_timeout
    kwargs = {name: item.funcargs[name] for name in item._fixtureinfo.argnames}
    try:
        aio.run(test_function(**kwargs), world.clock, **bounds)
    except aio.VirtualLoopStalled as err:
        stalled = f"VirtualLoopStalled: {err}"
    else:
        return True
    # The message names each task's awaits, file and line: the loop's own frames would
    # only bury it. Raised outside the except: no chained exception either.
    pytest.fail(f"{item.nodeid}: {stalled}", pytrace=False)
