"""virtual_loop=True beside pytest-asyncio, the most used asyncio test plugin.

pytest-asyncio wraps every async test it takes (all of them in auto mode, the marked
ones in strict mode) in a sync function that runs the coroutine on its own loop. A
test marked ``osf(virtual_loop=True)`` must still run on the kit's virtual loop, on
its world's clock, in either mode; every other async test stays pytest-asyncio's,
except one that uses the world: on pytest-asyncio's loop the world's clock would
never move, so it is refused at set-up, naming ``virtual_loop=True``.
"""

from __future__ import annotations

import textwrap

import pytest

# A dependency of the test extra: imported, not importorskip'd, so that losing it from
# the extra fails here instead of skipping the only proof of the interplay.
import pytest_asyncio  # noqa: F401

# Imported here so pytester's in-process runs share one copy of each (see test_async_tests).
import pytest_osfoundry._aio_tests
import pytest_osfoundry.aio
import pytest_osfoundry.world  # noqa: F401

pytest_plugins = ["pytester"]

USER_TESTS = """
import asyncio
import pytest

from pytest_osfoundry.aio import VirtualEventLoop


@pytest.mark.osf(virtual_loop=True)
async def test_on_the_virtual_loop(osf_world):
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualEventLoop)
    started = osf_world.clock.now()
    await asyncio.sleep(3600)  # an hour of the world's time, at once
    assert osf_world.clock.now() - started >= 3600
    assert len(osf_world.relay.passes) > 100  # the relay's 20 s passes ran meanwhile


@pytest.mark.asyncio
@pytest.mark.osf(virtual_loop=True)
async def test_marked_for_both(osf_world):
    assert isinstance(asyncio.get_running_loop(), VirtualEventLoop)
    await asyncio.sleep(60)


@pytest.mark.asyncio
async def test_left_to_pytest_asyncio():
    assert not isinstance(asyncio.get_running_loop(), VirtualEventLoop)
    await asyncio.sleep(0.01)


@pytest.mark.asyncio
async def test_the_world_on_pytest_asyncio_s_loop(osf_world):
    await asyncio.sleep(0)  # the world's clock would never move here: refused at set-up


async def test_the_world_unmarked(osf_world):
    await asyncio.sleep(0)
"""


@pytest.mark.parametrize(
    ("mode", "unmarked_runner"),
    [("strict", "an async plugin (or none)"), ("auto", "pytest-asyncio")],
)
def test_virtual_loop_wins_and_the_world_off_it_is_refused_beside_pytest_asyncio(
    pytester: pytest.Pytester, mode: str, unmarked_runner: str
) -> None:
    pytester.makepyfile(test_user=textwrap.dedent(USER_TESTS))
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "asyncio", "--strict-markers",
        "-o", f"asyncio_mode={mode}", "-o", "asyncio_default_fixture_loop_scope=function",
    )
    result.assert_outcomes(passed=3, errors=2)
    result.stdout.fnmatch_lines(
        [
            "test_user.py::test_the_world_on_pytest_asyncio_s_loop: this async test uses the osf_"
            " world, and pytest-asyncio would run it on an ordinary event loop*virtual_loop=True*",
            f"test_user.py::test_the_world_unmarked: this async test uses the osf_ world, and"
            f" {unmarked_runner} would run it*",
        ],
        consecutive=False,
    )
