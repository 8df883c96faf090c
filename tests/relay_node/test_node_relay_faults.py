"""The Node example relay under cancels, bad ids, faults and signals (loopback, end to end)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry._vocabulary import cut_error
from tests.relay_node._harness import ADAPTER, CONTROL_POLL, INTERVAL, session, wait_for
from tests.relay_node._world import NO_NODE, NodeWorld


def _plan(**changes: Any) -> Any:
    base = {
        "duration": 0.3,
        "status": "completed",
        "result": {"ok": True},
        "error": None,
        "total_tokens": 7,
        "reported_cost": 0.25,
    }
    return lambda _cid: {**base, **changes}


def test_a_cancel_flag_cancels_the_engine_once(node_world: NodeWorld) -> None:
    w = node_world
    w.driver.plan = _plan(duration=30)
    w.start("cancel-running")
    cid = w.queue(0)
    wait_for(lambda: w.driver.runs, what="the Graph run")
    assert w.agent.cancel_graph_run(cid)["cancel_requested"] is True
    run = w.finished(cid)
    assert run["status"] == "cancelled"
    [complete] = w.server.requests("complete", cid)
    assert complete.body["status"] == "cancelled" and complete.body.get("result") is None
    time.sleep(3 * CONTROL_POLL + INTERVAL)
    assert [c.command_id for c in w.driver.cancels] == [cid], "the engine's cancel, once"
    assert all(p.at < complete.at for p in w.server.requests("control", cid))


def test_cancelled_even_when_the_graph_finished_after_the_flag(node_world: NodeWorld) -> None:
    w = node_world
    w.driver.plan = _plan(duration=0.4)
    w.server.delay["control"] = 0.8  # the Graph ends while the poll that sees the flag waits
    w.start("cancel-after-finish")
    cid = w.queue(0)
    wait_for(lambda: w.driver.runs, what="the Graph run")
    w.agent.cancel_graph_run(cid)
    run = w.finished(cid)
    assert run["status"] == "cancelled" and run.get("result") is None
    [engine_run], [cancel] = w.driver.runs, w.driver.cancels
    assert cancel.command_id == cid
    assert cancel.at - engine_run.at > 0.4, "the Graph had ended (0.4 s) when the flag was seen"


def test_a_start_answered_cancelled_is_never_run(node_world: NodeWorld) -> None:
    w = node_world
    fired: list[bool] = []

    def cancel_while_answering(answer: dict[str, Any]) -> None:
        if answer["commands"] and not fired:
            fired.append(True)
            w.cancel_from_another_thread(answer["commands"][0]["command_id"])

    w.server.on_sync = cancel_while_answering
    w.start("start-cancelled")
    cid = w.queue(0)
    wait_for(lambda: w.server.requests("start", cid), what="the start")
    time.sleep(2 * INTERVAL)
    assert w.driver.runs == [], "no run after a start answered cancelled"
    assert w.server.requests("control", cid) == []
    assert w.agent.get_graph_run(cid)["status"] == "cancelled"


def test_failed_with_its_error_cut_to_2000_units(node_world: NodeWorld) -> None:
    error = "é" * 1999 + "😀" + "x" * 500  # unit 2,000 is the emoji's first half
    w = node_world
    w.driver.plan = _plan(status="failed", result=None, error=error)
    w.start("failed")
    cid = w.queue(0)
    run = w.finished(cid)
    [complete] = w.server.requests("complete", cid)
    assert complete.body["status"] == "failed"
    assert complete.body["error"] == cut_error(error) == "é" * 1999, "never half an emoji"
    assert run["status"] == "failed" and run["error"] == "é" * 1999


def test_a_command_id_that_is_not_a_uuid_is_never_touched(node_world: NodeWorld) -> None:
    w = node_world
    s0 = w.sessions[0]

    def inject(answer: dict[str, Any]) -> dict[str, Any]:
        bogus = {
            "command_id": "not-a-uuid",
            "graph_session_id": s0["graph_session_id"],
            "slug": s0["slug"],
            "arguments": {},
            "queued_at": "2026-01-01T00:00:00Z",
        }
        return {**answer, "commands": [bogus, *answer["commands"]]}

    w.server.on_sync = inject
    w.start("non-uuid")
    cid = w.queue(0)
    assert w.finished(cid)["status"] == "completed", "the relay goes on with the real one"
    assert not [s for s in w.server.sent if "not-a-uuid" in s.path]
    assert [r.command_id for r in w.driver.runs] == [cid]


def test_a_lost_start_answer_is_retried_and_the_graph_runs_once(node_world: NodeWorld) -> None:
    w = node_world
    w.server.lose["start"] = 1
    w.start("start-lost")
    cid = w.queue(0)
    assert w.finished(cid)["status"] == "completed"
    first, second = w.server.requests("start", cid)
    assert first.body == second.body, "the same execution id"
    assert [r.command_id for r in w.driver.runs] == [cid]


def test_passes_keep_their_cadence_through_5xx_and_a_time_out(node_world: NodeWorld) -> None:
    w = node_world
    w.server.refuse.update({"sync": 3, "control": 2, "complete": 1})
    w.start("faults")
    w.server.delay["sync"] = 3.0  # over the relay's 2 s time-out: one sync times out
    wait_for(lambda: len(w.server.requests("sync")) >= 4, what="the sync that times out")
    w.server.delay.pop("sync")
    syncs_before = len(w.server.requests("sync"))
    cid = w.queue(0)
    assert w.finished(cid)["status"] == "completed", "nothing lost"
    wait_for(lambda: len(w.server.requests("sync")) >= syncs_before + 6, what="more passes")
    times = [s.at for s in w.server.requests("sync")[syncs_before:]]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert 0.5 * INTERVAL <= statistics.median(gaps) <= 2.0 * INTERVAL, gaps


def test_a_sharing_change_brings_a_pass_at_once(node_world: NodeWorld) -> None:
    w = node_world
    w.start("sharing-change", interval=30)
    time.sleep(0.5)
    assert len(w.server.requests("sync")) == 1
    added = session(9)
    changed_at = time.monotonic()
    w.driver.change(lambda projects: projects[0]["sessions"].append(added))
    sync = wait_for(lambda: w.server.requests("sync")[1:], seconds=10, what="a second sync")[0]
    assert sync.at - changed_at < 5, "a pass at once, not at the next 30 s tick"
    assert added["graph_session_id"] in {s["graph_session_id"] for s in sync.body["sessions"]}


def test_sigterm_ends_the_relay_promptly_with_its_outbox_intact(node_world: NodeWorld) -> None:
    w = node_world
    hold = w.server.hold_completes = threading.Event()
    relay = w.start("sigterm")
    cid = w.queue(0, {"n": 1})
    wait_for(lambda: w.server.requests("complete", cid), what="the completion POST")
    begun = time.monotonic()
    assert relay.stop(signal.SIGTERM) == 0
    assert time.monotonic() - begun < 3, "SIGTERM ends the relay promptly"
    w.server.hold_completes = None
    hold.set()
    [[outboxed_id, body]] = w.outbox()
    assert outboxed_id == cid and body == w.server.requests("complete", cid)[0].body
    assert "1 completion(s) wait in the outbox" in relay.stderr()


def test_a_refused_connection_is_survived(node: str | None, tmp_path: Path) -> None:
    if node is None:
        pytest.skip(NO_NODE)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "OSF_RELAY_URL": "http://127.0.0.1:9",
        "OSF_DESKTOP_TOKEN": "secret-desktop-token",
        "OSF_RELAY_DRIVER": "http://127.0.0.1:9",
        "OSF_RELAY_STATE_DIR": str(tmp_path),
        "OSF_RELAY_INTERVAL": "0.2",
    }
    proc = subprocess.Popen(
        [node, str(ADAPTER)], env=env, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    time.sleep(1.5)
    alive = proc.poll() is None
    os.killpg(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert alive, err
    assert err.count("sharing-unavailable") >= 4, "a pass every interval, each one failing"
    assert "secret-desktop-token" not in err


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"OSF_DESKTOP_TOKEN": ""}, "ERROR: OSF_DESKTOP_TOKEN is not set"),
        ({"OSF_RELAY_URL": "ftp://x"}, "ERROR: OSF_RELAY_URL must be an http(s) URL"),
        ({"OSF_RELAY_CONTROL_POLL": "-1"}, "ERROR: OSF_RELAY_CONTROL_POLL must be a positive"),
        ({"OSF_RELAY_STATE_DIR": "/nonexistent/state"}, "ERROR: outbox folder"),
        ({"outbox": "[1, 2]"}, "is not an outbox file"),
    ],
    ids=["no-token", "bad-url", "bad-poll", "no-state-dir", "bad-outbox"],
)
def test_bad_environment_is_one_error_line_and_exit_2(
    node: str | None, tmp_path: Path, env: dict[str, str], message: str
) -> None:
    if node is None:
        pytest.skip(NO_NODE)
    (tmp_path / "outbox.json").write_text(env.pop("outbox", json.dumps({"entries": []})))
    full = {
        "PATH": os.environ.get("PATH", ""),
        "OSF_RELAY_URL": "http://127.0.0.1:9",
        "OSF_DESKTOP_TOKEN": "secret-desktop-token",
        "OSF_RELAY_DRIVER": "http://127.0.0.1:9",
        "OSF_RELAY_STATE_DIR": str(tmp_path),
        **env,
    }
    done = subprocess.run(
        [node, str(ADAPTER)], env=full, capture_output=True, text=True, timeout=20, check=False
    )
    assert done.returncode == 2
    assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "secret-desktop-token" not in done.stderr


def test_a_driver_that_answers_5xx_costs_no_pass_and_no_command(node_world: NodeWorld) -> None:
    w = node_world
    w.start("driver-5xx")
    before = len(w.server.requests("sync"))
    w.driver.refuse_sharing = 8
    wait_for(lambda: w.driver.refuse_sharing == 0, what="eight refused sharing reads")
    wait_for(lambda: len(w.server.requests("sync")) >= before + 9, what="syncs after them")
    times = [s.at for s in w.server.requests("sync")[before - 1 :]]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert max(gaps) < 4 * INTERVAL, f"a pass (and its sync) every interval: {gaps}"
    cid = w.queue(0)
    assert w.finished(cid)["status"] == "completed", "nothing lost"
    assert [r.command_id for r in w.driver.runs] == [cid]


def test_without_the_timing_variables_the_production_cadence_is_used(
    node: str | None, tmp_path: Path
) -> None:
    if node is None:
        pytest.skip(NO_NODE)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "OSF_RELAY_URL": "http://127.0.0.1:9",
        "OSF_DESKTOP_TOKEN": "secret-desktop-token",
        "OSF_RELAY_DRIVER": "http://127.0.0.1:9",
        "OSF_RELAY_STATE_DIR": str(tmp_path),
    }
    proc = subprocess.Popen(
        [node, str(ADAPTER)], env=env, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()
    os.killpg(proc.pid, signal.SIGTERM)
    proc.communicate(timeout=10)
    assert "interval 20 s, control poll 3 s" in first, first
