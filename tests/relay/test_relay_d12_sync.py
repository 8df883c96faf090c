"""D12: each pass re-sends the outbox first, then syncs each enabled project (<= 100)."""

from __future__ import annotations

from pytest_osfoundry.client import HttpStatusError, ReplyLost
from pytest_osfoundry.engine import Graph, make_sessions
from pytest_osfoundry.faults import LoseRequests, ServerErrors
from tests.relay.osf_relay_kit import T0, queue, recorded_relay, world


def test_the_outbox_is_flushed_before_the_sync() -> None:
    w = world(start_relay=False, graph=Graph(duration=25, result="r"))
    relay, rec = recorded_relay(w, LoseRequests("/complete", count=1))
    relay.start()
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(59)  # pass at 20 runs it, completion lost at 45; pass at 60 redelivers
    assert w.run_view(cid)["status"] == "completed"
    assert [s.action for s in rec.sent if s.at == T0 + 45] == ["complete"]
    assert rec.actions(since=T0 + 60) == ["complete", "sync"]
    redelivered = next(s for s in rec.sent if s.at == T0 + 60)
    assert redelivered.command_id == cid
    assert redelivered.body == next(s for s in rec.sent if s.at == T0 + 45).body


def test_a_pass_with_an_empty_outbox_starts_with_the_sync() -> None:
    w = world(start_relay=False)
    relay, rec = recorded_relay(w)
    relay.start()
    w.clock.advance(0)
    assert rec.actions() == ["sync"]


def test_one_sync_per_enabled_project_with_its_own_sessions() -> None:
    w = world(start_relay=False)
    state = w.server.state
    second = state.add_project(w.creds.account_id).project_id
    third = state.add_project(w.creds.account_id).project_id
    others = make_sessions(6, seed=42)
    relay, rec = recorded_relay(w)
    relay.share(second, others[:2])
    relay.share(third, others[2:])
    relay.start()
    w.clock.advance(20)
    syncs = [s for s in rec.sent if s.action == "sync"]
    assert [s.at - T0 for s in syncs] == [0, 0, 0, 20, 20, 20]
    assert [s.body["project_id"] for s in syncs[:3]] == [w.project_id, second, third]
    by_project = {s.body["project_id"]: s.body["sessions"] for s in syncs[:3]}
    assert [x["graph_session_id"] for x in by_project[w.project_id]] == [
        s.graph_session_id for s in w.sessions
    ]
    assert by_project[second] == [s.to_dict() for s in others[:2]]
    assert by_project[third] == [s.to_dict() for s in others[2:]]
    assert [x["graph_session_id"] for x in state.projects[third].sessions] == [
        s.graph_session_id for s in others[2:]
    ]


def test_at_most_100_sessions_are_uploaded_when_150_are_ticked() -> None:
    w = world(start_relay=False, sessions=0)
    many = make_sessions(150, seed=7)
    relay, rec = recorded_relay(w, share=False)
    relay.share(w.project_id, many)
    relay.start()
    w.clock.advance(0)
    (sync,) = [s for s in rec.sent if s.action == "sync"]
    assert len(sync.body["sessions"]) == 100
    assert [s["graph_session_id"] for s in sync.body["sessions"]] == [
        s.graph_session_id for s in many[:100]
    ]
    assert not [e for e in relay.events if e.kind == "sync-failed"], relay.events
    assert len(w.server.state.projects[w.project_id].sessions) == 100
    assert len(relay.shared_sessions(w.project_id)) == 100


def test_a_disabled_project_is_not_synced_and_its_commands_are_not_run() -> None:
    w = world(start_relay=False)
    second = w.server.state.add_project(w.creds.account_id).project_id
    relay, rec = recorded_relay(w)
    relay.share(second, make_sessions(2, seed=5))
    relay.start()
    w.clock.advance(1)
    cid = queue(w)
    relay.disable(w.project_id)  # a sharing change: a pass at once, without this project
    w.clock.advance(100)
    synced = {s.body["project_id"] for s in rec.sent if s.action == "sync" and s.at > T0 + 0.5}
    assert synced == {second}
    assert w.run_view(cid)["status"] == "queued"
    assert w.engine.runs == []
    relay.enable(w.project_id)
    w.clock.advance(40)
    assert w.run_view(cid)["status"] == "completed"


def test_commands_come_from_the_sync_answer_oldest_first() -> None:
    w = world(start_relay=False, graph=Graph(duration=5))
    relay, _ = recorded_relay(w)
    relay.start()
    ids = []
    for i in range(3):
        w.clock.advance(1)
        ids.append(queue(w, index=2 - i))
    w.clock.advance(60)
    assert relay.executed == ids


def test_a_failed_sync_event_carries_the_error_itself() -> None:
    # A refusal (the server answered 503) and a lost reply are told apart by the
    # error's type, not by its text (the relay CLI's first sync needs that).
    w = world(start_relay=False)
    relay, _ = recorded_relay(
        w, ServerErrors("/sync", status=503, count=1), LoseRequests("/sync", count=1)
    )
    relay.start()
    w.clock.advance(40)
    failed = [e for e in relay.events if e.kind == "sync-failed"]
    assert [type(e.error) for e in failed] == [HttpStatusError, ReplyLost]
    assert isinstance(failed[0].error, HttpStatusError) and failed[0].error.status == 503
    assert all(e.detail.startswith(f"{w.project_id}: ") for e in failed)
    assert [e.error for e in relay.events if e.kind == "synced"] == [None]
