"""The plain simulation the speed goal is measured against (``benchmarks/plain_sim.py``)
does the same work: every seed figure within the tolerances the kit's own sim is held to,
at the seed's run counts, and it imports nothing of the kit."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_osfoundry.sim import SEED
from tests.sim.test_sim_seed_tolerance import MEAN, P95, Checks

PLAIN = Path(__file__).resolve().parents[2] / "benchmarks" / "plain_sim.py"


def _plain() -> ModuleType:
    spec = importlib.util.spec_from_file_location("osf_plain_sim", PLAIN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    out: dict[str, Any] = _plain().simulate()
    return out


def test_the_plain_simulation_stands_apart_from_the_kit() -> None:
    tree = ast.parse(PLAIN.read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not [m for m in imported if m.startswith("pytest_osfoundry")]


def test_the_plain_simulation_matches_the_seed(figures: dict[str, Any]) -> None:
    c = Checks()
    pickup = figures["pickup"]
    c.equal("pickup n", pickup["n"], 2000)
    for key, tol in (("mean", MEAN), ("median", MEAN), ("p95", P95), ("max", MEAN)):
        c.near(f"pickup {key}", pickup[key], SEED["pickup"][key], tol)
    for sim, seed in zip(figures["fanout"], SEED["fanout"], strict=True):
        for key, tol in (("first_median", MEAN), ("last_median", MEAN), ("last_p95", P95)):
            c.near(f"fanout {sim['queued']} {key}", sim[key], seed[key], tol)
    for sim, seed in zip(figures["polling"], SEED["polling"], strict=True):
        c.equal("strategy", sim["strategy"], seed["strategy"])
        for key in ("calls_mean", "late_mean"):
            c.near(f"{sim['strategy']} {key}", sim[key], seed[key], MEAN)
        for key in ("calls_p95", "late_p95"):
            c.near(f"{sim['strategy']} {key}", sim[key], seed[key], P95)
    cancel, seed_cancel = figures["cancel"], SEED["cancel"]
    c.equal("cancel n", cancel["n"], 2000)
    c.equal("cancel queued max", cancel["queued_terminal_after_max"], 0.0)
    for key, tol in (
        ("queued", MEAN),
        ("running", MEAN),
        ("finished", 0.25),
        ("running_terminal_after_mean", MEAN),
        ("running_terminal_after_p95", P95),
        ("running_terminal_after_max", MEAN),
    ):
        c.near(f"cancel {key}", cancel[key], seed_cancel[key], tol)
    for sim, seed in zip(figures["idempotency"], SEED["idempotency"], strict=True):
        c.near(f"{sim['retry']} calls", sum(sim["calls"]) / 3, sum(seed["calls"]) / 3, MEAN)
    c.equal("same key runs", figures["idempotency"][1]["runs_queued"], [200, 200, 200])
    c.done()


def test_the_plain_scenarios_are_the_seeds(figures: dict[str, Any]) -> None:
    offline = dict(figures["offline"])
    what_if = offline.pop("wake_at_once")
    assert offline == SEED["offline"]  # the seed's reading: +3 s, +131 s
    assert what_if["first_start_after_online"] == 0.0  # the kit's relay wakes at once
    assert what_if["all_completed_after_online"] == 128.0
    assert figures["outbox"] == SEED["outbox"]
    assert figures["truncation"] == SEED["truncation"]
    assert figures["access"] == SEED["access"]
