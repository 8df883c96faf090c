"""Combining the tasks' raw samples into the experiments' figures (``--json``'s ``experiments``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_osfoundry.agent._internal import Retry
from pytest_osfoundry.sim import _stats as stats
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.sim._tasks import TaskResult

__all__ = ["combine"]

_RETRY_NAMES: dict[Retry, str] = {"new-key": "new key on retry", "same-key": "same key on retry"}


def combine(
    names: Sequence[str], params: SimParams, results: Sequence[TaskResult]
) -> dict[str, Any]:
    """The experiments' figures (the ``experiments`` object of ``--json``) from task results.

    Floats are rounded to 4 decimals (a tenth of a millisecond for seconds).
    """
    by_kind: dict[str, list[TaskResult]] = {}
    for result in sorted(results, key=lambda r: (r.kind, r.option, r.index)):
        by_kind.setdefault(result.kind, []).append(result)
    out: dict[str, Any] = {}
    base = by_kind.get("baseline", [])
    for name in names:
        if name == "pickup":
            waits = [w for r in base for w in r.data["pickup"]][: params.runs_for("pickup")]
            out["pickup"] = stats.summary(waits)
        elif name == "polling":
            n = params.runs_for("polling")
            rows = []
            for j, label in enumerate(params.strategy_names()):
                calls = [c for r in base for c in r.data["calls"][j]][:n]
                late = [x for r in base for x in r.data["late"][j]][:n]
                rows.append(
                    {
                        "strategy": label,
                        "n": len(calls),
                        "calls_mean": stats.mean(calls),
                        "calls_p95": stats.interpolated(calls, 95),
                        "late_mean": stats.mean(late),
                        "late_p95": stats.interpolated(late, 95),
                    }
                )
            out["polling"] = rows
        elif name == "fanout":
            rows = []
            for k in params.fanout:
                if k == 1:
                    # One run queued at once is a baseline run (see module doc).
                    n = params.runs_for("fanout")
                    first = last = [x for r in base for x in r.data["finished"]][:n]
                else:
                    parts = [r for r in by_kind.get("fanout", []) if r.option == k]
                    first = [x for r in parts for x in r.data["first"]]
                    last = [x for r in parts for x in r.data["last"]]
                rows.append(
                    {
                        "queued": k,
                        "n": len(last),
                        "first_median": stats.median(first),
                        "last_median": stats.median(last),
                        "last_p95": stats.interpolated(last, 95),
                    }
                )
            out["fanout"] = rows
        elif name == "cancel":
            out["cancel"] = _combine_cancel(by_kind.get("cancel", []))
        elif name == "idempotency":
            reps = sorted(by_kind.get("idempotency", []), key=lambda r: r.index)
            out["idempotency"] = [
                {
                    "retry": _RETRY_NAMES[retry],
                    "calls": [r.data[retry]["calls"] for r in reps],
                    "runs_queued": [r.data[retry]["runs_queued"] for r in reps],
                }
                for retry in ("new-key", "same-key")
            ]
        else:
            (single,) = by_kind[name]
            out[name] = single.data
    rounded: dict[str, Any] = _rounded(out)
    return rounded


def _rounded(value: Any) -> Any:
    """``value`` with every float rounded to 4 decimals (stable, readable JSON)."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _combine_cancel(parts: Sequence[TaskResult]) -> dict[str, Any]:
    queued = [x for r in parts for x in r.data["queued"]]
    running = [x for r in parts for x in r.data["running"]]
    finished = [x for r in parts for x in r.data["finished"]]
    states: dict[str, int] = {}
    for r in parts:
        for key, count in r.data["states"].items():
            states[key] = states.get(key, 0) + count
    return {
        "n": len(queued) + len(running) + len(finished),
        "queued": len(queued),
        "running": len(running),
        "finished": len(finished),
        "queued_terminal_after_max": max(queued) if queued else None,
        "queued_never_started": len(queued) - sum(r.data["queued_started"] for r in parts),
        "running_terminal_after_mean": stats.mean(running) if running else None,
        "running_terminal_after_p95": stats.interpolated(running, 95) if running else None,
        "running_terminal_after_max": max(running) if running else None,
        "final_status": dict(sorted(states.items())),
    }
