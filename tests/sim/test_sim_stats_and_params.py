"""The statistics helpers and parameter validation of ``pytest_osfoundry.sim``."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from pytest_osfoundry.sim import SimParams
from pytest_osfoundry.sim._fit import fanout_loss, fit_sigma
from pytest_osfoundry.sim._report import compare
from pytest_osfoundry.sim._stats import interpolated, mean, median, summary
from pytest_osfoundry.sim._tasks import derive_seed


def test_percentile_interpolates_linearly() -> None:
    sample = [1, 2, 3, 4]
    assert interpolated(sample, 0) == 1
    assert interpolated(sample, 100) == 4
    assert median(sample) == 2.5
    assert interpolated(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert interpolated([7], 95) == 7
    assert mean([1, 2, 3, 6]) == 3


def test_summary_has_the_pickup_shape() -> None:
    assert summary([0.0, 10.0, 20.0]) == {
        "n": 3,
        "mean": 10.0,
        "median": 10.0,
        "p95": 19.0,
        "max": 20.0,
    }


@pytest.mark.parametrize("fn", [mean, median, summary])
def test_empty_samples_are_refused(fn: Any) -> None:
    with pytest.raises(ValueError, match="empty sample"):
        fn([])


def test_bad_percentiles_are_refused() -> None:
    with pytest.raises(ValueError, match="from 0 to 100"):
        interpolated([1.0], 101)
    with pytest.raises(ValueError, match="NaN"):
        mean([float("nan")])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"runs": 0}, "runs must be a positive int"),
        ({"seed": 1.5}, "seed must be an int"),
        ({"poll_interval": -1}, "poll_interval"),
        ({"control_poll": 0}, "control_poll"),
        ({"duration_sigma": 21}, "at most 20"),
        ({"drop_replies": 1.0}, "below 1"),
        ({"fanout": (0,)}, "fanout"),
        ({"strategies": ()}, "strategies"),
        ({"strategies": ("every -1 s",)}, "strategy"),
        ({"idempotency_reps": 0}, "idempotency_reps"),
        ({"scenario_duration": float("inf")}, "scenario_duration"),
    ],
)
def test_params_refuse_bad_values(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimParams(**changes)


def test_params_pickle_for_worker_processes() -> None:
    params = SimParams(runs=5, strategies=("every 5 s", "backoff 2, 4, 8 … 30 s"))
    again = pickle.loads(pickle.dumps(params))
    assert again == params
    assert again.strategy_names() == ["every 5 s", "backoff 2, 4, 8 … 30 s"]
    assert params.runs_for("polling") == 5
    assert SimParams().runs_for("polling") == 2000


def test_derived_seeds_are_stable_and_distinct() -> None:
    assert derive_seed(0, "baseline", 1) == derive_seed(0, "baseline", 1)
    assert derive_seed(0, "baseline", 1) != derive_seed(0, "baseline", 2)
    assert derive_seed(0, "baseline", 1) != derive_seed(1, "baseline", 1)


def test_compare_shows_relative_and_absolute_differences() -> None:
    assert compare(11.0, 10.0, " s") == "11.0 s / 10.0 s (+10.0%)"
    assert compare(0.5, 0.0, " s") == "0.5 s / 0.0 s (+0.5 s)"
    assert compare("running", "running") == "running / running"
    assert compare(3, None) == "3 / —"


def test_fanout_loss_is_zero_at_the_seed_and_grows_away_from_it() -> None:
    from pytest_osfoundry.sim import SEED

    assert fanout_loss(SEED["fanout"]) == 0
    worse = [dict(r, last_p95=r["last_p95"] * 1.2) for r in SEED["fanout"]]
    assert fanout_loss(worse) > 0
    with pytest.raises(ValueError, match="no fan-out row"):
        fanout_loss([{"queued": 2, "first_median": 1, "last_median": 1, "last_p95": 1}])


def test_fit_sigma_scores_each_grid_point_on_the_fanout_table() -> None:
    best, points = fit_sigma(SimParams(runs=30), grid=[0.5, 0.82], replicas=1)
    assert [p.sigma for p in points] == [0.5, 0.82]
    assert best == min(points, key=lambda p: p.loss).sigma
    narrow, wide = points
    assert [r["queued"] for r in narrow.rows] == [1, 3, 5]
    assert [r["n"] for r in narrow.rows] == [30, 10, 10]
    # Common random numbers: the same runs, only wider durations.
    assert wide.rows[0]["last_p95"] > narrow.rows[0]["last_p95"]
