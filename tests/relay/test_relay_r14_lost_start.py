"""R14: a start with no definitive answer is asked again on every later pass until
one comes; the Graph runs once. Each refusal and ``cancelled`` ends it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from pytest_osfoundry.client._errors import ReplyLost
from pytest_osfoundry.engine import Graph
from pytest_osfoundry.faults import Fault, LoseRequests
from pytest_osfoundry.http import Response, json_response
from pytest_osfoundry.relay._desktop import NO_LONGER_SHARED, FakeRelay
from pytest_osfoundry.world import OsfWorld
from tests.relay.osf_relay_kit import T0, Recorder, Sent, queue, recorded_relay, view, world


@dataclass
class StartAnswers:
    """The start's answers, one per start sent, then the server's own: ``"lost"`` (the
    server applies it, the answer is lost) or a status (answered without serving)."""

    script: list[str | int] = field(default_factory=list)

    def before(self, method: str, url: str) -> Response | None:
        if url.endswith("/start") and self.script and isinstance(self.script[0], int):
            return json_response(int(self.script.pop(0)), {"error": "injected"})
        return None

    def after(self, method: str, url: str, response: Response) -> None:
        if url.endswith("/start") and self.script and self.script[0] == "lost":
            self.script.pop(0)
            raise ReplyLost("the start's answer is lost (injected)")


def _starts(rec: Recorder) -> list[Sent]:
    return [s for s in rec.sent if s.action == "start"]


def _started(*faults: Fault) -> tuple[FakeRelay, Recorder, str, OsfWorld]:
    """A relay with ``faults``, its first pass at T0 and a command queued at T0 + 1
    (handed out by the pass at T0 + 20)."""
    w = world(start_relay=False, graph=Graph(duration=30, result="ok"))
    relay, rec = recorded_relay(w, *faults)
    relay.start()
    w.clock.advance(1)
    return relay, rec, queue(w), w


def test_a_start_lost_pass_after_pass_is_asked_again_until_answered() -> None:
    relay, rec, cid, w = _started(StartAnswers(["lost", 503, "lost"]))
    w.clock.advance(120)
    starts = _starts(rec)
    assert [s.at - T0 for s in starts] == [20, 40, 60, 80]  # one a pass, until answered
    assert len({s.body["execution_id"] for s in starts}) == 1
    assert [r.channel for r in w.engine.runs] == [f"graph:external:{cid}"]
    assert view(w, cid)["status"] == "completed"
    kinds = [e.kind for e in relay.events if e.command_id == cid]
    assert kinds.count("start-unanswered") == 3 and "start-refused" not in kinds
    assert relay.unanswered == {}


def test_a_start_the_server_never_got_is_started_once_a_pass() -> None:
    """The sync hands the command out again in the pass that asked it again: not a
    second start that pass."""
    relay, rec, cid, w = _started(LoseRequests(match="/start", count=2))
    w.clock.advance(100)
    assert [s.at - T0 for s in _starts(rec)] == [20, 40, 60]
    assert [e.kind for e in relay.events if e.at == T0 + 40 and e.command_id == cid] == [
        "start-unanswered",
        "skipped",
    ]
    assert len(w.engine.runs) == 1
    assert view(w, cid)["status"] == "completed"


def test_a_start_answered_cancelled_at_last_is_not_run_and_posts_nothing() -> None:
    relay, rec, cid, w = _started(LoseRequests(match="/start", count=1))
    w.clock.advance(29)
    w.agent_client().cancel_graph_run(cid)
    w.clock.advance(60)
    assert [s.at - T0 for s in _starts(rec)] == [20, 40]
    assert not w.engine.runs
    assert "complete" not in rec.actions()
    assert view(w, cid)["status"] == "cancelled"
    assert relay.unanswered == {}


@pytest.mark.parametrize("status", [404, 409, 400])
def test_a_start_refused_drops_the_command_with_an_event(status: int) -> None:
    relay, rec, cid, w = _started(StartAnswers(["lost", status]))
    w.clock.advance(80)
    assert [s.at - T0 for s in _starts(rec)] == [20, 40]
    assert not w.engine.runs
    assert "complete" not in rec.actions()
    refused = [e for e in relay.events if e.kind == "start-refused"]
    assert [(e.command_id, e.at - T0) for e in refused] == [(cid, 40)]
    assert f"HTTP {status}" in refused[0].detail
    assert relay.unanswered == {}


def test_a_start_refused_401_is_kept_and_asked_once_the_token_is_accepted() -> None:
    """R15: the refused start ends its pass (no sync); the pass after the token is
    accepted again asks it, runs it once and completes it."""
    relay, rec, cid, w = _started(StartAnswers(["lost"]))
    w.clock.advance(29)
    token = w.creds.desktop_token
    w.server.tokens.revoke(token)
    w.clock.advance(20)
    assert rec.actions(since=T0 + 21) == ["start"]  # at 40: refused, nothing more
    assert cid in relay.unanswered
    w.server.tokens.issue("desktop", w.creds.account_id, token=token)
    w.clock.advance(50)
    assert [s.at - T0 for s in _starts(rec)] == [20, 40, 60]
    assert len(w.engine.runs) == 1
    assert view(w, cid)["status"] == "completed"


def test_a_start_asked_again_is_re_checked_first() -> None:
    """D13 holds for a start asked again: the session unticked meanwhile, the command
    is completed cancelled and never started again or run."""
    relay, rec, cid, w = _started(StartAnswers(["lost"]))
    w.clock.advance(29)
    relay.untick(w.project_id, w.sessions[0].graph_session_id)
    w.clock.advance(60)
    assert [s.at - T0 for s in _starts(rec)] == [20]
    assert not w.engine.runs
    seen = view(w, cid)
    assert (seen["status"], seen["error"]) == ("cancelled", NO_LONGER_SHARED)
    assert relay.unanswered == {}
