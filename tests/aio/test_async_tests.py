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


def test_patch_sleep_in_a_plain_async_test_is_refused_at_set_up(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        import asyncio
        import pytest

        @pytest.mark.osf(patch_sleep=True)
        async def test_would_hang(osf_world):
            await asyncio.sleep(20)

        @pytest.mark.osf()
        async def test_clock_would_hang(osf_clock):
            await asyncio.sleep(20)
        """,
        "-p", "anyio",
    )
    result.stdout.fnmatch_lines(
        [
            "*patch_sleep=True) in an async test: freezegun freezes the monotonic clock*"
            "Add virtual_loop=True*",
            "*osf_clock in an async test*",
        ]
    )
    assert result.ret != 0
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == 0


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


def test_anyio_s_own_loop_on_frozen_time_fails_with_a_message(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        import anyio
        import pytest

        @pytest.fixture
        def anyio_backend():
            return "asyncio"

        @pytest.mark.anyio
        async def test_would_hang(osf_clock):
            await anyio.sleep(20)
        """,
        "-p", "anyio",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*osf_clock holds time still*virtual_loop=True*"])


def test_virtual_loop_misuse_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        import pytest

        @pytest.mark.osf(virtual_loop=True)
        def test_sync(osf_world):
            pass
        """,
    )
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*virtual_loop=True is for async def tests*"])
    result = run(
        pytester,
        """
        import pytest

        @pytest.mark.osf(virtual_loop=True)
        async def test_no_world():
            pass
        """,
    )
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*virtual_loop=True needs the world*"])
