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
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_osfoundry._vocabulary import CANCELLED, COMPLETED, RUNNING, TERMINAL_STATUSES
from pytest_osfoundry.agent._scripted import AgentRun, Retry, ScriptedAgent
from pytest_osfoundry.client._errors import ToolError
from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.engine._graph import Fixed, Graph, LogNormal, ResultText
from pytest_osfoundry.faults import DropReplies, FaultyTransport
from pytest_osfoundry.relay._bounded import SEED_ENVELOPE, Envelope, max_result_text
from pytest_osfoundry.server._state import Run
from pytest_osfoundry.sim import _stats as stats
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.world import OsfWorld, WorldConfig

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

#: Virtual seconds any single wait may take before the driver gives up.
_LIMIT = 30 * 86_400.0
#: Runs per task; fixed so that results never depend on ``--jobs``.
_BASELINE_CHUNK = 250
_FANOUT_CHUNK_RUNS = 500
_CANCEL_CHUNK = 500
_RETRY_NAMES: dict[Retry, str] = {"new-key": "new key on retry", "same-key": "same key on retry"}


class SimulationError(RuntimeError):
    """A component did something an experiment cannot read a figure from."""


def derive_seed(seed: int, *parts: object) -> int:
    """A 48-bit seed from the master seed and ``parts`` (stable across runs and platforms)."""
    text = ":".join(str(p) for p in (seed, *parts))
    return random.Random(text).getrandbits(48)


# ---------------------------------------------------------------------- worlds
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
    **config: Any,
) -> OsfWorld:
    """A world with the params' relay timing, Graph and engine stop latency.

    ``config`` goes to :class:`~pytest_osfoundry.world.WorldConfig` (``offline``,
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
            **config,
        )
    )
    # The sim's agents and relay are the kit's own clients, whose every request is
    # proven to match MCP's schema (tests/server/test_server_request_schema.py);
    # validating them again would more than triple the sim's CPU (docs/choices.md).
    world.server.mcp.check_schema = False
    return world


def _clock(world: OsfWorld) -> VirtualClock:
    return world.clock


def _phase_delay(world: OsfWorld, rng: random.Random, interval: float) -> float:
    """Seconds from now to a uniformly random point of the next relay pass interval."""
    now = world.clock.now()
    last = world.relay.passes[-1].at if world.relay.passes else now
    grid = last + interval * math.ceil(max(0.0, now - last) / interval)
    return (grid - now) + rng.random() * interval


def _key(rng: random.Random) -> str:
    return f"sim-{rng.getrandbits(128):032x}"


def _wait_terminal(world: OsfWorld, run: Run) -> None:
    world.clock.run_until(lambda: run.status in TERMINAL_STATUSES, limit=_LIMIT)


def _wait_done(world: OsfWorld, record: AgentRun) -> None:
    world.clock.run_until(record.done, limit=_LIMIT)
    if record.error is not None or record.command_id is None:
        raise SimulationError(f"scripted run failed: {record.error or 'no command id'}")


# ---------------------------------------------------------------------- tasks
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


# ---------------------------------------------------------------------- baseline
def _baseline(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Per run: pickup wait, result (``finished_at - queued_at``) and, when watched,
    each strategy's calls and lateness."""
    world = make_world(params, derive_seed(params.seed, "baseline", task.index))
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
        delay = _phase_delay(world, rng, params.poll_interval)
        key = _key(rng)
        if watchers:
            records = [agent.start(gsid, key=key, delay=delay) for agent in watchers]
            for record in records:
                _wait_done(world, record)
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
            _wait_done(world, record)
            run = runs[record.command_id or ""]
            starter.runs.clear()
        # Watched, every agent has seen a terminal status, so this returns at once.
        _wait_terminal(world, run)
        if run.started_at is None:
            raise SimulationError(f"run ended {run.status} without starting")
        if run.status != COMPLETED or run.finished_at is None:
            raise SimulationError(f"a baseline run ended {run.status}")
        pickup.append(run.started_at - run.queued_at)
        finished.append(run.finished_at - run.queued_at)
    return {"pickup": pickup, "finished": finished, "calls": calls, "late": late}


# ---------------------------------------------------------------------- fanout
def _fanout(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """First and last result (server ``finished_at - queued_at``) of batches of ``option`` runs."""
    k = task.option
    world = make_world(params, derive_seed(params.seed, "fanout", k, task.index))
    worlds.append(world)
    runs = world.server.state.runs
    gsid = world.sessions[0].graph_session_id
    rng = random.Random(derive_seed(params.seed, "fanout-driver", k, task.index))
    agent = world.make_agent()
    first: list[float] = []
    last: list[float] = []
    for _ in range(task.size):
        delay = _phase_delay(world, rng, params.poll_interval)
        records = [agent.start(gsid, key=_key(rng), poll=False, delay=delay) for _ in range(k)]
        for record in records:
            _wait_done(world, record)
        batch = [runs[r.command_id or ""] for r in records]
        for run in batch:
            _wait_terminal(world, run)
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
def _cancel(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Cancel each run at U(0, window) after queueing; classify and time the outcome."""
    world = make_world(params, derive_seed(params.seed, "cancel", task.index))
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
        delay = _phase_delay(world, rng, params.poll_interval)
        after = rng.uniform(0.0, params.cancel_window)
        record = agent.start(gsid, key=_key(rng), poll=False, cancel_after=after, delay=delay)
        _wait_done(world, record)
        run = runs[record.command_id or ""]
        world.clock.run_until(_cancel_settled(record, run), limit=_LIMIT)
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
def _idempotency(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
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
            _wait_done(world, record)
        cred = world.server.tokens.lookup(token, world.clock.now())
        assert cred is not None
        queued = sum(1 for run in state.runs.values() if run.agent_id == cred.principal_id)
        out[retry] = {
            "calls": sum(r.start_calls for r in records),
            "runs_queued": queued,
            "dropped": drop.dropped,
        }
    return out


# ---------------------------------------------------------------------- scenarios
def _scenario_graph(params: SimParams) -> Graph:
    return Graph(duration=Fixed(params.scenario_duration), result="done")


def _offline(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Five runs queued while the desktop is offline; what happens while and after."""
    went_offline = 1.0
    world = make_world(
        params,
        derive_seed(params.seed, "offline"),
        graph=_scenario_graph(params),
        offline=(went_offline, params.offline_seconds),
    )
    worlds.append(world)
    clock = _clock(world)
    t0 = clock.now()
    online_at = t0 + went_offline + params.offline_seconds
    gsid = world.sessions[0].graph_session_id
    agent = world.make_agent()
    records = [
        agent.start(gsid, key=f"offline-run-{i}", poll=False, delay=went_offline + 1.0)
        for i in range(5)
    ]
    for record in records:
        _wait_done(world, record)
    clock.run_until(online_at - 1e-3)
    reader = world.agent_client()
    ids = [r.command_id or "" for r in records]
    while_offline = [str(reader.get_graph_run(cid)["status"]) for cid in ids]
    executed_offline = len(world.engine.runs)
    runs = [world.server.state.runs[cid] for cid in ids]
    for run in runs:
        _wait_terminal(world, run)
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
        graph=_scenario_graph(params),
        outbox=outbox,
        lose_completions=1,
    )
    worlds.append(world)
    clock = _clock(world)
    agent = world.make_agent()
    record = agent.start(
        world.sessions[0].graph_session_id, key="outbox-run-1", poll=False, delay=1.0
    )
    _wait_done(world, record)
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


def _outbox(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """A completion POST lost once, with the outbox on and off."""
    return {
        "with_outbox": _outbox_case(params, True, worlds),
        "without_outbox": _outbox_case(params, False, worlds),
    }


def _truncation(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Results of exactly the boundary size and one more, through relay and server.

    The boundary is computed for the envelope the relay really posts (its own
    execution ids, the run's tokens and cost, read back from a first probe run), then
    a Graph of that many characters and one of one more are run. The seed's envelope
    figure comes from :func:`~pytest_osfoundry.relay._bounded.max_result_text`.
    """
    world = make_world(
        params, derive_seed(params.seed, "truncation"), graph=_scenario_graph(params), sessions=5
    )
    worlds.append(world)
    agent = world.make_agent()
    reader = world.agent_client()
    ids = [s.graph_session_id for s in world.sessions]

    def run(index: int, graph: Graph) -> dict[str, Any]:
        world.engine.graphs[ids[index]] = graph
        record = agent.start(ids[index], key=f"truncation-{index}", poll=False)
        _wait_done(world, record)
        _wait_terminal(world, world.server.state.runs[record.command_id or ""])
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


def _access(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """Another agent of the same account reads (and cancels) the run."""
    world = make_world(params, derive_seed(params.seed, "access"), graph=_scenario_graph(params))
    worlds.append(world)
    record = world.make_agent().start(
        world.sessions[0].graph_session_id, key="access-run-1", poll=False
    )
    _wait_done(world, record)
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


_RUNNERS: dict[str, Callable[[SimParams, Task, list[OsfWorld]], dict[str, Any]]] = {
    "baseline": _baseline,
    "fanout": _fanout,
    "cancel": _cancel,
    "idempotency": _idempotency,
    "offline": _offline,
    "outbox": _outbox,
    "truncation": _truncation,
    "access": _access,
}


# ---------------------------------------------------------------------- combining
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
                        "calls_p95": stats.percentile(calls, 95),
                        "late_mean": stats.mean(late),
                        "late_p95": stats.percentile(late, 95),
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
                        "last_p95": stats.percentile(last, 95),
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
        "running_terminal_after_p95": stats.percentile(running, 95) if running else None,
        "running_terminal_after_max": max(running) if running else None,
        "final_status": dict(sorted(states.items())),
    }
