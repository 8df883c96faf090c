"""Each experiment, at the seed's run counts, lands within tolerance of the seed's figures.

Tolerances (the issue's): means and medians within 10 %, p95s within 15 %, and exact
where the seed is exact (200 runs queued with the same key, the 99,899-character
boundary in the seed's envelope, 0 executed while offline, ``running`` forever
without the outbox). Counts of the cancel experiment are proportions of the runs,
so they are held to the means' 10 % — except "already finished", a small tail count
(107 of 2,000) held to 25 % (see docs/experiments.md).

Each test runs only the experiments it checks, in this process, so pytest-xdist
spreads them over workers; every check of a test is made and all failures are
reported together.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_osfoundry.relay._bounded import SEED_ENVELOPE, max_result_text
from pytest_osfoundry.sim import SEED, SimParams, simulate

MEAN = 0.10
P95 = 0.15


class Checks:
    """Collects tolerance failures so a test reports every one of them."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def near(self, label: str, sim: float, seed: float, tolerance: float) -> None:
        if abs(sim - seed) > tolerance * abs(seed):
            self.failures.append(
                f"{label}: sim {sim:.3f} vs seed {seed:.3f} "
                f"({100 * (sim - seed) / seed:+.1f} %, allowed ±{100 * tolerance:.0f} %)"
            )

    def equal(self, label: str, sim: Any, seed: Any) -> None:
        if sim != seed:
            self.failures.append(f"{label}: sim {sim!r} != seed {seed!r}")

    def done(self) -> None:
        assert not self.failures, "\n".join(self.failures)


def _run(*names: str) -> dict[str, Any]:
    return simulate(list(names), SimParams(), jobs=1).experiments


def test_pickup_wait_matches_the_seed() -> None:
    sim, seed = _run("pickup")["pickup"], SEED["pickup"]
    c = Checks()
    c.equal("n", sim["n"], 2000)
    c.near("mean", sim["mean"], seed["mean"], MEAN)
    c.near("median", sim["median"], seed["median"], MEAN)
    c.near("p95", sim["p95"], seed["p95"], P95)
    c.near("max", sim["max"], seed["max"], MEAN)
    c.done()
    assert sim["max"] <= 20.0 + 1e-6  # never more than one pass interval


def test_polling_table_matches_the_seed() -> None:
    rows = _run("polling")["polling"]
    assert [r["strategy"] for r in rows] == [r["strategy"] for r in SEED["polling"]]
    c = Checks()
    for sim, seed in zip(rows, SEED["polling"], strict=True):
        name = sim["strategy"]
        c.equal(f"{name}: n", sim["n"], 2000)
        c.near(f"{name}: calls mean", sim["calls_mean"], seed["calls_mean"], MEAN)
        c.near(f"{name}: calls p95", sim["calls_p95"], seed["calls_p95"], P95)
        c.near(f"{name}: late mean", sim["late_mean"], seed["late_mean"], MEAN)
        c.near(f"{name}: late p95", sim["late_p95"], seed["late_p95"], P95)
    c.done()


def test_fanout_table_matches_the_seed() -> None:
    rows = _run("fanout")["fanout"]
    assert [r["queued"] for r in rows] == [1, 3, 5]
    c = Checks()
    for sim, seed in zip(rows, SEED["fanout"], strict=True):
        k = sim["queued"]
        c.near(f"{k} queued: first median", sim["first_median"], seed["first_median"], MEAN)
        c.near(f"{k} queued: last median", sim["last_median"], seed["last_median"], MEAN)
        c.near(f"{k} queued: last p95", sim["last_p95"], seed["last_p95"], P95)
    c.done()
    # One desktop is one worker: more runs queued at once, later last results.
    assert rows[0]["last_median"] < rows[1]["last_median"] < rows[2]["last_median"]


def test_cancel_matches_the_seed() -> None:
    sim, seed = _run("cancel")["cancel"], SEED["cancel"]
    c = Checks()
    c.equal("n", sim["n"], 2000)
    c.near("still queued", sim["queued"], seed["queued"], MEAN)
    c.near("already running", sim["running"], seed["running"], MEAN)
    c.near("already finished", sim["finished"], seed["finished"], 0.25)
    c.equal("queued: terminal after, max", sim["queued_terminal_after_max"], 0.0)
    c.equal("queued: never started", sim["queued_never_started"], sim["queued"])
    c.near(
        "running: terminal after, mean",
        sim["running_terminal_after_mean"],
        seed["running_terminal_after_mean"],
        MEAN,
    )
    c.near(
        "running: terminal after, p95",
        sim["running_terminal_after_p95"],
        seed["running_terminal_after_p95"],
        P95,
    )
    c.near(
        "running: terminal after, max",
        sim["running_terminal_after_max"],
        seed["running_terminal_after_max"],
        MEAN,
    )
    c.done()
    # D8: "terminal within about 3.5 s" = one control poll (3 s) + the stop (0.5 s).
    assert sim["running_terminal_after_max"] <= 3.5 + 1e-6


def test_idempotency_matches_the_seed() -> None:
    rows = {r["retry"]: r for r in _run("idempotency")["idempotency"]}
    new, same = rows["new key on retry"], rows["same key on retry"]
    seed = {r["retry"]: r for r in SEED["idempotency"]}
    assert same["runs_queued"] == [200, 200, 200]  # exact, as in the seed
    assert new["runs_queued"] == new["calls"]  # every retry with a new key is a new run
    assert all(n > 200 for n in new["runs_queued"])
    c = Checks()
    for name, row in rows.items():
        mean_sim = sum(row["calls"]) / 3
        mean_seed = sum(seed[name]["calls"]) / 3
        c.near(f"{name}: calls sent, mean of 3", mean_sim, mean_seed, MEAN)
    c.done()
    assert len(set(new["calls"])) > 1, "three repetitions with different seeds"


def test_scenarios_match_the_seed() -> None:
    out = _run("offline", "outbox", "truncation", "access")
    offline, seed = out["offline"], SEED["offline"]
    assert offline["statuses_while_offline"] == ["queued"]
    assert offline["executed_while_offline"] == 0  # exact
    assert offline["statuses_after"] == ["completed"]
    assert offline["executed_after"] == 5
    assert offline["all_completed_after_online"] == pytest.approx(
        seed["all_completed_after_online"], rel=MEAN
    )
    # The seed's reading: the relay's timer keeps its phase through the outage and
    # ticks 3 s after the desktop is back; exactly the seed's figures (issue 23).
    assert offline["first_start_after_online"] == seed["first_start_after_online"] == 3.0
    assert offline["all_completed_after_online"] == seed["all_completed_after_online"]
    # What if it woke at once (the kit's relay as it is, like the hook when it remounts).
    what_if = offline["what_if_wake_at_once"]
    assert what_if == {"first_start_after_online": 0.0, "all_completed_after_online": 128.0}

    outbox = out["outbox"]
    assert outbox["with_outbox"]["status"] == "completed"
    assert outbox["with_outbox"]["delivered_after_start"] == pytest.approx(40.0, abs=1e-3)
    assert outbox["without_outbox"]["status"] == "running"  # exact: forever
    assert outbox["without_outbox"]["delivered_after_start"] is None
    assert outbox["without_outbox"]["engine_outcome"] == "completed"  # the desktop did finish

    trunc = out["truncation"]
    for name, fits_bytes in (("ascii", 99_899), ("japanese", 299_697)):
        row = trunc[name]
        assert row["seed_envelope_fits_chars"] == 99_899  # exact, as in the seed
        assert row["seed_envelope_fits_bytes"] == fits_bytes
        assert row["one_more"] == "result_truncated"
        # Through the relay: its execution ids are longer than the seed's
        # "fleet-run-0001", so exactly that many fewer characters fit.
        longer = trunc["envelope_overhead"] - trunc["seed_envelope_overhead"]
        assert row["fits_chars"] == 99_899 - longer
    assert max_result_text("a", SEED_ENVELOPE) == 99_899
    assert trunc["japanese"]["fits_bytes"] == 3 * trunc["japanese"]["fits_chars"]

    access = out["access"]
    assert access["error"] == SEED["access"]["error"] == "Graph run not found or access removed"
    assert access["cancel_error"] == access["error"]
    assert access["same_as_unknown_id"] is True
    assert access["owner_can_read"] is True
