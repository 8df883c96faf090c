"""The seed's experiments, run through the kit's real fake components.

Every experiment builds :class:`~pytest_osfoundry.world.OsfWorld` instances — the
reference server, the fake desktop relay, the fake engine and scripted agents on one
:class:`~pytest_osfoundry.clock.VirtualClock`, talking over the in-process transport
— and reads its figures off what those components did: the server's timestamps, the
agents' call records, the relay's events. Nothing is computed from a formula.

**Work is split into tasks** (:class:`Task`): fixed chunks of runs, each in its own
world with seeds derived from the master seed, the experiment and the chunk index.
The chunking does not depend on how many processes run the tasks, so ``--jobs``
never changes a result.

**Relay phase.** Each run (or fan-out batch) is queued at a uniformly random point
of a relay pass interval: the driver finds the relay's next pass at or after "now"
and queues ``U(0, interval)`` after it, only once the previous run is over (terminal
on the server and, when agents poll, seen by every agent). So each run meets an idle
relay at a random phase, as the seed's "relay phase random against each request".

The experiments (``NAMES``):

* ``pickup`` and ``polling`` read one set of *baseline* runs: each run is queued by
  six scripted agents of the same Connected agent, one per strategy, calling
  ``run_graph_session`` with the same idempotency key at the same instant — one
  command on the server (R5), watched by every strategy. Pickup is the server's
  ``started_at - queued_at``; calls per run count ``get_graph_run`` calls (not the
  start call); lateness is :attr:`~pytest_osfoundry.agent._scripted.AgentRun.late`.
  Asked for without ``polling``, the same runs are queued without the watchers
  (same figures: pollers never change when a run starts or finishes).
* ``fanout``: one agent queues 1, 3 or 5 runs at the same instant (1,500 single
  runs, 500 batches of 3 and of 5); first and last result are the server's
  ``finished_at`` of the first and last run to finish minus their common
  ``queued_at``. A single run queued at a random phase against an idle relay is
  exactly a baseline run, so the row "1 queued" is read off the first 1,500
  baseline runs (``finished_at - queued_at``), simulated once for all three
  experiments; only the batches of 3 and 5 have tasks of their own.
* ``cancel``: the agent cancels each run at a uniform 0-40 s after queueing; the
  run's state at the cancel is what ``cancel_graph_run`` answered; "terminal after"
  is ``finished_at`` minus the cancel's time.
* ``idempotency``: 200 runs a repetition, 30 % of replies dropped after the server
  handled the call, the agent retrying with a new key or the same key.
* ``offline``, ``outbox``, ``truncation``, ``access``: single scenarios, as in the
  seed (see each function).

The modules: :mod:`~pytest_osfoundry.sim._tasks` (names, seeds, tasks, the plan),
:mod:`~pytest_osfoundry.sim._worlds` (worlds and the driver's helpers),
:mod:`~pytest_osfoundry.sim._exp_runs` (baseline, fan-out, cancel),
:mod:`~pytest_osfoundry.sim._exp_retries` (idempotency),
:mod:`~pytest_osfoundry.sim._exp_scenarios` (offline, outbox, truncation, access) and
:mod:`~pytest_osfoundry.sim._combine` (the figures). This module runs a task.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pytest_osfoundry.sim import _exp_retries, _exp_runs, _exp_scenarios
from pytest_osfoundry.sim._combine import combine
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.sim._tasks import (
    NAMES,
    SimulationError,
    Task,
    TaskResult,
    derive_seed,
    plan,
)
from pytest_osfoundry.sim._worlds import make_world, seed_graph
from pytest_osfoundry.world import OsfWorld

__all__ = [
    "NAMES",
    "SimulationError",
    "Task",
    "TaskResult",
    "combine",
    "derive_seed",
    "make_world",
    "plan",
    "run_task",
    "seed_graph",
]

_RUNNERS: dict[str, Callable[[SimParams, Task, list[OsfWorld]], dict[str, Any]]] = {
    "baseline": _exp_runs.baseline,
    "fanout": _exp_runs.fanout,
    "cancel": _exp_runs.cancel,
    "idempotency": _exp_retries.idempotency,
    "offline": _exp_scenarios.offline,
    "outbox": _exp_scenarios.outbox,
    "truncation": _exp_scenarios.truncation,
    "access": _exp_scenarios.access,
}


def run_task(job: tuple[SimParams, Task]) -> TaskResult:
    """Run one task (top level, picklable: the worker entry point)."""
    params, task = job
    started = time.process_time()
    world_events: list[OsfWorld] = []
    data = _RUNNERS[task.kind](params, task, world_events)
    return TaskResult(
        task.kind,
        task.index,
        task.option,
        data,
        sum(w.clock.events_run for w in world_events),
        time.process_time() - started,
    )
