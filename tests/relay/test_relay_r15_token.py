"""R15: a refused desktop token ends the pass; the outbox is kept; the relay recovers."""

from __future__ import annotations

from pytest_osfoundry.engine import Graph
from tests.relay.osf_relay_kit import T0, queue, recorded_relay, world


def test_a_refused_token_costs_one_request_a_pass_and_the_outbox_waits() -> None:
    w = world(start_relay=False, graph=Graph(duration=5, result="r"))
    second = w.server.state.add_project(w.creds.account_id).project_id
    relay, rec = recorded_relay(w)
    relay.share(second, w.sessions[:1])
    relay.start()
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(20)  # the pass at 20 starts the run; the token is revoked while it runs
    assert w.run_view(cid)["status"] == "running"
    token = w.creds.desktop_token
    w.server.tokens.revoke(token)
    w.clock.advance(40)  # its completion is refused at 25; the passes at 40 and 60 too
    refused = [s for s in rec.sent if s.at > T0 + 21]
    # Each pass after the refusal re-sends the outbox, is refused, and sends nothing more:
    # no sync of either project.
    assert [(s.at - T0, s.action) for s in refused if s.action != "control"] == [
        (25, "complete"),
        (40, "complete"),
        (60, "complete"),
    ]
    assert relay.outbox is not None
    assert [kept for kept, _ in relay.outbox.items()] == [cid]
    assert [e.kind for e in relay.events].count("token-refused") == 3
    w.server.tokens.issue("desktop", w.creds.account_id, token=token)
    w.clock.advance(20)
    assert w.run_view(cid)["status"] == "completed"
    assert rec.actions(since=T0 + 80) == ["complete", "sync", "sync"]


def test_a_refused_sync_ends_the_pass_before_the_next_project() -> None:
    w = world(start_relay=False)
    second = w.server.state.add_project(w.creds.account_id).project_id
    relay, rec = recorded_relay(w)
    relay.share(second, w.sessions[:1])
    w.server.tokens.revoke(w.creds.desktop_token)
    relay.start()
    w.clock.advance(40)
    assert [(s.at - T0, s.action) for s in rec.sent] == [(0, "sync"), (20, "sync"), (40, "sync")]
