"""FakeEngine on the VirtualClock: runs end on time, cancel once, waves and the ceiling."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_osfoundry.clock import ProcessGen, VirtualClock
from pytest_osfoundry.engine import (
    FakeEngine,
    Fixed,
    Graph,
    GraphNotFound,
    LogNormal,
    ResultText,
    RunNotFound,
    RunOutcome,
    Uniform,
)

GS = "gs_" + "a" * 32
CHANNEL = "graph:external:6f1c1d7e-0000-4000-8000-000000000001"


def make(
    graph: Graph, *, seed: int | None = 0, stop_latency: float = 0.0
) -> tuple[VirtualClock, FakeEngine]:
    clock = VirtualClock()
    return clock, FakeEngine(clock, {GS: graph}, seed=seed, stop_latency=stop_latency)


def test_a_run_completes_after_its_duration() -> None:
    clock, engine = make(
        Graph(duration=30, result={"ok": True}, total_tokens=120, reported_cost=0.5)
    )
    t0 = clock.now()
    run = engine.start(GS, {"q": 1}, CHANNEL)
    assert re.fullmatch(r"fleet-[0-9a-f]{12}", run.run_id)
    assert (run.channel, run.graph_session_id, run.arguments) == (CHANNEL, GS, {"q": 1})
    assert (run.started_at, run.finishes_at, run.duration) == (t0, t0 + 30, 30.0)
    assert run.running and run.outcome is None and not run.done.is_set
    clock.advance(29.999)
    assert run.outcome is None
    assert run.tokens_spent == 119  # pro rata by elapsed time, floored
    clock.run_until(t0 + 30)
    assert run.done.is_set
    assert run.outcome == RunOutcome("completed", {"ok": True}, 120, 0.5, None)
    assert run.done.value is run.outcome
    assert run.ended_at == t0 + 30
    assert not run.running
    assert engine.active == []


def test_a_process_can_wait_on_done() -> None:
    clock, engine = make(Graph(duration=Fixed(12)))
    run = engine.start(GS, {}, CHANNEL)
    seen: list[float] = []

    def waiter() -> ProcessGen:
        yield run.done
        seen.append(clock.now())

    clock.spawn(waiter())
    clock.run_all()
    assert seen == [run.started_at + 12]


def test_an_error_graph_fails_with_its_error_and_all_its_tokens() -> None:
    clock, engine = make(Graph(duration=10, error="tool denied", total_tokens=7, reported_cost=1.0))
    run = engine.start(GS, {}, CHANNEL)
    clock.run_until(run.done)
    assert run.outcome == RunOutcome("failed", None, 7, 1.0, "tool denied")


def test_result_text_is_delivered_whole() -> None:
    clock, engine = make(Graph(duration=1, result=ResultText(99_899, "japanese")))
    run = engine.start(GS, {}, CHANNEL)
    clock.run_all()
    assert run.outcome is not None
    assert len(run.outcome.result) == 99_899
    assert run.outcome.result.startswith("日本語日")


def test_cancel_stops_the_run_now_and_keeps_tokens_pro_rata() -> None:
    clock, engine = make(Graph(duration=40, result="r", total_tokens=1000, reported_cost=2.0))
    run = engine.start(GS, {}, CHANNEL)
    clock.advance(10)
    run.cancel()
    assert run.done.is_set
    assert run.outcome == RunOutcome("cancelled", None, 250, 0.5, None)
    assert run.ended_at == run.started_at + 10
    assert engine.cancel_calls == [run.run_id]
    assert clock.pending == 0  # the scheduled end was withdrawn
    clock.advance(100)
    assert run.outcome.status == "cancelled"


def test_cancel_after_the_end_changes_nothing_but_is_recorded() -> None:
    clock, engine = make(Graph(duration=5, result="r"))
    run = engine.start(GS, {}, CHANNEL)
    clock.advance(5)
    finished = run.outcome
    run.cancel()
    engine.cancel_run(run.run_id)
    assert run.outcome is finished
    assert finished is not None and finished.status == "completed"
    assert engine.cancel_calls == [run.run_id, run.run_id]


def test_cancel_run_by_id_and_unknown_ids() -> None:
    _, engine = make(Graph(duration=5))
    run = engine.start(GS, {}, CHANNEL)
    engine.cancel_run(run.run_id)
    assert run.outcome is not None and run.outcome.status == "cancelled"
    assert engine.run(run.run_id) is run
    with pytest.raises(RunNotFound, match="no fleet run 'fleet-000000000000'"):
        engine.cancel_run("fleet-000000000000")
    assert engine.cancel_calls == [run.run_id]


def test_waves_spend_as_they_start() -> None:
    clock, engine = make(Graph(duration=30, waves=(100, 200, 300), reported_cost=6.0))
    run = engine.start(GS, {}, CHANNEL)
    assert run.tokens_spent == 100
    clock.advance(9.9)
    assert run.tokens_spent == 100
    clock.advance(0.1)
    assert run.tokens_spent == 300
    clock.advance(10)
    assert run.tokens_spent == 600
    clock.advance(10)
    assert run.outcome == RunOutcome("completed", None, 600, 6.0, None)


def test_cancel_keeps_the_waves_already_started() -> None:
    clock, engine = make(Graph(duration=30, waves=(100, 200, 300), reported_cost=6.0))
    run = engine.start(GS, {}, CHANNEL)
    clock.advance(15)
    run.cancel()
    assert run.outcome == RunOutcome("cancelled", None, 300, 3.0, None)


def test_the_ceiling_refuses_the_next_wave() -> None:
    graph = Graph(duration=40, waves=(400, 400, 400, 400), token_ceiling=700, reported_cost=8.0)
    clock, engine = make(graph)
    run = engine.start(GS, {}, CHANNEL)
    # 400 spent (< 700): wave 2 runs; 800 spent (>= 700): wave 3 is refused at t=20.
    assert run.finishes_at == run.started_at + 20
    clock.advance(19.99)
    assert run.outcome is None
    clock.run_until(run.started_at + 20)
    assert run.outcome == RunOutcome(
        "failed", None, 800, 4.0, "token ceiling of 700 reached; wave 3 refused"
    )


def test_a_ceiling_reached_exactly_refuses_the_next_wave() -> None:
    clock, engine = make(Graph(duration=20, waves=(500, 500), token_ceiling=500, result="r"))
    run = engine.start(GS, {}, CHANNEL)
    clock.run_all()
    assert run.outcome is not None
    assert (run.outcome.status, run.outcome.total_tokens) == ("failed", 500)
    assert run.outcome.error == "token ceiling of 500 reached; wave 2 refused"
    assert run.ended_at == run.started_at + 10


def test_a_ceiling_never_reached_lets_the_run_complete() -> None:
    clock, engine = make(Graph(duration=20, waves=(10, 10), token_ceiling=500, result="r"))
    run = engine.start(GS, {}, CHANNEL)
    clock.run_all()
    assert run.outcome == RunOutcome("completed", "r", 20, 0.0, None)


def test_a_zero_ceiling_refuses_the_first_wave_at_once() -> None:
    clock, engine = make(Graph(duration=20, waves=(10,), token_ceiling=0))
    run = engine.start(GS, {}, CHANNEL)
    assert run.finishes_at == run.started_at
    clock.advance(0)
    assert run.outcome == RunOutcome(
        "failed", None, 0, 0.0, "token ceiling of 0 reached; wave 1 refused"
    )


def test_default_graph_and_missing_graphs() -> None:
    clock = VirtualClock()
    engine = FakeEngine(clock, default=Graph(duration=1, result="default"))
    run = engine.start("gs_" + "b" * 32, {}, CHANNEL)
    clock.run_all()
    assert run.outcome is not None and run.outcome.result == "default"
    bare = FakeEngine(clock, {GS: Graph()})
    with pytest.raises(GraphNotFound) as info:
        bare.start("gs_" + "c" * 32, {}, CHANNEL)
    assert str(info.value) == (
        f"no Graph registered for graph session {'gs_' + 'c' * 32!r} and no default (known: {GS})"
    )
    assert isinstance(info.value, KeyError)
    assert bare.runs == []


def test_nothing_started_means_nothing_executed() -> None:
    clock, engine = make(Graph())
    clock.advance(600)
    assert engine.runs == []
    assert engine.cancel_calls == []


def test_runs_are_listed_in_order_and_ids_are_unique() -> None:
    clock, engine = make(Graph(duration=Uniform(1, 100)))
    runs = [engine.start(GS, {"i": i}, f"{CHANNEL}-{i}") for i in range(200)]
    assert engine.runs == runs
    assert len({run.run_id for run in runs}) == 200
    assert engine.active == runs
    clock.run_all()
    assert engine.active == []


def _trace(seed: int | None) -> list[tuple[str, float]]:
    _, engine = make(Graph(duration=LogNormal(sigma=1.0)), seed=seed)
    runs = [engine.start(GS, {}, CHANNEL) for _ in range(20)]
    return [(run.run_id, run.duration) for run in runs]


def test_runs_are_deterministic_under_a_seed() -> None:
    assert _trace(7) == _trace(7)
    assert _trace(7) != _trace(8)
    assert _trace(None) != _trace(None)


def test_many_runs_stay_lean() -> None:
    clock, engine = make(Graph(duration=LogNormal(sigma=1.0), result="ok", total_tokens=3))
    for _ in range(20_000):
        engine.start(GS, {}, CHANNEL)
    clock.run_all()
    assert clock.events_run == 20_000  # one event per run, nothing else
    assert all(run.outcome is not None for run in engine.runs)
    durations = sorted(run.duration for run in engine.runs)
    assert durations[0] >= 5.0
    assert 55 < durations[len(durations) // 2] < 65


@pytest.mark.parametrize(
    ("args", "error", "fragment"),
    [
        (("", {}, CHANNEL), TypeError, "graph_session_id must be a non-empty str"),
        ((GS, [], CHANNEL), TypeError, "arguments must be a dict"),
        ((GS, {"x": {1, 2}}, CHANNEL), TypeError, "arguments.x is a set"),
        ((GS, {}, ""), TypeError, "channel must be a non-empty str"),
        ((GS, {}, None), TypeError, "channel must be a non-empty str"),
    ],
)
def test_bad_start_arguments(args: tuple[Any, ...], error: type, fragment: str) -> None:
    _, engine = make(Graph())
    with pytest.raises(error) as info:
        engine.start(*args)
    assert fragment in str(info.value)
    assert engine.runs == []


@pytest.mark.parametrize(
    ("args", "kwargs", "fragment"),
    [
        ((object(),), {}, "clock must provide the Clock methods"),
        ((VirtualClock(), [Graph()]), {}, "graphs must be a mapping"),
        ((VirtualClock(), {GS: "graph"}), {}, "must be a Graph"),
        ((VirtualClock(), {"": Graph()}), {}, "a graphs key must be a non-empty str"),
        ((VirtualClock(),), {"default": {}}, "default must be a Graph or None"),
        ((VirtualClock(),), {"seed": "7"}, "seed must be an int"),
        ((VirtualClock(),), {"seed": True}, "seed must be an int"),
    ],
)
def test_bad_engine_arguments(args: tuple[Any, ...], kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(TypeError) as info:
        FakeEngine(*args, **kwargs)
    assert fragment in str(info.value)


def test_outcome_status_is_checked() -> None:
    with pytest.raises(ValueError, match=r"RunOutcome\.status must be one of"):
        RunOutcome("running")


def test_cancel_stops_after_the_stop_latency() -> None:
    clock, engine = make(Graph(duration=40, result="r", total_tokens=1000), stop_latency=0.5)
    run = engine.start(GS, {}, CHANNEL)
    clock.advance(10)
    run.cancel()
    assert not run.done.is_set
    clock.advance(0.5)
    assert run.done.is_set and run.outcome is not None
    assert run.outcome.status == "cancelled"
    assert run.ended_at == clock.now()


def test_natural_end_inside_the_stop_latency_stands() -> None:
    clock, engine = make(Graph(duration=10, result="r"), stop_latency=0.5)
    run = engine.start(GS, {}, CHANNEL)
    clock.advance(9.8)
    run.cancel()
    clock.advance(1)
    assert run.outcome is not None and run.outcome.status == "completed"
    assert engine.cancel_calls == [run.run_id]


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (-1, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (True, TypeError),
        ("0.5", TypeError),
    ],
)
def test_stop_latency_must_be_a_non_negative_number(bad: object, error: type) -> None:
    with pytest.raises(error, match="stop_latency must be a"):
        FakeEngine(VirtualClock(), stop_latency=bad)  # type: ignore[arg-type]
