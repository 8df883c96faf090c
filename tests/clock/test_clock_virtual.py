"""VirtualClock: ordering, processes, signals, waits, timers, run_until, bad arguments."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_osfoundry.clock import DEFAULT_START, Process, Signal, VirtualClock, Wait

T0 = DEFAULT_START


def test_it_starts_at_the_default_start_or_where_told() -> None:
    assert VirtualClock().now() == T0 == 1_794_096_000.0
    assert VirtualClock(100).now() == 100.0
    assert VirtualClock(0).now() == 0.0


def test_advance_runs_due_events_in_time_order_and_stops_at_the_target() -> None:
    clock = VirtualClock(0)
    seen: list[tuple[str, float]] = []
    for name, when in [("c", 3), ("a", 1), ("d", 10), ("b", 2)]:

        def note(n: str = name) -> None:
            seen.append((n, clock.now()))

        clock.call_at(when, note)
    assert clock.advance(5) == 5
    assert seen == [("a", 1), ("b", 2), ("c", 3)]
    assert clock.now() == 5
    assert clock.pending == 1
    assert clock.next_due() == 10
    clock.advance(5)
    assert seen[-1] == ("d", 10)
    assert clock.next_due() is None


def test_ties_run_in_scheduling_order_also_when_scheduled_from_an_event() -> None:
    clock = VirtualClock(0)
    seen: list[str] = []

    def first() -> None:
        seen.append("first")
        clock.call_at(4, lambda: seen.append("from-first"))  # same time: after the others

    clock.call_at(4, first)
    clock.call_at(4, lambda: seen.append("second"))
    clock.call_later(4, lambda: seen.append("third"))
    clock.advance(4)
    assert seen == ["first", "second", "third", "from-first"]


def test_an_event_at_a_past_time_runs_at_the_next_move_at_the_current_time() -> None:
    clock = VirtualClock(100)
    times: list[float] = []
    timer = clock.call_at(50, lambda: times.append(clock.now()))
    assert timer.when == 100
    clock.advance(0)
    assert times == [100]


def test_an_event_at_the_target_time_runs() -> None:
    clock = VirtualClock(0)
    seen: list[int] = []
    clock.call_at(5, lambda: seen.append(1))
    clock.advance(5)
    assert seen == [1]


def test_a_cancelled_timer_never_runs() -> None:
    clock = VirtualClock(0)
    seen: list[str] = []
    keep = clock.call_later(1, lambda: seen.append("keep"))
    drop = clock.call_later(1, lambda: seen.append("drop"))
    drop.cancel()
    assert clock.pending == 1
    clock.advance(2)
    assert seen == ["keep"]
    keep.cancel()  # no effect once run
    assert seen == ["keep"]


def test_on_move_listeners_see_every_new_time() -> None:
    clock = VirtualClock(0)
    moves: list[float] = []
    clock.on_move(moves.append)
    clock.call_at(2, lambda: None)
    clock.call_at(2, lambda: None)
    clock.advance(3)
    clock.advance(0)
    assert moves == [2, 3]


def test_advance_nested_inside_an_event_runs_the_nested_events() -> None:
    # What a patched time.sleep does inside code the clock itself runs.
    clock = VirtualClock(0)
    seen: list[tuple[str, float]] = []

    def sleeper() -> None:
        seen.append(("before", clock.now()))
        clock.sleep(5)
        seen.append(("after", clock.now()))

    clock.call_at(1, sleeper)
    clock.call_at(3, lambda: seen.append(("inner", clock.now())))
    clock.advance(10)
    assert seen == [("before", 1), ("inner", 3), ("after", 6)]
    assert clock.now() == 10


def test_processes_sleep_and_return_a_value() -> None:
    clock = VirtualClock(0)
    log: list[tuple[str, float]] = []

    def proc(name: str, step: float) -> Any:
        for _ in range(3):
            yield step
            log.append((name, clock.now()))
        return name.upper()

    a = clock.spawn(proc("a", 2), name="a")
    b = clock.spawn(proc("b", 3), name="b", delay=1)
    assert isinstance(a, Process)
    assert not a.finished
    clock.run_until(b.done)
    # At 4 both wake: b's wake was scheduled at 1, a's at 2, so b goes first.
    assert log == [("a", 2), ("b", 4), ("a", 4), ("a", 6), ("b", 7), ("b", 10)]
    assert a.finished and b.finished
    assert a.done.value == "A" and b.done.value == "B"
    assert clock.now() == 10


def test_start_runs_the_first_step_now_and_spawn_later() -> None:
    clock = VirtualClock(0)
    steps: list[str] = []

    def proc(name: str) -> Any:
        steps.append(name)
        yield 1

    clock.spawn(proc("spawned"))
    clock.start(proc("started"))
    assert steps == ["started"]
    clock.advance(0)
    assert steps == ["started", "spawned"]


def test_a_signal_wakes_every_waiter_once_with_true_and_keeps_its_value() -> None:
    clock = VirtualClock(0)
    sig = clock.signal()
    woke: list[tuple[str, Any, float]] = []

    def waiter(name: str) -> Any:
        got = yield sig
        woke.append((name, got, clock.now()))

    clock.spawn(waiter("x"))
    clock.spawn(waiter("y"))
    clock.call_at(7, lambda: sig.set("payload"))
    clock.call_at(8, lambda: sig.set("ignored"))  # idempotent
    clock.advance(10)
    assert woke == [("x", True, 7), ("y", True, 7)]
    assert sig.is_set and sig.value == "payload"


def test_waiting_on_a_set_signal_resumes_at_once() -> None:
    clock = VirtualClock(0)
    sig = clock.signal()
    sig.set()
    out: list[Any] = []

    def proc() -> Any:
        out.append((yield sig))
        out.append((yield Wait(sig, 5)))
        out.append(clock.now())

    clock.spawn(proc())
    clock.advance(0)
    assert out == [True, True, 0]


def test_wait_resumes_true_when_signalled_and_false_on_timeout() -> None:
    clock = VirtualClock(0)
    early, late = clock.signal(), clock.signal()
    out: list[tuple[bool, float]] = []

    def proc() -> Any:
        out.append(((yield Wait(early, 5)), clock.now()))
        out.append(((yield Wait(late, 5)), clock.now()))
        out.append(((yield Wait(late, 5)), clock.now()))

    clock.spawn(proc())
    clock.call_at(2, early.set)
    clock.call_at(9, late.set)
    clock.advance(20)
    assert out == [(True, 2), (False, 7), (True, 9)]
    # The timeout of the signalled wait was cancelled: nothing fires later.
    assert clock.pending == 0


def test_a_signal_after_a_wait_timed_out_does_not_resume_the_process_twice() -> None:
    clock = VirtualClock(0)
    sig = clock.signal()
    resumed: list[Any] = []

    def proc() -> Any:
        resumed.append((yield Wait(sig, 1)))
        resumed.append((yield 10))

    clock.spawn(proc())
    clock.call_at(2, sig.set)
    clock.advance(20)
    assert resumed == [False, None]


def test_process_cancel_stops_it_and_sets_done() -> None:
    clock = VirtualClock(0)
    ticks: list[float] = []
    closed: list[bool] = []

    def proc() -> Any:
        try:
            while True:
                yield 1
                ticks.append(clock.now())
        finally:
            closed.append(True)

    p = clock.spawn(proc())
    clock.advance(3.5)
    p.cancel()
    assert p.finished and p.done.value is None
    assert closed == [True]
    clock.advance(10)
    assert ticks == [1, 2, 3]
    p.cancel()  # idempotent


def test_process_cancel_while_waiting_on_a_signal() -> None:
    clock = VirtualClock(0)
    sig = clock.signal()
    after: list[bool] = []

    def proc() -> Any:
        yield Wait(sig, 100)
        after.append(True)

    p = clock.spawn(proc())
    clock.advance(1)
    p.cancel()
    sig.set()
    clock.advance(200)
    assert after == []
    assert p.finished


def test_an_exception_in_a_process_propagates_and_is_kept() -> None:
    clock = VirtualClock(0)

    def proc() -> Any:
        yield 1
        raise RuntimeError("boom")

    p = clock.spawn(proc())
    with pytest.raises(RuntimeError, match="boom"):
        clock.advance(2)
    assert isinstance(p.error, RuntimeError)
    assert p.finished


@pytest.mark.parametrize("item", ["soon", None, True, [1], -1, math.nan])
def test_a_process_yielding_something_else_is_a_clear_error(item: Any) -> None:
    clock = VirtualClock(0)

    def proc() -> Any:
        yield item

    clock.spawn(proc(), name="bad-proc")
    with pytest.raises((TypeError, ValueError)) as info:
        clock.advance(1)
    message = str(info.value)
    assert "bad-proc" in message or "delay" in message


def test_run_until_a_time() -> None:
    clock = VirtualClock(0)
    seen: list[float] = []
    clock.call_at(3, lambda: seen.append(clock.now()))
    assert clock.run_until(5) == 5
    assert seen == [3]
    with pytest.raises(ValueError, match="in the past"):
        clock.run_until(4)


def test_run_until_a_predicate_stops_right_after_the_event_that_made_it_true() -> None:
    clock = VirtualClock(0)
    box = {"n": 0}
    for t in range(1, 10):
        clock.call_at(t, lambda: box.__setitem__("n", box["n"] + 1))
    assert clock.run_until(lambda: box["n"] == 4) == 4
    assert clock.pending == 5


def test_run_until_a_signal_and_a_predicate_already_true() -> None:
    clock = VirtualClock(0)
    sig = clock.signal()
    clock.call_at(12.5, sig.set)
    assert clock.run_until(sig) == 12.5
    assert clock.run_until(lambda: True) == 12.5


def test_run_until_raises_timeout_after_the_limit() -> None:
    clock = VirtualClock(0)

    def forever() -> Any:
        while True:
            yield 1

    clock.spawn(forever())
    with pytest.raises(TimeoutError, match="not met after"):
        clock.run_until(lambda: False, limit=30)
    assert clock.now() <= 30


def test_run_until_raises_timeout_when_nothing_is_left_to_run() -> None:
    clock = VirtualClock(0)
    clock.call_at(1, lambda: None)
    with pytest.raises(TimeoutError, match="nothing left to run"):
        clock.run_until(clock.signal())


def test_run_all_runs_everything_and_respects_its_limit() -> None:
    clock = VirtualClock(0)
    clock.call_at(100, lambda: None)
    clock.call_at(5000, lambda: None)
    assert clock.run_all(limit=1000) == 100
    assert clock.run_all() == 5000
    assert clock.pending == 0


def test_events_run_is_counted() -> None:
    clock = VirtualClock(0)
    for t in range(5):
        clock.call_at(t, lambda: None)
    clock.advance(10)
    assert clock.events_run == 5


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("start", [-1, math.nan, "0", None, True])
def test_the_constructor_refuses_a_bad_start(start: Any) -> None:
    with pytest.raises(ValueError, match="start"):
        VirtualClock(start)


@pytest.mark.parametrize(
    ("seconds", "error"),
    [
        (-1, ValueError),
        (math.nan, ValueError),
        (math.inf, ValueError),
        ("1", TypeError),
        (None, TypeError),
        (True, TypeError),
    ],
)
def test_advance_and_sleep_refuse_bad_seconds(seconds: Any, error: type[Exception]) -> None:
    clock = VirtualClock(0)
    with pytest.raises(error):
        clock.advance(seconds)
    with pytest.raises(error):
        clock.sleep(seconds)
    assert clock.now() == 0


@pytest.mark.parametrize(
    ("delay", "error"),
    [
        (-0.001, ValueError),
        (math.nan, ValueError),
        ("5", TypeError),
        (None, TypeError),
        (True, TypeError),
    ],
)
def test_call_later_refuses_bad_delays(delay: Any, error: type[Exception]) -> None:
    clock = VirtualClock(0)
    with pytest.raises(error, match="delay"):
        clock.call_later(delay, lambda: None)
    with pytest.raises(error, match="delay"):
        clock.spawn((x for x in [1]), delay=delay)
    assert clock.pending == 0


@pytest.mark.parametrize(
    ("when", "error"),
    [(math.nan, ValueError), ("10", TypeError), (None, TypeError), (True, TypeError)],
)
def test_call_at_refuses_a_bad_time(when: Any, error: type) -> None:
    clock = VirtualClock(0)
    with pytest.raises(error, match="when must be a"):
        clock.call_at(when, lambda: None)
    assert clock.pending == 0


def test_call_at_refuses_a_non_callable() -> None:
    with pytest.raises(TypeError, match="callable"):
        VirtualClock(0).call_at(1, "not callable")  # type: ignore[arg-type]


@pytest.mark.parametrize("gen", [lambda: None, [1, 2], iter([1, 2]), None])
def test_spawn_and_start_need_a_generator(gen: Any) -> None:
    clock = VirtualClock(0)
    with pytest.raises(TypeError, match="generator"):
        clock.spawn(gen)
    with pytest.raises(TypeError, match="generator"):
        clock.start(gen)


def test_spawn_of_a_generator_function_not_called_names_the_mistake() -> None:
    def proc() -> Any:
        yield 1

    with pytest.raises(TypeError, match="call the generator function"):
        VirtualClock(0).spawn(proc)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("signal", "timeout", "error"),
    [
        ("not a signal", 1, TypeError),
        (None, 1, TypeError),
        ("sig", -1, ValueError),
        ("sig", math.nan, ValueError),
        ("sig", "5", TypeError),
    ],
)
def test_wait_refuses_bad_arguments(signal: Any, timeout: Any, error: type[Exception]) -> None:
    clock = VirtualClock(0)
    sig = clock.signal() if signal == "sig" else signal
    with pytest.raises(error):
        Wait(sig, timeout)


@pytest.mark.parametrize("until", ["soon", None, [1]])
def test_run_until_refuses_a_bad_target(until: Any) -> None:
    with pytest.raises(TypeError, match="run_until takes"):
        VirtualClock(0).run_until(until)


@pytest.mark.parametrize("limit", [-1, math.nan, "10", None])
def test_run_until_and_run_all_refuse_a_bad_limit(limit: Any) -> None:
    clock = VirtualClock(0)
    with pytest.raises((TypeError, ValueError), match="limit"):
        clock.run_until(lambda: False, limit=limit)
    with pytest.raises((TypeError, ValueError), match="limit"):
        clock.run_all(limit=limit)


def test_on_move_refuses_a_non_callable() -> None:
    with pytest.raises(TypeError, match="callable"):
        VirtualClock(0).on_move("listener")  # type: ignore[arg-type]


def test_signal_belongs_to_its_clock() -> None:
    clock = VirtualClock(0)
    assert isinstance(clock.signal(), Signal)
    assert not clock.signal().is_set


@pytest.mark.parametrize("action", ["schedule", "advance", "run_until"])
def test_the_queue_is_only_touched_under_its_lock(action: str) -> None:
    # White box: scheduling and running take the scheduler's lock, so the queue is
    # never pushed and popped at once from two threads, GIL or no GIL. While this
    # thread holds the lock, the other thread's call must wait for it.
    import threading

    clock = VirtualClock(0)
    clock.call_at(1, lambda: None)
    calls = {
        "schedule": lambda: clock.call_later(1, lambda: None),
        "advance": lambda: clock.advance(5),
        "run_until": lambda: clock.run_until(lambda: clock.pending == 0, limit=10),
    }
    done = threading.Event()

    def other() -> None:
        calls[action]()
        done.set()

    worker = threading.Thread(target=other)
    with clock._lock:
        worker.start()
        assert not done.wait(0.2), "the queue was touched without its lock"
    assert done.wait(10)
    worker.join()
