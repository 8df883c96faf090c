"""RealClock: the same scheduler on wall-clock time; stop() from another thread."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from pytest_osfoundry.clock import RealClock, Wait


def test_now_is_wall_time() -> None:
    assert abs(RealClock().now() - time.time()) < 1


def test_events_run_on_wall_time_in_order() -> None:
    clock = RealClock()
    started = time.monotonic()
    seen: list[tuple[str, float]] = []
    done = clock.signal()
    clock.call_later(0.05, lambda: seen.append(("b", time.monotonic() - started)))
    clock.call_later(0.02, lambda: seen.append(("a", time.monotonic() - started)))
    clock.call_later(0.06, done.set)
    clock.run(until=done)
    assert [name for name, _ in seen] == ["a", "b"]
    assert seen[0][1] >= 0.015
    assert seen[1][1] >= 0.045
    assert time.monotonic() - started < 2


def test_a_process_sleeps_and_waits_on_wall_time() -> None:
    clock = RealClock()
    sig = clock.signal()
    out: list[Any] = []

    def proc() -> Any:
        yield 0.02
        out.append((yield Wait(sig, 0.03)))  # times out
        clock.call_later(0.01, sig.set)
        out.append((yield Wait(sig, 5)))  # signalled
        return "done"

    started = time.monotonic()
    p = clock.spawn(proc())
    clock.run(until=p.done)
    assert out == [False, True]
    assert p.done.value == "done"
    assert 0.05 <= time.monotonic() - started < 2


def test_run_until_a_predicate() -> None:
    clock = RealClock()
    box = {"n": 0}
    for i in range(3):
        clock.call_later(0.01 * i, lambda: box.__setitem__("n", box["n"] + 1))
    clock.run(until=lambda: box["n"] == 3)
    assert box["n"] == 3


def test_stop_from_another_thread_ends_run() -> None:
    clock = RealClock()
    ticks: list[float] = []

    def proc() -> Any:
        while True:
            yield 0.01
            ticks.append(clock.now())

    clock.spawn(proc())
    stopper = threading.Timer(0.05, clock.stop)
    started = time.monotonic()
    stopper.start()
    clock.run()  # no `until`: only stop() ends it
    elapsed = time.monotonic() - started
    stopper.join()
    assert 0.04 <= elapsed < 2
    assert len(ticks) >= 2


def test_stop_wakes_a_run_with_nothing_scheduled() -> None:
    clock = RealClock()
    threading.Timer(0.05, clock.stop).start()
    started = time.monotonic()
    clock.run()
    assert time.monotonic() - started < 0.45  # woken, not waiting out its 0.5 s nap


def test_call_at_from_another_thread_wakes_the_runner() -> None:
    clock = RealClock()
    done = clock.signal()
    threading.Timer(0.02, lambda: clock.call_later(0.01, done.set)).start()
    started = time.monotonic()
    clock.run(until=done)
    assert time.monotonic() - started < 0.4


def test_sleep_sleeps_and_refuses_bad_seconds() -> None:
    clock = RealClock()
    started = time.monotonic()
    clock.sleep(0.02)
    assert time.monotonic() - started >= 0.015
    with pytest.raises(ValueError, match="delay"):
        clock.sleep(-1)
    with pytest.raises(TypeError, match="delay"):
        clock.sleep("1")  # type: ignore[arg-type]


def test_bad_arguments_get_the_same_errors_as_the_virtual_clock() -> None:
    clock = RealClock()
    with pytest.raises(ValueError, match="delay"):
        clock.call_later(-1, lambda: None)
    with pytest.raises(TypeError, match="generator"):
        clock.spawn(lambda: None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callable"):
        clock.call_at(clock.now(), None)  # type: ignore[arg-type]


@pytest.mark.parametrize("until", ["soon", 5, [1]])
def test_run_refuses_a_bad_until_before_running_anything(until: Any) -> None:
    clock = RealClock()
    ran: list[bool] = []
    clock.call_later(0, lambda: ran.append(True))
    with pytest.raises(TypeError, match=r"run takes a Signal, a predicate or None, got"):
        clock.run(until=until)
    assert ran == []
