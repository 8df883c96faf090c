"""Fitting the lognormal's spread to the seed's "runs queued at once" table.

The seed states the Graph durations' median (60 s) and floor (5 s) but not their
spread. :func:`fit_sigma` runs the real ``fanout`` experiment for each ``sigma`` of a
grid, under ``replicas`` master seeds (``seed``, ``seed + 1``, ...), and scores each
point by the sum, over the replicas, of the squared log-ratios ``log(sim / seed) **
2`` of the table's nine figures (first-result median, last-result median and
last-result p95 of each row). Every grid point reuses the same master seeds, so
they all see the same standard-normal draws and relay phases (common random
numbers: the loss is a smooth function of ``sigma``). The best grid point wins.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_osfoundry._checks import check_positive_int
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.sim._runner import simulate
from pytest_osfoundry.sim._seed_figures import SEED

__all__ = ["FitPoint", "default_grid", "fanout_loss", "fit_sigma"]

_FIGURES = ("first_median", "last_median", "last_p95")


@dataclass(frozen=True)
class FitPoint:
    """One grid point: ``sigma``, its ``loss`` and the fan-out rows it produced."""

    sigma: float
    loss: float
    rows: tuple[dict[str, Any], ...]


def default_grid() -> list[float]:
    """0.70, 0.71, ..., 0.95."""
    return [round(0.70 + 0.01 * i, 2) for i in range(26)]


def fanout_loss(rows: Sequence[dict[str, Any]]) -> float:
    """Sum of ``log(sim / seed) ** 2`` over the seed's fan-out figures present in ``rows``."""
    seed_rows = {r["queued"]: r for r in SEED["fanout"]}
    loss = 0.0
    matched = 0
    for row in rows:
        seed = seed_rows.get(row["queued"])
        if seed is None:
            continue
        for key in _FIGURES:
            loss += math.log(float(row[key]) / float(seed[key])) ** 2
            matched += 1
    if not matched:
        raise ValueError("no fan-out row matches the seed's table (queued 1, 3 or 5)")
    return loss


def fit_sigma(
    params: SimParams | None = None,
    grid: Sequence[float] | None = None,
    *,
    replicas: int = 3,
    jobs: int = 1,
) -> tuple[float, list[FitPoint]]:
    """The grid's best ``sigma`` for the fan-out table, and every point (see module doc).

    ``params`` supplies everything else (first master seed, batches via ``runs``,
    median, ...); its ``fanout`` rows should include the seed's 1, 3 and 5. A point's
    ``rows`` are those of its first replica.
    """
    check_positive_int(replicas, "replicas")
    base = params if params is not None else SimParams()
    points: list[FitPoint] = []
    for sigma in grid if grid is not None else default_grid():
        loss = 0.0
        first: list[dict[str, Any]] = []
        for replica in range(replicas):
            trial = replace(base, duration_sigma=float(sigma), seed=base.seed + replica)
            rows = simulate(["fanout"], trial, jobs=jobs).experiments["fanout"]
            loss += fanout_loss(rows)
            first = first or rows
        points.append(FitPoint(float(sigma), loss, tuple(first)))
    if not points:
        raise ValueError("the sigma grid is empty")
    best = min(points, key=lambda p: p.loss)
    return best.sigma, points
