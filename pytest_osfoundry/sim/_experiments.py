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

This module holds the experiments' worlds, the driver's helpers and every
experiment, and runs one task (:func:`run_task`); :mod:`~pytest_osfoundry.sim._tasks`
plans the tasks (names, seeds) and :mod:`~pytest_osfoundry.sim._combine` turns their
samples into the figures.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

from pytest_osfoundry._vocabulary import CANCELLED, COMPLETED, RUNNING, TERMINAL_STATUSES
from pytest_osfoundry.agent import AgentRun, ScriptedAgent
from pytest_osfoundry.agent._internal import Retry
from pytest_osfoundry.client import ToolError
from pytest_osfoundry.engine import Fixed, Graph, LogNormal, ResultText
from pytest_osfoundry.faults import DropReplies, FaultyTransport, schedule_offline
from pytest_osfoundry.relay import Envelope, max_result_text
from pytest_osfoundry.relay._internal import SEED_ENVELOPE
from pytest_osfoundry.server import Retention, Run
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.sim._tasks import SimulationError, Task, TaskResult, derive_seed
from pytest_osfoundry.world import OsfWorld, WorldConfig

__all__ = ["make_world", "run_task"]


# ---------------------------------------------------------------------- worlds
#: Virtual seconds any single wait may take before the driver gives up.
LIMIT = 30 * 86_400.0


def seed_graph(params: SimParams) -> Graph:
    """The seed's synthetic Graph: lognormal durations with the params' median and spread."""
    return Graph(
        duration=LogNormal(
            median=params.duration_median,
            sigma=params.duration_sigma,
            minimum=min(params.duration_min, params.duration_median),
        )
    )


def make_world(
    params: SimParams,
    seed: int,
    *,
    graph: Graph | None = None,
    graphs: dict[str, Graph] | None = None,
    sessions: int = 3,
    many: bool = False,
    **config: Any,
) -> OsfWorld:
    """A world with the params' relay timing, Graph and engine stop latency.

    ``many``: a world of the many-run experiments, whose agents and relay call the
    server's state directly unless ``params.full_stack``. ``config`` goes to
    :class:`~pytest_osfoundry.world.WorldConfig` (``offline``,
    ``outbox``, ``lose_completions``, ...).
    """
    default = graph if graph is not None else seed_graph(params)
    world = OsfWorld(
        WorldConfig(
            seed=seed,
            interval=params.poll_interval,
            control_poll=params.control_poll,
            graph=default,
            graphs=graphs,
            sessions=sessions,
            stop_latency=params.stop_latency,
            protocol=params.protocol,
            direct=many and not params.full_stack,
            # An experiment reads every run and relay event it made: keep them all.
            retention=Retention.unbounded(),
            relay_history=None,
            **config,
        )
    )
    # The sim's agents and relay are the kit's own clients, whose every request is
    # proven to match MCP's schema (tests/server/test_server_request_schema.py);
    # validating them again would more than triple the sim's CPU (docs/choices.md).
    world.server.mcp.check_schema = False
    return world


def phase_delay(world: OsfWorld, rng: random.Random, interval: float) -> float:
    """Seconds from now to a uniformly random point of the next relay pass interval."""
    now = world.clock.now()
    last = world.relay.passes[-1].at if world.relay.passes else now
    grid = last + interval * math.ceil(max(0.0, now - last) / interval)
    return (grid - now) + rng.random() * interval


def new_key(rng: random.Random) -> str:
    return f"sim-{rng.getrandbits(128):032x}"


def wait_terminal(world: OsfWorld, run: Run) -> None:
    world.clock.run_until(lambda: run.status in TERMINAL_STATUSES, limit=LIMIT)


def wait_done(world: OsfWorld, record: AgentRun) -> None:
    world.clock.run_until(record.done, limit=LIMIT)
    if record.error is not None or record.command_id is None:
        raise SimulationError(f"scripted run failed: {record.error or 'no command id'}")


def scenario_graph(params: SimParams) -> Graph:
    return Graph(duration=Fixed(params.scenario_duration), result="done")


# ---------------------------------------------------------------------- baseline
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


# ---------------------------------------------------------------------- idempotency
def idempotency(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """One repetition: ``size`` runs per retry behaviour with a share of replies dropped."""
    world = make_world(params, derive_seed(params.seed, "idempotency", task.index))
    worlds.append(world)
    state = world.server.state
    gsid = world.sessions[0].graph_session_id
    out: dict[str, Any] = {}
    tokens: dict[Retry, str] = {
        "new-key": world.creds.agent_token,
        "same-key": world.creds.other_agent_token,
    }
    for retry, token in tokens.items():
        client = world.agent_client(token)
        client.initialize()  # the handshake is not a start call: drop only what follows
        drop = DropReplies(
            fraction=params.drop_replies,
            seed=derive_seed(params.seed, "idempotency-drops", task.index, retry),
        )
        client.transport = FaultyTransport(client.transport, drop)
        agent = ScriptedAgent(
            world.clock,
            client,
            retry=retry,
            seed=derive_seed(params.seed, "idempotency-agent", task.index, retry),
        )
        records = [agent.start(gsid, poll=False, delay=i * 0.01) for i in range(task.size)]
        for record in records:
            wait_done(world, record)
        cred = world.server.tokens.lookup(token, world.clock.now())
        assert cred is not None
        queued = sum(1 for run in state.runs.values() if run.agent_id == cred.principal_id)
        out[retry] = {
            "calls": sum(r.start_calls for r in records),
            "runs_queued": queued,
            "dropped": drop.dropped,
        }
    return out


# ---------------------------------------------------------------------- single scenarios
#: The seed's relay ticked this long after the desktop came back (its first start).
SEED_TICK_AFTER_ONLINE = 3.0


def offline(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Five runs queued while the desktop is offline; what happens while and after.

    The figures are the seed's reading: the relay's timer keeps its phase through the
    outage, and its next tick comes :data:`SEED_TICK_AFTER_ONLINE` after the desktop
    is back (the relay's phase is set so). ``what_if_wake_at_once`` is the kit's
    relay as it is (it passes the moment it is back, like the hook when it remounts).
    """
    seed_reading = _offline_case(params, worlds, keep_phase=True)
    wake = _offline_case(params, worlds, keep_phase=False)
    seed_reading["what_if_wake_at_once"] = {
        "first_start_after_online": wake["first_start_after_online"],
        "all_completed_after_online": wake["all_completed_after_online"],
    }
    return seed_reading


def _offline_case(params: SimParams, worlds: list[OsfWorld], keep_phase: bool) -> dict[str, Any]:
    went_offline = 1.0
    back = went_offline + params.offline_seconds
    phase = (back + SEED_TICK_AFTER_ONLINE) % params.poll_interval if keep_phase else 0.0
    world = make_world(
        params,
        derive_seed(params.seed, "offline"),
        graph=scenario_graph(params),
        relay_phase=phase,
    )
    worlds.append(world)
    if phase:
        world.relay.pass_now()  # share the sessions now; the timer's grid stays at the phase
    clock = world.clock
    t0 = clock.now()
    schedule_offline(
        clock, world.relay, t0 + went_offline, params.offline_seconds, keep_phase=keep_phase
    )
    online_at = t0 + back
    gsid = world.sessions[0].graph_session_id
    agent = world.make_agent()
    records = [
        agent.start(gsid, key=f"offline-run-{i}", poll=False, delay=went_offline + 1.0)
        for i in range(5)
    ]
    for record in records:
        wait_done(world, record)
    clock.run_until(online_at - 1e-3)
    reader = world.agent_client()
    ids = [r.command_id or "" for r in records]
    while_offline = [str(reader.get_graph_run(cid)["status"]) for cid in ids]
    executed_offline = len(world.engine.runs)
    runs = [world.server.state.runs[cid] for cid in ids]
    for run in runs:
        wait_terminal(world, run)
    after = [str(reader.get_graph_run(cid)["status"]) for cid in ids]
    starts = [r.started_at for r in runs if r.started_at is not None]
    finishes = [r.finished_at for r in runs if r.finished_at is not None]
    return {
        "queued": len(ids),
        "offline_seconds": params.offline_seconds,
        "statuses_while_offline": sorted(set(while_offline)),
        "executed_while_offline": executed_offline,
        "first_start_after_online": min(starts) - online_at if starts else None,
        "all_completed_after_online": max(finishes) - online_at if finishes else None,
        "statuses_after": sorted(set(after)),
        "executed_after": len(world.engine.runs),
    }


def _outbox_case(params: SimParams, outbox: bool, worlds: list[OsfWorld]) -> dict[str, Any]:
    world = make_world(
        params,
        derive_seed(params.seed, "outbox", outbox),
        graph=scenario_graph(params),
        outbox=outbox,
        lose_completions=1,
    )
    worlds.append(world)
    clock = world.clock
    agent = world.make_agent()
    record = agent.start(
        world.sessions[0].graph_session_id, key="outbox-run-1", poll=False, delay=1.0
    )
    wait_done(world, record)
    cid = record.command_id or ""
    run = world.server.state.runs[cid]
    watch_until = clock.now() + params.outbox_watch
    try:
        clock.run_until(lambda: run.status in TERMINAL_STATUSES, limit=params.outbox_watch)
    except TimeoutError:
        clock.run_until(max(clock.now(), watch_until))
    status = str(world.agent_client().get_graph_run(cid)["status"])
    delivered = world.relay.delivered_at(cid)
    engine_run = world.engine.runs[0] if world.engine.runs else None
    return {
        "status": status,
        "delivered_after_start": (
            None if delivered is None or run.started_at is None else delivered - run.started_at
        ),
        "lost_posts": sum(1 for e in world.relay.events if e.kind == "complete-lost"),
        "engine_outcome": None
        if engine_run is None or engine_run.outcome is None
        else engine_run.outcome.status,
        "watched_seconds": None if delivered is not None else params.outbox_watch,
    }


def outbox(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """A completion POST lost once, with the outbox on and off."""
    return {
        "with_outbox": _outbox_case(params, True, worlds),
        "without_outbox": _outbox_case(params, False, worlds),
    }


def truncation(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Results of exactly the boundary size and one more, through relay and server.

    The boundary is computed for the envelope the relay really posts (its own
    execution ids, the run's tokens and cost, read back from a first probe run), then
    a Graph of that many characters and one of one more are run. The seed's envelope
    figure comes from :func:`~pytest_osfoundry.relay._bounded.max_result_text`.
    """
    world = make_world(
        params, derive_seed(params.seed, "truncation"), graph=scenario_graph(params), sessions=5
    )
    worlds.append(world)
    agent = world.make_agent()
    reader = world.agent_client()
    ids = [s.graph_session_id for s in world.sessions]

    def run(index: int, graph: Graph) -> dict[str, Any]:
        world.engine.graphs[ids[index]] = graph
        record = agent.start(ids[index], key=f"truncation-{index}", poll=False)
        wait_done(world, record)
        wait_terminal(world, world.server.state.runs[record.command_id or ""])
        return reader.get_graph_run(record.command_id or "")

    probe = run(0, Graph(duration=Fixed(params.scenario_duration), result=""))
    envelope = Envelope(
        execution_id=str(probe["execution_id"]),
        status=COMPLETED,
        total_tokens=probe.get("total_tokens"),
        reported_cost=probe.get("reported_cost"),
    )
    out: dict[str, Any] = {
        "envelope_overhead": envelope.overhead(),
        "seed_envelope_overhead": SEED_ENVELOPE.overhead(),
    }
    for slot, (name, char, width) in enumerate((("ascii", "a", 1), ("japanese", "日", 3))):
        fits = max_result_text(char, envelope)
        alphabet = name  # ResultText's named alphabets: "ascii", "japanese" (日本語...)
        fitting = run(
            1 + 2 * slot,
            Graph(duration=Fixed(params.scenario_duration), result=ResultText(fits, alphabet)),
        )
        over = run(
            2 + 2 * slot,
            Graph(duration=Fixed(params.scenario_duration), result=ResultText(fits + 1, alphabet)),
        )
        result = fitting.get("result")
        kept = isinstance(result, str) and len(result) == fits
        if len(str(fitting.get("execution_id", ""))) != len(envelope.execution_id):
            raise SimulationError("the relay's execution ids changed length between runs")
        out[name] = {
            "fits_chars": fits if kept else None,
            "fits_bytes": len(result.encode("utf-8")) if kept and isinstance(result, str) else None,
            "one_more": "result_truncated"
            if over.get("result_truncated") is True
            else "result kept",
            "seed_envelope_fits_chars": max_result_text(char),
            "seed_envelope_fits_bytes": max_result_text(char) * width,
        }
    return out


def access(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Another agent of the same account reads (and cancels) the run."""
    world = make_world(params, derive_seed(params.seed, "access"), graph=scenario_graph(params))
    worlds.append(world)
    record = world.make_agent().start(
        world.sessions[0].graph_session_id, key="access-run-1", poll=False
    )
    wait_done(world, record)
    cid = record.command_id or ""
    other = world.agent_client(world.creds.other_agent_token)

    def error_of(call: Callable[[], Any]) -> str | None:
        try:
            call()
        except ToolError as err:
            return err.message
        return None

    invented = "00000000-0000-4000-8000-000000000000"
    read = error_of(lambda: other.get_graph_run(cid))
    return {
        "error": read,
        "cancel_error": error_of(lambda: other.cancel_graph_run(cid)),
        "same_as_unknown_id": read == error_of(lambda: other.get_graph_run(invented)),
        "owner_can_read": error_of(lambda: world.agent_client().get_graph_run(cid)) is None,
        "status_after": world.server.state.runs[cid].status,
    }


# ---------------------------------------------------------------------- running a task
_RUNNERS: dict[str, Callable[[SimParams, Task, list[OsfWorld]], dict[str, Any]]] = {
    "baseline": baseline,
    "fanout": fanout,
    "cancel": cancel,
    "idempotency": idempotency,
    "offline": offline,
    "outbox": outbox,
    "truncation": truncation,
    "access": access,
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
