"""The Node example relay (``examples/relay-node``) end to end on loopback.

The relay runs as ``node adapter.mjs`` against the reference server and a minimal
driver (``_harness.py``); each test judges it only on what the server received and
what the driver's engine was asked, as the relay suite will.
"""

from __future__ import annotations

import itertools
import signal
import statistics
import threading
import time
from typing import Any

import pytest

from pytest_osfoundry._jslength import js_stringify_length
from pytest_osfoundry._vocabulary import NO_LONGER_SHARED
from pytest_osfoundry.relay._bounded import Envelope, bounded_completion
from tests.relay_node._harness import CONTROL_POLL, INTERVAL, session, wait_for
from tests.relay_node._world import NODE_PATHS, NodeWorld

PLAIN = ("graph_session_id", "name", "description", "slug", "version", "status")


def _plain(session: dict[str, Any]) -> dict[str, Any]:
    return {key: session[key] for key in PLAIN}


@pytest.mark.parametrize("node", NODE_PATHS)
def test_sync_start_run_complete_on_every_node_found(node_world: NodeWorld) -> None:
    w = node_world
    relay = w.start("happy-path")
    first = w.server.requests("sync")[0]
    assert first.body == {
        "project_id": w.project_id,
        "sessions": [_plain(s) for s in w.sessions if s["ticked"]],
    }, "a sync carries the ticked sessions only, with their six fields"
    cid = w.queue(0, {"topic": "sales"})
    run = w.finished(cid)

    assert run["status"] == "completed" and run["result"] == {"ok": True}
    assert run["total_tokens"] == 7 and run["reported_cost"] == 0.25
    [engine_run] = w.driver.runs
    assert engine_run.body == {
        "command_id": cid,
        "channel": f"graph:external:{cid}",
        "graph_session_id": w.sessions[0]["graph_session_id"],
        "arguments": {"topic": "sales"},
    }
    [start] = w.server.requests("start", cid)
    [complete] = w.server.requests("complete", cid)
    assert start.at < engine_run.at < complete.at, "start, then run, then complete"
    assert complete.body == {
        "execution_id": start.body["execution_id"],
        "status": "completed",
        "result": {"ok": True},
        "total_tokens": 7,
        "reported_cost": 0.25,
    }
    time.sleep(3 * CONTROL_POLL + INTERVAL)
    polls = w.server.requests("control", cid)
    assert polls, "a running command is control-polled"
    assert all(engine_run.at < p.at < complete.at for p in polls), "no control poll after the run"
    assert w.outbox() == [], "a delivered completion leaves the outbox"
    syncs = w.server.requests("sync")
    assert len(syncs) >= 3 and {s.body["project_id"] for s in syncs} == {w.project_id}, (
        "passes go on, and the disabled project is never synced"
    )
    assert relay.stop() == 0


def _untick(projects: list[dict[str, Any]]) -> None:
    projects[0]["sessions"][0]["ticked"] = False


def _disable(projects: list[dict[str, Any]]) -> None:
    projects[0]["enabled"] = False


def _rename_slug(projects: list[dict[str, Any]]) -> None:
    projects[0]["sessions"][0]["slug"] = "renamed-graph"


def _rename_name(projects: list[dict[str, Any]]) -> None:
    projects[0]["sessions"][0]["name"] = "A new name"
    projects[0]["sessions"][0]["description"] = "A new description."


@pytest.mark.parametrize(
    ("change", "cancels"),
    [(_untick, True), (_disable, True), (_rename_slug, True), (_rename_name, False)],
    ids=["untick", "disable", "slug-renamed", "name-changed"],
)
def test_recheck_before_run(node_world: NodeWorld, change: Any, cancels: bool) -> None:
    w = node_world
    w.start("recheck")

    fired: list[bool] = []

    def change_while_answering(answer: dict[str, Any]) -> None:
        if answer["commands"] and not fired:
            fired.append(True)
            w.driver.change(change)

    w.server.on_sync = change_while_answering
    cid = w.queue(0)
    run = w.finished(cid)
    if not cancels:
        assert run["status"] == "completed", "a change that keeps the slug is no reason to cancel"
        assert [r.command_id for r in w.driver.runs] == [cid]
        return
    assert run["status"] == "cancelled"
    [complete] = w.server.requests("complete", cid)
    assert complete.body["status"] == "cancelled"
    assert complete.body["error"] == NO_LONGER_SHARED
    time.sleep(2 * INTERVAL)
    assert w.server.requests("start", cid) == [], "never started"
    assert w.driver.runs == [], "never run"


def _shaped(char: str, total: int, execution_id: str) -> str:
    """A result text whose completion is exactly ``total`` UTF-16 units long."""
    room = total - Envelope(execution_id, "completed", 7, 0.25).overhead()
    width = js_stringify_length(char) - 2
    return char * (room // width) + "a" * (room % width)


@pytest.mark.parametrize(
    ("char", "total"),
    [
        ("a", 100_000),
        ("a", 100_001),
        ("日", 100_000),
        ("日", 100_001),
        ("😀", 100_000),
        ("😀", 100_001),
    ],
    ids=["ascii-fits", "ascii-over", "japanese-fits", "japanese-over", "emoji-fits", "emoji-over"],
)
def test_the_bound_is_json_stringify_length(node_world: NodeWorld, char: str, total: int) -> None:
    w = node_world
    shaped: dict[str, str] = {}

    def plan(command_id: str) -> dict[str, Any]:
        # The driver learns the execution id from the start the server received.
        execution_id = w.server.requests("start", command_id)[-1].body["execution_id"]
        shaped["text"] = _shaped(char, total, execution_id)
        shaped["execution_id"] = execution_id
        return {
            "duration": 0.05,
            "status": "completed",
            "result": shaped["text"],
            "error": None,
            "total_tokens": 7,
            "reported_cost": 0.25,
        }

    w.driver.plan = plan
    w.start(f"bound-{total}")
    cid = w.queue(0)
    run = w.finished(cid)
    [complete] = w.server.requests("complete", cid)
    full = {
        "execution_id": shaped["execution_id"],
        "status": "completed",
        "result": shaped["text"],
        "total_tokens": 7,
        "reported_cost": 0.25,
    }
    assert js_stringify_length(full) == total
    assert complete.body == bounded_completion(
        execution_id=shaped["execution_id"],
        status="completed",
        result=shaped["text"],
        total_tokens=7,
        reported_cost=0.25,
    )
    if total <= 100_000:
        assert run["result"] == shaped["text"] and "result_truncated" not in run
    else:
        assert complete.body == {
            "execution_id": shaped["execution_id"],
            "status": "completed",
            "result_truncated": True,
        }, "all or nothing: no part of the result"
        assert run["result_truncated"] is True and "result" not in run


def test_a_refused_completion_is_sent_again_from_the_outbox(node_world: NodeWorld) -> None:
    w = node_world
    w.server.refuse["complete"] = 1
    w.start("outbox-503")
    cid = w.queue(0)
    run = w.finished(cid)
    assert run["status"] == "completed"
    first, second = w.server.requests("complete", cid)
    assert first.body == second.body, "the outbox re-sends the same body"
    time.sleep(3 * INTERVAL)
    assert len(w.server.requests("complete", cid)) == 2, "nothing re-sent after a 2xx"
    assert w.outbox() == []
    assert len(w.driver.runs) == 1


def test_sigkill_mid_completion_then_restart_delivers_once(node_world: NodeWorld) -> None:
    w = node_world
    hold = w.server.hold_completes = threading.Event()
    relay = w.start("sigkill-first-life")
    cid = w.queue(0)
    wait_for(lambda: w.server.requests("complete", cid), what="the completion POST")
    [[outboxed_id, outboxed]] = w.outbox()
    assert outboxed_id == cid and outboxed["status"] == "completed", (
        "the completion is in the outbox file before its POST arrives"
    )
    relay.stop(signal.SIGKILL)
    w.server.hold_completes = None
    hold.set()
    assert w.agent.get_graph_run(cid)["status"] == "running"

    restarted_at = time.monotonic()
    w.start("sigkill-second-life")
    run = w.finished(cid)
    assert run["status"] == "completed" and run["result"] == {"ok": True}
    first_request = next(s for s in w.server.sent if s.at >= restarted_at)
    assert (first_request.action, first_request.command_id) == ("complete", cid), "outbox first"
    held, delivered = w.server.requests("complete", cid)
    assert held.body == delivered.body == outboxed
    time.sleep(2 * INTERVAL)
    assert len(w.driver.runs) == 1, "the Graph never runs a second time"
    assert w.outbox() == []


def test_commands_run_one_after_another(node_world: NodeWorld) -> None:
    w = node_world
    w.driver.plan = lambda _cid: {
        "duration": 0.5,
        "status": "completed",
        "result": "done",
        "error": None,
        "total_tokens": 1,
        "reported_cost": 0,
    }
    w.start("serial")
    first, second = w.queue(0), w.queue(1)
    assert w.finished(first)["status"] == w.finished(second)["status"] == "completed"
    [done_first] = w.server.requests("complete", first)
    [start_second] = w.server.requests("start", second)
    assert [r.command_id for r in w.driver.runs] == [first, second], "oldest first"
    assert start_second.at > done_first.at, "one desktop is one worker: no overlap"


def test_a_sync_carries_the_first_100_ticked_sessions(node_world: NodeWorld) -> None:
    w = node_world
    extra = [session(10 + i) for i in range(148)]
    w.driver.change(lambda projects: projects[0]["sessions"].extend(extra))
    w.start("sync-cap")
    ticked = [_plain(s) for s in w.sessions if s["ticked"]]
    assert len(ticked) == 150
    assert w.server.requests("sync")[0].body["sessions"] == ticked[:100]


def test_control_polls_come_every_control_interval_while_running(node_world: NodeWorld) -> None:
    w = node_world
    w.driver.plan = lambda _cid: {
        "duration": 1.5,
        "status": "completed",
        "result": None,
        "error": None,
        "total_tokens": 1,
        "reported_cost": 0,
    }
    w.start("control-cadence")
    cid = w.queue(0)
    assert w.finished(cid)["status"] == "completed"
    times = [p.at for p in w.server.requests("control", cid)]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) >= 5, f"1.5 s of run at {CONTROL_POLL} s: {len(times)} polls"
    assert 0.5 * CONTROL_POLL <= statistics.median(gaps) <= 2 * CONTROL_POLL, gaps
