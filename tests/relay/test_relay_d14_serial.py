"""D14: one command at a time, on channel graph:external:<command id>, then the completion."""

from __future__ import annotations

from itertools import pairwise

from pytest_osfoundry.engine import Graph, LogNormal, Uniform
from tests.relay.osf_relay_kit import T0, queue, recorded_relay, stamp, view, world


def test_five_queued_runs_run_strictly_one_after_another() -> None:
    w = world(graph=Graph(duration=LogNormal(median=60, sigma=0.85, minimum=5), result="done"))
    w.clock.advance(1)
    ids = [queue(w, index=i % 3, key=f"serial-key-{i}") for i in range(5)]
    w.clock.run_until(lambda: all(w.run_view(c)["status"] == "completed" for c in ids))
    runs = w.engine.runs
    assert len(runs) == 5
    assert [r.channel for r in runs] == [f"graph:external:{c}" for c in ids]
    for earlier, later in pairwise(runs):
        assert earlier.ended_at is not None
        assert earlier.ended_at <= later.started_at, "engine run intervals must not overlap"
    # The server saw the same order: each run started after the previous finished.
    views = [view(w, c) for c in ids]
    for before, after in pairwise(views):
        assert stamp(before["finished_at"]) <= stamp(after["started_at"])
    assert [stamp(v["started_at"]) for v in views] == sorted(stamp(v["started_at"]) for v in views)
    assert w.relay.executed == ids


def test_never_more_than_one_engine_run_is_active() -> None:
    w = world(graph=Graph(duration=Uniform(5, 40)))
    w.clock.advance(1)
    ids = [queue(w, index=i % 3, key=f"active-key-{i}") for i in range(5)]
    most = 0
    for _ in range(400):
        w.clock.advance(1)
        most = max(most, len(w.engine.active))
    assert most == 1
    assert all(w.run_view(c)["status"] == "completed" for c in ids)


def test_the_relay_starts_posts_and_only_then_takes_the_next() -> None:
    w = world(start_relay=False, graph=Graph(duration=10, result={"n": 1}))
    relay, rec = recorded_relay(w)
    relay.start()
    w.clock.advance(1)
    a = queue(w, index=0)
    b = queue(w, index=1)
    w.clock.advance(40)
    steps = [(s.at - T0, s.action, s.command_id) for s in rec.sent if s.action != "control"]
    assert steps[1:] == [
        (20, "sync", None),
        (20, "start", a),
        (30, "complete", a),
        (30, "start", b),
        (40, "complete", b),
    ]


def test_the_engine_gets_the_arguments_and_the_server_the_bounded_result() -> None:
    w = world(
        graph=Graph(duration=12, result={"rows": [1, 2, 3]}, total_tokens=77, reported_cost=0.25)
    )
    w.clock.advance(1)
    cid = queue(w, arguments={"region": "EMEA", "limit": 3})
    w.clock.advance(40)
    (run,) = w.engine.runs
    assert run.arguments == {"region": "EMEA", "limit": 3}
    assert run.graph_session_id == w.sessions[0].graph_session_id
    seen = view(w, cid)
    assert seen["status"] == "completed"
    assert seen["result"] == {"rows": [1, 2, 3]}
    assert seen["total_tokens"] == 77
    assert seen["reported_cost"] == 0.25
    assert stamp(seen["started_at"]) == T0 + 20
    assert stamp(seen["finished_at"]) == T0 + 32
    assert seen["execution_id"].startswith("exec_")


def test_a_failing_graph_is_reported_failed_with_its_error() -> None:
    w = world(graph=Graph(duration=8, error="boom: the CRM export is empty"))
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(30)
    seen = view(w, cid)
    assert seen["status"] == "failed"
    assert seen["error"] == "boom: the CRM export is empty"


def test_control_is_polled_every_3_s_while_running() -> None:
    w = world(start_relay=False, graph=Graph(duration=10))
    relay, rec = recorded_relay(w)
    relay.start()
    w.clock.advance(1)
    queue(w)
    w.clock.advance(40)
    assert [s.at - T0 for s in rec.sent if s.action == "control"] == [23, 26, 29]


def test_execution_ids_are_unique_and_not_the_command_ids() -> None:
    w = world(graph=Graph(duration=2))
    w.clock.advance(1)
    ids = [queue(w, index=i % 3, key=f"exec-key-{i}") for i in range(4)]
    w.clock.advance(40)
    execs = [view(w, c)["execution_id"] for c in ids]
    assert len(set(execs)) == 4
    for cid, exe in zip(ids, execs, strict=True):
        assert cid.replace("-", "") not in exe
