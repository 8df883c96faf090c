"""The single scenarios: offline desktop, lost completion (outbox), the result bound,
another agent's access."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_osfoundry._vocabulary import COMPLETED, TERMINAL_STATUSES
from pytest_osfoundry.client._errors import ToolError
from pytest_osfoundry.engine._graph import Fixed, Graph, ResultText
from pytest_osfoundry.faults import schedule_offline
from pytest_osfoundry.relay._bounded import SEED_ENVELOPE, Envelope, max_result_text
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.sim._tasks import SimulationError, Task, derive_seed
from pytest_osfoundry.sim._worlds import make_world, scenario_graph, wait_done, wait_terminal
from pytest_osfoundry.world import OsfWorld

__all__ = ["access", "offline", "outbox", "truncation"]


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
