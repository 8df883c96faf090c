"""``osfoundry-sim``: arguments, the text report, the ``--json`` object, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from pytest_osfoundry.sim import NAMES, SEED
from pytest_osfoundry.sim._cli import main
from pytest_osfoundry.sim._params import DEFAULT_STRATEGIES, SimParams
from pytest_osfoundry.sim._tasks import Task, plan
from pytest_osfoundry.world import SEED_SIGMA


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one object, one line
    data: dict[str, Any] = json.loads(out)
    return data


def test_json_object_has_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, "--runs", "30", "--jobs", "2")
    assert list(data) == ["params", "experiments", "seed"]
    exp = data["experiments"]
    assert list(exp) == list(NAMES)
    assert set(exp["pickup"]) == {"n", "mean", "median", "p95", "max"}
    assert [
        set(r) >= {"queued", "first_median", "last_median", "last_p95"} for r in exp["fanout"]
    ] == [True] * 3
    assert [r["queued"] for r in exp["fanout"]] == [1, 3, 5]
    assert [r["strategy"] for r in exp["polling"]] == [r["strategy"] for r in SEED["polling"]]
    for row in exp["polling"]:
        assert set(row) >= {"strategy", "calls_mean", "calls_p95", "late_mean", "late_p95"}
    assert set(exp["cancel"]) >= {
        "n",
        "queued",
        "running",
        "finished",
        "queued_terminal_after_max",
        "running_terminal_after_mean",
        "running_terminal_after_p95",
        "running_terminal_after_max",
    }
    assert [r["retry"] for r in exp["idempotency"]] == ["new key on retry", "same key on retry"]
    assert all(len(r["calls"]) == 3 == len(r["runs_queued"]) for r in exp["idempotency"])
    assert set(exp["offline"]) >= set(SEED["offline"])
    assert set(exp["outbox"]) == {"with_outbox", "without_outbox"}
    assert set(exp["truncation"]) >= {"ascii", "japanese", "envelope_overhead"}
    assert exp["access"]["error"] == "Graph run not found or access removed"
    # Seconds are numbers, never strings.
    assert isinstance(exp["pickup"]["mean"], float)
    assert isinstance(exp["outbox"]["with_outbox"]["delivered_after_start"], float)
    # The seed's figures, in the same shapes, for the same experiments.
    assert data["seed"] == {name: SEED[name] for name in NAMES}


def test_json_params_echo_every_knob(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys,
        "access",
        "--seed",
        "7",
        "--poll-interval",
        "5",
        "--control-poll",
        "1",
        "--duration-median",
        "30",
        "--duration-sigma",
        "0.5",
        "--strategy",
        "every 5 s",
        "--protocol",
        "2026-07-28",
    )
    params = data["params"]
    assert params["seed"] == 7
    assert params["poll_interval"] == 5.0
    assert params["control_poll"] == 1.0
    assert params["duration_median"] == 30.0
    assert params["duration_sigma"] == 0.5
    assert params["strategies"] == ["every 5 s"]
    assert params["protocol"] == "2026-07-28"
    assert params["runs"]["polling"] == 2000
    assert list(data["experiments"]) == ["access"]
    assert list(data["seed"]) == ["access"]


def test_defaults_are_the_seed_model() -> None:
    params = SimParams()
    assert params.duration_sigma == SEED_SIGMA
    assert (params.poll_interval, params.control_poll, params.duration_median) == (20, 3, 60)
    assert (
        params.strategy_names()
        == list(DEFAULT_STRATEGIES)
        == [r["strategy"] for r in SEED["polling"]]
    )


def test_text_report_shows_sim_seed_and_difference(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cancel", "idempotency", "outbox", "truncation", "--runs", "40"]) == 0
    out = capsys.readouterr().out
    assert "Cancel at a random 0-40 s after queueing, n = 40" in out
    assert "/ 523 (" in out  # the seed's figure beside the simulation's, with a difference
    assert "same key on retry" in out and "200 / 200 / 200" in out
    assert "99,899 / 99,899 (+0.0%)" in out
    assert "never, watched 3600 s" in out
    assert "clock events" in out


def test_same_seed_same_output(capsys: pytest.CaptureFixture[str]) -> None:
    first = _json(capsys, "cancel", "offline", "--runs", "25", "--seed", "3")
    second = _json(capsys, "cancel", "offline", "--runs", "25", "--seed", "3", "--jobs", "2")
    assert first == second


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--runs", "0"], "positive integer"),
        (["--jobs", "x"], "positive integer"),
        (["bogus"], "unknown experiment(s) bogus"),
        (["--duration-sigma", "-1"], "duration_sigma"),
        (["--poll-interval", "0"], "poll_interval"),
        (["--drop-replies", "1.5"], "drop_replies"),
        (["--strategy", "sometimes"], "unknown poll strategy"),
        (["--strategy", "no_such_module_xyz:f"], "cannot import"),
        (["--duration-median", "abc"], "expected a number"),
        (["access", "--plot", "out.png"], "--plot draws the polling experiment"),
        (["--protocol", "2024-11-05"], "argument --protocol: invalid choice: '2024-11-05'"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err


def test_plan_never_depends_on_jobs_and_schedules_big_tasks_first() -> None:
    tasks = plan(NAMES, SimParams())
    costs = [t.cost for t in tasks]
    assert costs == sorted(costs, reverse=True)
    assert sum(t.size for t in tasks if t.kind == "baseline") == 2000
    assert sum(t.size for t in tasks if t.kind == "cancel") == 2000
    with pytest.raises(ValueError, match="unknown experiment"):
        plan(["nope"], SimParams())


def _sizes(tasks: list[Task]) -> dict[tuple[str, int], int]:
    sizes: dict[tuple[str, int], int] = {}
    for t in tasks:
        sizes[t.kind, t.option] = sizes.get((t.kind, t.option), 0) + t.size
    return sizes


def test_fanout_single_runs_are_the_baseline_runs() -> None:
    # Option 1 of a baseline task: watched by the strategies; of a fan-out task: k.
    assert _sizes(plan(NAMES, SimParams())) == {
        ("baseline", 1): 2000,
        ("fanout", 3): 500,
        ("fanout", 5): 500,
        ("cancel", 0): 2000,
        ("idempotency", 0): 600,
        ("offline", 0): 1,
        ("outbox", 0): 1,
        ("truncation", 0): 1,
        ("access", 0): 1,
    }
    assert _sizes(plan(["fanout"], SimParams())) == {
        ("baseline", 0): 1500,
        ("fanout", 3): 500,
        ("fanout", 5): 500,
    }
    assert _sizes(plan(["pickup", "fanout"], SimParams())) == {
        ("baseline", 0): 2000,
        ("fanout", 3): 500,
        ("fanout", 5): 500,
    }
    # No single-run row, no baseline.
    assert _sizes(plan(["fanout"], SimParams(fanout=(3,), runs=30))) == {("fanout", 3): 10}


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_osfoundry.sim", "access", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["experiments"]["access"]["owner_can_read"] is True


def test_plot_needs_matplotlib_or_draws(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    target = tmp_path / "polling.png"
    code = main(["polling", "--runs", "20", "--plot", str(target), "--json"])
    err = capsys.readouterr().err
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert code == 2
        assert "pip install matplotlib" in err
    else:
        assert code == 0, err
        assert target.stat().st_size > 1000
