"""The experiments on many runs: the baseline (pickup, polling, single fan-out), fan-out
batches and cancels (see :mod:`~pytest_osfoundry.sim._experiments` for what each reads)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from pytest_osfoundry._vocabulary import CANCELLED, COMPLETED, RUNNING, TERMINAL_STATUSES
from pytest_osfoundry.agent._scripted import AgentRun
from pytest_osfoundry.server._state import Run
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.sim._tasks import SimulationError, Task, derive_seed
from pytest_osfoundry.sim._worlds import (
    LIMIT,
    make_world,
    new_key,
    phase_delay,
    wait_done,
    wait_terminal,
)
from pytest_osfoundry.world import OsfWorld

__all__ = ["baseline", "cancel", "fanout"]


def baseline(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Per run: pickup wait, result (``finished_at - queued_at``) and, when watched,
    each strategy's calls and lateness."""
    world = make_world(params, derive_seed(params.seed, "baseline", task.index), many=True)
    worlds.append(world)
    runs = world.server.state.runs
    gsid = world.sessions[0].graph_session_id
    rng = random.Random(derive_seed(params.seed, "baseline-driver", task.index))
    strategies = params.strategy_objects() if task.option else ()
    watchers = [world.make_agent(strategy=s) for s in strategies]
    starter = world.make_agent()
    pickup: list[float] = []
    finished: list[float] = []
    calls: list[list[int]] = [[] for _ in watchers]
    late: list[list[float]] = [[] for _ in watchers]
    for _ in range(task.size):
        delay = phase_delay(world, rng, params.poll_interval)
        key = new_key(rng)
        if watchers:
            records = [agent.start(gsid, key=key, delay=delay) for agent in watchers]
            for record in records:
                wait_done(world, record)
            command_ids = {r.command_id for r in records}
            if len(command_ids) != 1:
                raise SimulationError(f"one key queued {len(command_ids)} runs")
            run = runs[records[0].command_id or ""]
            for j, record in enumerate(records):
                if record.late is None:
                    raise SimulationError(f"{record.error or 'the agent never saw the result'}")
                calls[j].append(record.poll_calls)
                late[j].append(record.late)
            for agent in watchers:
                agent.runs.clear()
        else:
            record = starter.start(gsid, key=key, poll=False, delay=delay)
            wait_done(world, record)
            run = runs[record.command_id or ""]
            starter.runs.clear()
        # Watched, every agent has seen a terminal status, so this returns at once.
        wait_terminal(world, run)
        if run.started_at is None:
            raise SimulationError(f"run ended {run.status} without starting")
        if run.status != COMPLETED or run.finished_at is None:
            raise SimulationError(f"a baseline run ended {run.status}")
        pickup.append(run.started_at - run.queued_at)
        finished.append(run.finished_at - run.queued_at)
    return {"pickup": pickup, "finished": finished, "calls": calls, "late": late}


# ---------------------------------------------------------------------- fanout
def fanout(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """First and last result (server ``finished_at - queued_at``) of batches of ``option`` runs."""
    k = task.option
    world = make_world(params, derive_seed(params.seed, "fanout", k, task.index), many=True)
    worlds.append(world)
    runs = world.server.state.runs
    gsid = world.sessions[0].graph_session_id
    rng = random.Random(derive_seed(params.seed, "fanout-driver", k, task.index))
    agent = world.make_agent()
    first: list[float] = []
    last: list[float] = []
    for _ in range(task.size):
        delay = phase_delay(world, rng, params.poll_interval)
        records = [agent.start(gsid, key=new_key(rng), poll=False, delay=delay) for _ in range(k)]
        for record in records:
            wait_done(world, record)
        batch = [runs[r.command_id or ""] for r in records]
        for run in batch:
            wait_terminal(world, run)
        queued = batch[0].queued_at
        finished = []
        for run in batch:
            if run.status != COMPLETED or run.finished_at is None:
                raise SimulationError(f"a fan-out run ended {run.status}")
            finished.append(run.finished_at - queued)
        first.append(min(finished))
        last.append(max(finished))
        agent.runs.clear()
    return {"first": first, "last": last}


# ---------------------------------------------------------------------- cancel
def cancel(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Cancel each run at U(0, window) after queueing; classify and time the outcome."""
    world = make_world(params, derive_seed(params.seed, "cancel", task.index), many=True)
    worlds.append(world)
    runs = world.server.state.runs
    executed = world.relay.executed
    gsid = world.sessions[0].graph_session_id
    rng = random.Random(derive_seed(params.seed, "cancel-driver", task.index))
    agent = world.make_agent()
    out: dict[str, Any] = {
        "queued": [],
        "running": [],
        "finished": [],
        "queued_started": 0,
        "states": {},
    }
    for _ in range(task.size):
        delay = phase_delay(world, rng, params.poll_interval)
        after = rng.uniform(0.0, params.cancel_window)
        record = agent.start(gsid, key=new_key(rng), poll=False, cancel_after=after, delay=delay)
        wait_done(world, record)
        run = runs[record.command_id or ""]
        world.clock.run_until(_cancel_settled(record, run), limit=LIMIT)
        assert record.cancel_result is not None and record.cancel_at is not None
        answered = str(record.cancel_result.get("status"))
        # Which case of D8 the cancel met: a queued run is cancelled at once, a
        # running one is flagged, a finished one is left alone.
        state = {CANCELLED: "queued", RUNNING: "running"}.get(answered, "finished")
        if run.finished_at is None:
            raise SimulationError(f"a cancelled run is {run.status} without finished_at")
        out[state].append(max(0.0, run.finished_at - record.cancel_at))
        if state == "queued" and (run.started_at is not None or run.command_id in executed):
            out["queued_started"] += 1
        final = out["states"]
        final[f"{state}:{run.status}"] = final.get(f"{state}:{run.status}", 0) + 1
        agent.runs.clear()
    return out


def _cancel_settled(record: AgentRun, run: Run) -> Callable[[], bool]:
    """True once the agent's cancel was answered and the run is terminal on the server."""
    return lambda: record.cancel_result is not None and run.status in TERMINAL_STATUSES
