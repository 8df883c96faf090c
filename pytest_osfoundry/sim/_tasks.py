"""The experiments' units of work: names, seeds, :class:`Task`, :class:`TaskResult`, the plan.

Work is split into fixed chunks of runs, each in its own world with seeds derived
from the master seed, the experiment and the chunk index; the chunking does not
depend on how many processes run the tasks, so ``--jobs`` never changes a result.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_osfoundry.sim._params import SimParams

__all__ = ["NAMES", "SimulationError", "Task", "TaskResult", "derive_seed", "plan"]

#: Every experiment, in report order.
NAMES: tuple[str, ...] = (
    "pickup",
    "fanout",
    "polling",
    "cancel",
    "idempotency",
    "offline",
    "outbox",
    "truncation",
    "access",
)

#: Runs per task; fixed so that results never depend on ``--jobs``.
_BASELINE_CHUNK = 250
_FANOUT_CHUNK_RUNS = 500
_CANCEL_CHUNK = 500


class SimulationError(RuntimeError):
    """A component did something an experiment cannot read a figure from."""


def derive_seed(seed: int, *parts: object) -> int:
    """A 48-bit seed from the master seed and ``parts`` (stable across runs and platforms)."""
    text = ":".join(str(p) for p in (seed, *parts))
    return random.Random(text).getrandbits(48)


@dataclass(frozen=True)
class Task:
    """One unit of work: ``size`` runs (or repetitions) of one experiment in one world.

    ``kind`` is the simulation to run (``baseline`` feeds pickup, polling and the
    fan-out row of single runs); ``option`` is the fan-out row (runs queued at once,
    2 or more), or 1 when the baseline's runs are watched by the strategies (0: not
    watched). ``cost`` is a rough estimate used to schedule the biggest tasks first.
    """

    kind: str
    index: int
    size: int
    option: int = 0
    cost: float = 1.0


@dataclass
class TaskResult:
    """What a task returns: its raw samples, clock events and CPU seconds."""

    kind: str
    index: int
    option: int
    data: dict[str, Any]
    events: int
    cpu: float


def _chunks(total: int, size: int) -> list[int]:
    out = [size] * (total // size)
    if total % size:
        out.append(total % size)
    return out


def plan(names: Sequence[str], params: SimParams) -> list[Task]:
    """The tasks that produce ``names``, biggest (by estimated cost) first."""
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise ValueError(f"unknown experiment(s) {', '.join(unknown)}; known: {', '.join(NAMES)}")
    wanted = set(names)
    tasks: list[Task] = []
    # Fan-out's single runs are baseline runs (see module doc): the baseline covers
    # the most runs any wanted experiment reads off it.
    singles = "fanout" in wanted and 1 in params.fanout
    watched = "polling" in wanted
    baseline = [params.runs_for(n) for n in ("pickup", "polling") if n in wanted]
    if singles:
        baseline.append(params.runs_for("fanout"))
    if baseline:
        per_run = 0.25 + (0.8 * len(params.strategies) / 6 if watched else 0)
        for i, size in enumerate(_chunks(max(baseline), _BASELINE_CHUNK)):
            tasks.append(Task("baseline", i, size, int(watched), size * per_run))
    if "fanout" in wanted:
        # Batches of k > 1 runs: a third as many as single runs (whose p95 is noisier).
        batches = math.ceil(params.runs_for("fanout") / 3)
        for k in sorted(set(params.fanout) - {1}):
            per_chunk = max(1, math.ceil(_FANOUT_CHUNK_RUNS / k))
            for i, size in enumerate(_chunks(batches, per_chunk)):
                tasks.append(Task("fanout", i, size, k, size * k * 0.22))
    if "cancel" in wanted:
        for i, size in enumerate(_chunks(params.runs_for("cancel"), _CANCEL_CHUNK)):
            tasks.append(Task("cancel", i, size, 0, size * 0.07))
    if "idempotency" in wanted:
        runs = params.runs_for("idempotency")
        for rep in range(params.idempotency_reps):
            tasks.append(Task("idempotency", rep, runs, 0, runs * 0.12))
    for name in ("offline", "outbox", "truncation", "access"):
        if name in wanted:
            tasks.append(Task(name, 0, 1, 0, 5.0))
    tasks.sort(key=lambda t: -t.cost)
    return tasks
