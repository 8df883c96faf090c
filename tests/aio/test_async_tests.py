"""Async tests on the kit: virtual_loop=True, and frozen time that fails instead of hanging."""

from __future__ import annotations

import textwrap

import pytest

# Imported here so pytester's in-process runs share one copy of each (a module first
# imported inside a run is dropped after it, and its classes with it).
import pytest_osfoundry._aio_tests
import pytest_osfoundry.aio
import pytest_osfoundry.world  # noqa: F401

pytest_plugins = ["pytester"]


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_user=textwrap.dedent(source))
    return pytester.runpytest("-p", "no:cacheprovider", "--strict-markers", *args)


def test_virtual_loop_runs_an_async_test_on_the_world_s_clock(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        import asyncio, datetime, time
        import anyio
        import pytest
        from pytest_osfoundry.clock import DEFAULT_START

        @pytest.mark.osf(seed=1, virtual_loop=True)
        async def test_async(osf_world):
            assert time.time() == DEFAULT_START
            await asyncio.sleep(3600)
            await anyio.sleep(60)
            assert osf_world.clock.now() == DEFAULT_START + 3660
            assert time.time() == pytest.approx(DEFAULT_START + 3660, abs=1e-3)
            now = datetime.datetime.now(datetime.timezone.utc)
            assert (now.hour, now.minute) == (1, 1)
            assert len(osf_world.relay.passes) > 100  # the relay's 20 s passes ran meanwhile
        """,
    )
    result.assert_outcomes(passed=1)


def test_an_async_test_using_the_world_off_the_virtual_loop_is_refused_at_set_up(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        import asyncio
        import pytest

        @pytest.mark.osf(patch_sleep=True)
        async def test_patch_sleep(osf_world):
            await asyncio.sleep(20)

        async def test_clock(osf_clock):
            await asyncio.sleep(20)

        async def test_world_alone(osf_world, osf_agent):
            osf_agent.start(osf_world.sessions[0].graph_session_id)
        """,
        "-p", "anyio",
    )
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_patch_sleep*",
            "test_user.py::test_patch_sleep: this async test uses the osf_ world, and an async"
            " plugin (or none) would run it on an ordinary event loop, where the world's clock"
            " never moves*Add virtual_loop=True to its @pytest.mark.osf*anyio_backend = ("
            "'asyncio', {'loop_factory': pytest_osfoundry.aio.loop_factory(osf_world.clock)})",
            "*ERROR at setup of test_clock*",
            "test_user.py::test_clock: this async test uses the osf_ world*",
            "*ERROR at setup of test_world_alone*",
            "test_user.py::test_world_alone: this async test uses the osf_ world*",
        ]
    )
    assert "_fixtures.py" not in result.stdout.str()  # no kit traceback


def test_a_real_loop_on_frozen_time_fails_with_the_fix_named(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        import asyncio
        import anyio
        import pytest

        @pytest.mark.osf(patch_sleep=True)
        def test_asyncio(osf_world):
            with pytest.raises(RuntimeError, match="virtual_loop=True") as err:
                asyncio.run(asyncio.sleep(20))
            assert "patch_sleep=True" in str(err.value)

        def test_anyio(osf_clock):
            with pytest.raises(RuntimeError, match="osf_clock holds time still"):
                anyio.run(anyio.sleep, 20)

        @pytest.mark.osf(patch_sleep=True)
        def test_a_loop_without_timers_still_runs(osf_world):
            async def quick():
                await asyncio.sleep(0)
                return 42
            assert asyncio.run(quick()) == 42

        def test_released_afterwards():
            asyncio.run(asyncio.sleep(0.01))
        """,
    )
    result.assert_outcomes(passed=4)


def test_patch_sleep_with_virtual_loop_drives_the_loop_clock(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        import asyncio, time
        import pytest
        from pytest_osfoundry.clock import DEFAULT_START

        @pytest.mark.osf(patch_sleep=True, virtual_loop=True)
        async def test_both(osf_world):
            time.sleep(30)  # a blocking sleep inside the loop moves the clock
            assert osf_world.clock.now() == DEFAULT_START + 30
            loop = asyncio.get_running_loop()
            assert loop.time() == 30
            await asyncio.sleep(10)
            assert time.time() == pytest.approx(DEFAULT_START + 40, abs=1e-3)
        """,
    )
    result.assert_outcomes(passed=1)


def test_anyio_s_plugin_runs_on_the_kit_s_loop_factory(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        import anyio
        import pytest
        from pytest_osfoundry import aio
        from pytest_osfoundry.clock import DEFAULT_START

        @pytest.fixture
        def anyio_backend(osf_world):
            return ("asyncio", {"loop_factory": aio.loop_factory(osf_world.clock)})

        @pytest.mark.anyio
        async def test_on_virtual_time(osf_world, osf_clock):
            await anyio.sleep(600)
            assert osf_clock.now() == DEFAULT_START + 600
        """,
        "-p", "anyio",
    )
    result.assert_outcomes(passed=1)


def test_anyio_s_plugin_on_another_loop_is_refused_at_set_up(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        import asyncio
        import anyio
        import pytest
        from pytest_osfoundry import aio
        from pytest_osfoundry.clock import VirtualClock

        class TestItsOwnLoop:
            @pytest.fixture
            def anyio_backend(self):
                return "asyncio"

            @pytest.mark.anyio
            async def test_would_hang(self, osf_world):
                await anyio.sleep(0)

        class TestAnotherFactory:
            @pytest.fixture
            def anyio_backend(self):
                return ("asyncio", {"loop_factory": asyncio.new_event_loop})

            @pytest.mark.anyio
            async def test_would_hang(self, osf_world):
                await anyio.sleep(0)

        class TestTheKitsLoopOnAnotherClock:
            @pytest.fixture
            def anyio_backend(self):
                return ("asyncio", {"loop_factory": aio.loop_factory(VirtualClock())})

            @pytest.mark.anyio
            async def test_would_hang(self, osf_world):
                await anyio.sleep(0)
        """,
        "-p", "anyio",
    )
    result.assert_outcomes(errors=3)
    other = "anyio's plugin (backend 'asyncio', with a loop factory that is not the kit's on"
    result.stdout.fnmatch_lines(
        [
            "*TestItsOwnLoop::test_would_hang: this async test uses the osf_ world, and"
            " anyio's plugin (backend 'asyncio') would run it on an ordinary event loop*",
            f"*TestAnotherFactory::test_would_hang: this async test uses the osf_ world, and"
            f" {other}*",
            f"*TestTheKitsLoopOnAnotherClock::test_would_hang: *, and {other}*",
        ],
        consecutive=False,
    )


def test_virtual_loop_misuse_is_refused_at_set_up_naming_the_test(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        import anyio
        import pytest
        from pytest_osfoundry import aio

        @pytest.mark.osf(virtual_loop=True)
        def test_sync(osf_world):
            pass

        @pytest.mark.osf(virtual_loop=True)
        async def test_no_world():
            pass

        @pytest.fixture
        def anyio_backend(osf_world):
            return ("asyncio", {"loop_factory": aio.loop_factory(osf_world.clock)})

        @pytest.mark.anyio
        @pytest.mark.osf(virtual_loop=True)
        async def test_both(osf_world):
            await anyio.sleep(1)
        """,
        "-p", "anyio",
    )
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        [
            "test_user.py::test_sync: virtual_loop=True is for async def tests*",
            "test_user.py::test_no_world: @pytest.mark.osf configures the osf_ fixtures, and"
            " this test uses none of them*request osf_world*or drop the marker",
            "test_user.py::test_both: virtual_loop=True and anyio's plugin both run this test*",
        ],
        consecutive=False,
    )


def test_the_issue_s_stall_beside_a_running_relay_fails_naming_the_wait(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        import asyncio
        import pytest

        @pytest.mark.osf(virtual_loop=True, stall_after=3600, stall_timeout=0.5)
        async def test_stall(osf_world):
            await asyncio.Event().wait()  # the relay's passes keep the clock busy
        """,
    )
    result.assert_outcomes(failed=1)
    # Which bound ends it (3600 virtual or 0.5 wall seconds) depends on the machine's
    # load; tests/aio/test_virtual_loop.py holds each bound to its figure.
    result.stdout.fnmatch_lines(
        [
            "test_user.py::test_stall: VirtualLoopStalled: virtual event loop stalled: the tasks"
            " waited *",
            "  Task-*: test_stall (test_user.py:6) > Event.wait (locks.py:*) > <Future pending*",
            "*raise the limit: stall_after (virtual seconds) or stall_timeout (wall seconds)*",
        ]
    )


def test_virtual_loop_and_its_bounds_from_an_osf_config_override(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
        import pytest
        from pytest_osfoundry.world import WorldConfig

        @pytest.fixture
        def osf_config():
            return WorldConfig(seed=3, virtual_loop=True, stall_after=5 * 86400)
        """
    )
    result = run(
        pytester,
        """
        import asyncio, time
        import pytest
        from pytest_osfoundry.aio import VirtualEventLoop
        from pytest_osfoundry.clock import DEFAULT_START

        async def test_four_days(osf_world):
            assert isinstance(asyncio.get_running_loop(), VirtualEventLoop)
            await asyncio.sleep(4 * 86400)  # beyond the default day, within the config's 5
            assert time.time() == pytest.approx(DEFAULT_START + 4 * 86400, abs=1e-3)

        def test_sync_tests_of_the_group_run_as_usual(osf_world):
            osf_world.clock.advance(60)
            assert time.time() != DEFAULT_START + 60  # the clock took nothing over

        @pytest.mark.osf(stall_after=6 * 86400, seed=4)
        async def test_the_marker_still_applies_on_top(osf_world):
            assert osf_world.config.stall_after == 6 * 86400
            assert (osf_world.config.seed, osf_world.config.virtual_loop) == (4, True)
            assert isinstance(asyncio.get_running_loop(), VirtualEventLoop)
        """,
    )
    result.assert_outcomes(passed=3)
