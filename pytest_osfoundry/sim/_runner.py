"""Run experiments, in this process or across worker processes.

:func:`simulate` plans the tasks of the chosen experiments
(:func:`~pytest_osfoundry.sim._tasks.plan`), runs them — in-process with
``jobs=1``, else in a :class:`~concurrent.futures.ProcessPoolExecutor` of ``jobs``
workers using the platform's default start method (everything sent to a worker is
picklable and defined at module level, so ``spawn`` works too) — and combines them.
Task seeds depend only on the master seed and the task, so every ``jobs`` value
gives the same figures.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pytest_osfoundry._checks import check_positive_int
from pytest_osfoundry.sim._combine import combine
from pytest_osfoundry.sim._experiments import run_task
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.sim._seed_figures import SEED
from pytest_osfoundry.sim._tasks import NAMES, TaskResult, plan

__all__ = ["SimRun", "resolve_names", "simulate"]


@dataclass
class SimRun:
    """The outcome of :func:`simulate`: figures plus how long they took.

    ``experiments`` is the ``experiments`` object of ``--json``; ``wall`` the
    elapsed seconds, ``cpu`` the CPU seconds summed over tasks, ``events`` the
    virtual-clock events run, ``task_times`` each task's ``(kind, option, index,
    cpu seconds, events)``.
    """

    params: SimParams
    names: tuple[str, ...]
    experiments: dict[str, Any]
    jobs: int
    wall: float
    cpu: float
    events: int
    task_times: list[tuple[str, int, int, float, int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"params", "experiments", "seed"}``: the stable object ``--json`` prints."""
        return {
            "params": self.params.to_dict(),
            "experiments": self.experiments,
            "seed": {name: SEED[name] for name in self.names if name in SEED},
        }

    @property
    def events_per_second(self) -> float:
        """Virtual-clock events per wall second."""
        return self.events / self.wall if self.wall > 0 else 0.0


def resolve_names(names: Iterable[str] | None) -> tuple[str, ...]:
    """``names`` deduplicated in report order (all experiments when empty or ``None``)."""
    chosen = list(names or ())
    unknown = [n for n in chosen if n not in NAMES]
    if unknown:
        raise ValueError(
            f"unknown experiment(s) {', '.join(unknown)}; choose from {', '.join(NAMES)}"
        )
    return tuple(n for n in NAMES if not chosen or n in chosen)


def simulate(
    names: Sequence[str] | None = None,
    params: SimParams | None = None,
    *,
    jobs: int = 1,
) -> SimRun:
    """Run the experiments ``names`` (all by default) with ``params``; see module doc.

    Raises ``ValueError`` for an unknown experiment or ``jobs < 1``.
    """
    check_positive_int(jobs, "jobs")
    params = params if params is not None else SimParams()
    chosen = resolve_names(names)
    tasks = plan(chosen, params)
    started = time.perf_counter()
    results: list[TaskResult]
    if jobs == 1 or len(tasks) <= 1:
        results = [run_task((params, task)) for task in tasks]
    else:
        context = multiprocessing.get_context()
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
            results = list(pool.map(run_task, [(params, t) for t in tasks], chunksize=1))
    experiments = combine(chosen, params, results)
    wall = time.perf_counter() - started
    return SimRun(
        params=params,
        names=chosen,
        experiments=experiments,
        jobs=jobs,
        wall=wall,
        cpu=sum(r.cpu for r in results),
        events=sum(r.events for r in results),
        task_times=[(r.kind, r.option, r.index, r.cpu, r.events) for r in results],
    )
