"""Changing a model parameter moves the results the way it must.

Runs are smaller than the seed's (the direction and size of an effect is clear at a
few hundred runs); every comparison uses the same master seed, so the runs being
compared share their random draws.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pytest_osfoundry.sim import SimParams, simulate
from pytest_osfoundry.sim._experiments import run_task
from pytest_osfoundry.sim._params import DEFAULT_RUNS
from pytest_osfoundry.sim._tasks import Task


def every_7(attempt: int, elapsed: float) -> float:
    """A user-supplied strategy, named on the command line as ``module:every_7``."""
    return 7.0


def _run(names: list[str], **changes: Any) -> dict[str, Any]:
    return simulate(names, SimParams(**changes), jobs=1).experiments


def test_a_30_s_relay_interval_gives_a_15_s_mean_pickup_wait() -> None:
    pickup = _run(["pickup"], runs=1000, poll_interval=30)["pickup"]
    assert pickup["mean"] == pytest.approx(15.0, rel=0.10)
    assert pickup["max"] <= 30.0 + 1e-6
    assert pickup["max"] > 28.0


def test_a_5_s_relay_interval_cuts_pickup_and_lateness() -> None:
    base = _run(["pickup", "polling"], runs=300)
    fast = _run(["pickup", "polling"], runs=300, poll_interval=5)
    assert fast["pickup"]["mean"] == pytest.approx(2.5, rel=0.15)
    for slow_row, fast_row in zip(base["polling"], fast["polling"], strict=True):
        # The run is picked up sooner, so every strategy needs fewer calls.
        assert fast_row["calls_mean"] < slow_row["calls_mean"]


def test_a_faster_control_poll_makes_running_cancels_terminal_sooner() -> None:
    base = _run(["cancel"], runs=400)["cancel"]
    fast = _run(["cancel"], runs=400, control_poll=1.0)["cancel"]
    # terminal after = the control poll's phase, U(0, control_poll), + the 0.5 s stop
    assert fast["running_terminal_after_mean"] == pytest.approx(1.0, rel=0.15)
    assert fast["running_terminal_after_max"] <= 1.5 + 1e-6
    assert base["running_terminal_after_mean"] == pytest.approx(2.0, rel=0.10)


def test_stop_latency_is_added_to_running_cancels() -> None:
    slow = _run(["cancel"], runs=300, stop_latency=2.0)["cancel"]
    assert slow["running_terminal_after_max"] <= 5.0 + 1e-6
    assert slow["running_terminal_after_mean"] == pytest.approx(3.5, rel=0.10)


def test_duration_median_and_sigma_move_the_fanout_table() -> None:
    params = SimParams(runs=200, fanout=(1, 3))
    base = simulate(["fanout"], params, jobs=1).experiments["fanout"]
    short = simulate(["fanout"], replace(params, duration_median=30), jobs=1).experiments["fanout"]
    wide = simulate(["fanout"], replace(params, duration_sigma=1.2), jobs=1).experiments["fanout"]
    for b, s, w in zip(base, short, wide, strict=True):
        assert s["last_median"] < b["last_median"]
        assert w["last_p95"] > b["last_p95"]
    # median 30 s: one run's result about pickup (10 s) + 30 s
    assert short[0]["last_median"] == pytest.approx(40.0, rel=0.15)


def test_a_user_strategy_by_module_and_function() -> None:
    spec = f"{__name__}:every_7"
    rows = _run(["polling"], runs=200, strategies=("every 5 s", spec))["polling"]
    assert [r["strategy"] for r in rows] == ["every 5 s", f"{__name__}:every_7"]
    five, seven = rows
    assert seven["calls_mean"] < five["calls_mean"]
    assert seven["late_mean"] > five["late_mean"]
    assert seven["late_p95"] <= 7.0 + 1e-6


def test_more_dropped_replies_mean_more_calls_but_never_more_runs_with_the_same_key() -> None:
    base = _run(["idempotency"], runs=100)["idempotency"]
    lossy = _run(["idempotency"], runs=100, drop_replies=0.6)["idempotency"]
    assert sum(lossy[0]["calls"]) > sum(base[0]["calls"])
    assert lossy[1]["runs_queued"] == [100, 100, 100]
    assert lossy[0]["runs_queued"] == lossy[0]["calls"]


def test_a_longer_outage_keeps_everything_queued() -> None:
    out = _run(["offline"], offline_seconds=3600)["offline"]
    assert out["offline_seconds"] == 3600
    assert out["executed_while_offline"] == 0
    assert out["statuses_while_offline"] == ["queued"]
    assert out["statuses_after"] == ["completed"]


def test_results_do_not_depend_on_jobs() -> None:
    params = SimParams(runs=120, fanout=(1, 3))
    one = simulate(["cancel", "fanout", "idempotency", "access"], params, jobs=1)
    two = simulate(["cancel", "fanout", "idempotency", "access"], params, jobs=2)
    assert one.experiments == two.experiments
    assert two.jobs == 2 and one.events == two.events


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-06-18", "auto"])
def test_results_do_not_depend_on_the_agents_mcp_revision(protocol: str) -> None:
    # The sim's agents speak 2025-11-25 by default for speed (SimParams.protocol):
    # that is only sound while every figure is the same in every revision.
    names = ["pickup", "polling", "cancel", "idempotency", "offline", "access"]
    default = simulate(names, SimParams(runs=40), jobs=1)
    other = simulate(names, SimParams(runs=40, protocol=protocol), jobs=1)
    assert default.experiments == other.experiments
    assert default.events == other.events


def test_an_unknown_revision_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="protocol must be one of auto, 2026-07-28"):
        SimParams(protocol="2024-11-05")


def test_watchers_never_move_a_baseline_run() -> None:
    # Fan-out's single runs are read off the baseline runs whether or not the
    # strategies watch them: their polls must not change when a run starts or ends.
    params = SimParams(runs=40)
    for index in (0, 1):
        alone = run_task((params, Task("baseline", index, 40, 0))).data
        watched = run_task((params, Task("baseline", index, 40, 1))).data
        assert alone["calls"] == [] and len(watched["calls"]) == len(params.strategies)
        assert watched["pickup"] == alone["pickup"]
        assert watched["finished"] == alone["finished"]
        assert len(alone["finished"]) == 40
        assert all(f > p for f, p in zip(alone["finished"], alone["pickup"], strict=True))


def test_the_single_run_row_does_not_depend_on_what_else_runs() -> None:
    params = SimParams(runs=60, fanout=(1, 3))
    alone = simulate(["fanout"], params, jobs=1).experiments["fanout"]
    every = simulate(None, params, jobs=2).experiments
    assert every["fanout"] == alone
    assert [r["n"] for r in alone] == [60, 20]
    assert alone[0]["first_median"] == alone[0]["last_median"]


@pytest.mark.parametrize(("pickup", "fanout"), [(90, 50), (50, 90), (300, 260)])
def test_the_single_run_row_reads_the_first_baseline_runs(
    monkeypatch: pytest.MonkeyPatch, pickup: int, fanout: int
) -> None:
    # Unequal run counts (the seed's are 2,000 and 1,500): the baseline covers the
    # larger, each experiment reads its own count off the front, in task order.
    monkeypatch.setitem(DEFAULT_RUNS, "pickup", pickup)
    monkeypatch.setitem(DEFAULT_RUNS, "fanout", fanout)
    params = SimParams(fanout=(1,))
    alone = simulate(["fanout"], params, jobs=1).experiments
    both = simulate(["pickup", "fanout"], params, jobs=1).experiments
    assert both["fanout"] == alone["fanout"]
    assert alone["fanout"][0]["n"] == fanout
    assert both["pickup"]["n"] == pickup


def test_the_seed_changes_the_draws_but_not_the_shape() -> None:
    a = _run(["cancel"], runs=200, seed=1)["cancel"]
    b = _run(["cancel"], runs=200, seed=2)["cancel"]
    assert a != b
    assert a.keys() == b.keys()
    assert a["n"] == b["n"] == 200
