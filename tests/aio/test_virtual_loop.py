"""VirtualEventLoop: loop timers and clock events in one order, on the kit's clock."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable

import anyio
import pytest

from pytest_osfoundry import aio
from pytest_osfoundry.clock import DEFAULT_START, RealClock, VirtualClock


def test_a_sleep_moves_the_virtual_clock_exactly() -> None:
    clock = VirtualClock()

    async def main() -> float:
        await asyncio.sleep(100)
        await anyio.sleep(50)
        return clock.now()

    assert aio.run(main(), clock) == DEFAULT_START + 150


def test_loop_time_counts_virtual_seconds_from_the_loop_s_origin() -> None:
    clock = VirtualClock()
    clock.advance(5)

    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        first = loop.time()
        await asyncio.sleep(7)
        return first, loop.time()

    assert aio.run(main(), clock) == (0.0, 7.0)


def test_clock_events_and_loop_timers_run_in_time_order_clock_first_on_a_tie() -> None:
    clock = VirtualClock()
    seen: list[tuple[str, float]] = []

    def note(name: str) -> Callable[[], None]:
        return lambda: seen.append((name, clock.now() - DEFAULT_START))

    clock.call_later(5, note("clock-5"))
    clock.call_later(10, note("clock-10"))
    clock.call_later(25, note("clock-25"))

    async def sleeper(name: str, *delays: float) -> None:
        for delay in delays:
            await asyncio.sleep(delay)
            seen.append((name, clock.now() - DEFAULT_START))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(sleeper, "loop-a", 7, 3)  # at 7 and 10
            tg.start_soon(sleeper, "loop-b", 20)

    aio.run(main(), clock)
    assert seen == [
        ("clock-5", 5),
        ("loop-a", 7),
        ("clock-10", 10),
        ("loop-a", 10),
        ("loop-b", 20),
    ]
    assert clock.next_due() == DEFAULT_START + 25  # nothing ran past the last task


def test_anyio_timeouts_fire_on_virtual_time() -> None:
    clock = VirtualClock()

    async def main() -> float:
        with pytest.raises(TimeoutError):
            with anyio.fail_after(30):
                await anyio.sleep(3600)
        return clock.now() - DEFAULT_START

    assert aio.run(main(), clock) == 30


def test_sub_resolution_sleeps_still_end() -> None:
    # At epoch magnitudes one float step of the clock is ~2e-7 s: each tiny sleep must
    # still move it (a loop that did not would spin for ever on a timer never due).
    clock = VirtualClock()

    async def main() -> int:
        for _ in range(200):
            await asyncio.sleep(1e-9)
        return 200

    assert aio.run(main(), clock) == 200
    assert clock.now() > DEFAULT_START


def test_every_task_waiting_on_nothing_fails_with_a_message_not_a_hang() -> None:
    clock = VirtualClock()

    async def main() -> None:
        await asyncio.Event().wait()  # nobody sets it

    with pytest.raises(aio.VirtualLoopStalled, match="deadlock"):
        aio.run(main(), clock, stall_timeout=0.2)


@pytest.fixture
def frozen_wall(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wall time stands still for the loop's stall bound: only the virtual bound can end a
    stretch of clock events, whatever the machine's load (the final wait for I/O still
    takes ``stall_timeout`` of real time)."""
    monkeypatch.setattr(aio, "real_monotonic", lambda: 0.0)


def every(clock: VirtualClock, seconds: float) -> None:
    """A background process on the clock, for ever (as the relay's passes are)."""

    def tick() -> None:
        clock.call_later(seconds, tick)

    clock.call_later(seconds, tick)


def test_a_stall_fails_after_stall_after_virtual_seconds_whatever_keeps_ticking(
    frozen_wall: None,
) -> None:
    clock = VirtualClock()
    every(clock, 20)

    async def test_waits_for_nobody() -> None:
        await asyncio.Event().wait()  # nobody sets it; the ticks never will

    with pytest.raises(aio.VirtualLoopStalled) as info:
        aio.run(test_waits_for_nobody(), clock, stall_after=100, stall_timeout=0.2)
    assert clock.now() == DEFAULT_START + 100  # the ticks up to the limit ran, no more
    message = str(info.value)
    assert "waited 100 virtual seconds (stall_after)" in message
    assert "the loop has no timer" in message
    assert "test_waits_for_nobody (test_virtual_loop.py:" in message
    assert "Event.wait (locks.py:" in message and "<Future pending" in message
    assert "raise the limit: stall_after (virtual seconds) or stall_timeout" in message


def test_the_wall_bound_reads_real_time_while_freezegun_follows_the_clock() -> None:
    from datetime import datetime, timezone

    from freezegun import freeze_time

    clock = VirtualClock()
    every(clock, 20)

    async def main() -> None:
        await asyncio.Event().wait()

    # What osf_clock does: time.monotonic frozen, moved with the clock (20 s a tick).
    with freeze_time(datetime.fromtimestamp(clock.now(), timezone.utc)) as frozen:
        clock.on_move(lambda t: frozen.move_to(datetime.fromtimestamp(t, timezone.utc)))
        with pytest.raises(aio.VirtualLoopStalled, match=r"waited 3600 virtual seconds"):
            aio.run(main(), clock, stall_after=3600, stall_timeout=0.5)
    assert clock.now() == DEFAULT_START + 3600


def test_a_stall_fails_after_stall_timeout_wall_seconds_whatever_the_clock_runs() -> None:
    clock = VirtualClock()
    every(clock, 1e-3)  # a background so dense that a virtual day would take hours

    async def main() -> None:
        await asyncio.Event().wait()

    with pytest.raises(aio.VirtualLoopStalled, match=r"0.2 s of wall time \(stall_timeout\)"):
        aio.run(main(), clock, stall_after=1e9, stall_timeout=0.2)


def test_a_timer_beyond_stall_after_is_a_stall_and_a_larger_limit_lets_it_run(
    frozen_wall: None,
) -> None:
    clock = VirtualClock()
    every(clock, 20)

    async def three_hours() -> float:
        await asyncio.sleep(3 * 3600)
        return clock.now() - DEFAULT_START

    with pytest.raises(aio.VirtualLoopStalled, match="next timer is due in 7200 virtual seconds"):
        aio.run(three_hours(), clock, stall_after=3600, stall_timeout=0.2)
    clock = VirtualClock()
    every(clock, 20)
    assert aio.run(three_hours(), clock, stall_after=4 * 3600) == 3 * 3600
    clock = VirtualClock()
    every(clock, 20)
    assert aio.run(three_hours(), clock) == 3 * 3600  # within the default day


def test_a_wait_a_clock_event_completes_is_no_stall_and_polls_are_progress() -> None:
    clock = VirtualClock()
    every(clock, 20)

    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[float] = loop.create_future()
        # Something on the clock (say, a relay's delivery) completes the test's wait.
        clock.call_later(3000, lambda: woken.set_result(clock.now() - DEFAULT_START))
        at = await woken
        for _ in range(200):  # an agent polling every 60 s: 200 minutes, each poll its own
            await asyncio.sleep(60)
        return at, clock.now() - DEFAULT_START

    assert aio.run(main(), clock, stall_after=3600) == (3000, 3000 + 200 * 60)


def test_stall_after_must_be_a_positive_finite_number_of_seconds() -> None:
    for bad in (0, -1, math.inf, math.nan, "1"):
        with pytest.raises(ValueError, match="stall_after"):
            aio.loop_factory(VirtualClock(), stall_after=bad)  # type: ignore[arg-type]


def test_an_executor_job_holds_the_clock_until_it_is_done() -> None:
    clock = VirtualClock()

    def tick() -> None:  # a relay-like event every 20 s, for ever
        clock.call_later(20, tick)

    tick()

    def slow() -> float:
        time.sleep(0.1)
        return clock.now()

    async def main() -> tuple[float, float]:
        seen = await asyncio.to_thread(slow)
        return seen, clock.now()

    assert aio.run(main(), clock) == (DEFAULT_START, DEFAULT_START)
    assert clock.now() == DEFAULT_START  # nor did the clean-up after it


def test_a_held_loop_never_moves_the_clock() -> None:
    clock = VirtualClock()
    clock.call_later(1, lambda: None)
    loop = aio.VirtualEventLoop(clock, stall_timeout=0.1)
    try:
        loop.hold_time()
        with pytest.raises(aio.VirtualLoopStalled, match="time is held"):
            loop.run_until_complete(asyncio.sleep(5))
    finally:
        loop.close()
    assert clock.now() == DEFAULT_START


def test_real_io_from_a_thread_still_wakes_the_loop() -> None:
    clock = VirtualClock()

    async def main() -> str:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()

        def later() -> None:
            time.sleep(0.05)
            loop.call_soon_threadsafe(future.set_result, "from a thread")

        threading.Thread(target=later).start()
        answer = await future
        return answer + " " + await asyncio.to_thread(lambda: "and an executor")

    assert aio.run(main(), clock) == "from a thread and an executor"


def test_the_python_3_10_runner_runs_and_cleans_up() -> None:
    clock = VirtualClock()
    leftovers: list[str] = []

    async def forever() -> None:
        try:
            await asyncio.sleep(1e9)
        except asyncio.CancelledError:
            leftovers.append("cancelled")
            raise

    async def main() -> float:
        asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(3)
        return clock.now() - DEFAULT_START

    assert aio._run_310(main(), aio.loop_factory(clock)) == 3
    assert leftovers == ["cancelled"]


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(TypeError, match="VirtualClock"):
        aio.VirtualEventLoop(RealClock())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="VirtualClock"):
        aio.loop_factory(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stall_timeout"):
        aio.loop_factory(VirtualClock(), stall_timeout=-1)
    with pytest.raises(TypeError, match="coroutine"):
        aio.run(lambda: None, VirtualClock())  # type: ignore[arg-type]


def test_run_refuses_a_running_loop() -> None:
    clock = VirtualClock()

    async def inner() -> None:
        return None

    async def outer() -> None:
        coro = inner()
        try:
            with pytest.raises(RuntimeError, match="running event loop"):
                aio.run(coro, clock)
        finally:
            coro.close()

    aio.run(outer(), clock)


def test_loop_factory_makes_a_fresh_virtual_loop_each_call() -> None:
    clock = VirtualClock()
    factory = aio.loop_factory(clock)
    one, two = factory(), factory()
    try:
        assert one is not two
        assert isinstance(one, aio.VirtualEventLoop) and one.clock is clock
        assert "VirtualClock" in repr(factory)
    finally:
        one.close()
        two.close()
