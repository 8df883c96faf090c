"""EngineRun.suspend/resume: the desktop asleep, its Graph standing still until it wakes."""

from __future__ import annotations

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.engine import FakeEngine, Graph, RunOutcome

GS = "gs_" + "b" * 32
CHANNEL = "graph:external:6f1c1d7e-0000-4000-8000-000000000002"


def make(graph: Graph, stop_latency: float = 0.0) -> tuple[VirtualClock, FakeEngine]:
    clock = VirtualClock()
    return clock, FakeEngine(clock, {GS: graph}, stop_latency=stop_latency)


def test_a_suspended_run_stands_still_and_ends_as_much_later_as_it_slept() -> None:
    clock, engine = make(Graph(duration=30, waves=(100, 200, 300), reported_cost=6.0))
    run = engine.start(GS, {}, CHANNEL)
    t0 = run.started_at
    clock.advance(5)
    run.suspend()
    clock.advance(1000)
    assert run.outcome is None
    assert run.tokens_spent == 100  # wave 2 (due 10 s into the run) has not started
    run.resume()
    assert run.finishes_at == t0 + 1030
    clock.advance(4.9)
    assert run.tokens_spent == 100
    clock.advance(0.1)
    assert run.tokens_spent == 300  # 10 s of running: wave 2 starts
    clock.run_until(run.done)
    assert run.ended_at == t0 + 1030
    assert run.done.value == RunOutcome("completed", None, 600, 6.0)


def test_suspend_and_resume_twice_or_out_of_turn_change_nothing_more() -> None:
    clock, engine = make(Graph(duration=30))
    run = engine.start(GS, {}, CHANNEL)
    run.resume()  # not suspended: nothing
    clock.advance(10)
    run.suspend()
    clock.advance(10)
    run.suspend()  # already suspended: the sleep still counts from the first
    clock.advance(10)
    run.resume()
    run.resume()
    clock.run_until(run.done)
    assert run.ended_at == run.started_at + 50
    run.suspend()  # ended: nothing
    assert run.outcome is not None and run.outcome.status == "completed"


def test_a_stop_asked_for_before_or_during_the_sleep_waits_for_the_wake() -> None:
    clock, engine = make(Graph(duration=60, total_tokens=600), stop_latency=0.5)
    before = engine.start(GS, {}, CHANNEL)
    during = engine.start(GS, {}, CHANNEL)
    clock.advance(10)
    before.cancel()  # it would stop at 10.5
    clock.advance(0.2)
    before.suspend()
    during.suspend()
    during.cancel()
    clock.advance(100)
    assert before.outcome is None and during.outcome is None
    before.resume()
    during.resume()
    clock.advance(0.29)
    assert before.outcome is None
    clock.advance(0.01)
    assert before.ended_at == before.started_at + 110.5  # the 0.3 s it had left
    assert before.outcome == RunOutcome("cancelled", None, 105, 0.0)  # 10.5 s of 60 ran
    clock.advance(0.2)
    assert during.ended_at == during.started_at + 110.7  # its full 0.5 s, from the wake


def test_a_stop_without_latency_asked_for_while_asleep_ends_the_run_at_the_wake() -> None:
    clock, engine = make(Graph(duration=60))
    run = engine.start(GS, {}, CHANNEL)
    run.suspend()
    run.cancel()
    clock.advance(30)
    assert run.outcome is None
    run.resume()
    assert run.outcome is not None and run.outcome.status == "cancelled"
    assert run.ended_at == run.started_at + 30
