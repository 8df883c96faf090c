"""D16 (and D8): a running cancel is seen by the 3 s control poll; terminal within 3.5 s."""

from __future__ import annotations

import pytest

from pytest_osfoundry.engine import Graph
from pytest_osfoundry.world import OsfWorld
from tests.relay.osf_relay_kit import T0, engine_runs_for, queue, recorded_relay, stamp, view, world


def running_world(stop_latency: float | None = None) -> tuple[OsfWorld, str]:
    """A world whose first session's run started at T0 + 20 and would run 100 s."""
    w = world(graph=Graph(duration=100, result="never", total_tokens=1000, reported_cost=1.0))
    if stop_latency is not None:
        w.engine.stop_latency = stop_latency
    w.clock.advance(1)
    cid = queue(w)
    w.clock.run_until(T0 + 20)
    assert view(w, cid)["status"] == "running"
    return w, cid


# Control polls fall at 23, 26, 29, ...: cancel at every phase of one poll cycle.
@pytest.mark.parametrize("at", [30.0, 30.001, 30.5, 31.0, 31.5, 32.0, 32.5, 32.999, 33.0])
def test_a_running_cancel_is_terminal_within_3_5_s(at: float) -> None:
    w, cid = running_world()
    w.clock.run_until(T0 + at)
    answer = w.agent_client().cancel_graph_run(cid)
    assert answer == {"command_id": cid, "status": "running", "cancel_requested": True}
    w.clock.advance(10)
    seen = view(w, cid)
    assert seen["status"] == "cancelled"
    assert seen["cancel_requested"] is True
    assert "result" not in seen or seen["result"] is None
    latency = stamp(seen["finished_at"]) - (T0 + at)
    assert 0 < latency <= 3.5
    (run,) = engine_runs_for(w, cid)
    assert w.engine.cancel_calls == [run.run_id], "the engine's cancel is called exactly once"
    assert run.outcome is not None and run.outcome.status == "cancelled"
    assert 0 < seen["total_tokens"] < 1000  # the tokens spent until the stop


def test_the_latency_is_at_most_one_control_poll_plus_the_stop() -> None:
    latencies = []
    for step in range(31):
        at = 40 + step * 0.1
        w, cid = running_world()
        w.clock.run_until(T0 + at)
        w.agent_client().cancel_graph_run(cid)
        w.clock.advance(10)
        latencies.append(stamp(view(w, cid)["finished_at"]) - (T0 + at))
    assert max(latencies) <= 3.5
    assert max(latencies) == pytest.approx(3.5, abs=0.11)  # just after a poll
    assert min(latencies) == pytest.approx(0.5, abs=0.11)  # just before a poll


def test_no_control_poll_after_the_flag_was_seen() -> None:
    w = world(start_relay=False, graph=Graph(duration=100))
    w.engine.stop_latency = 2.0
    relay, rec = recorded_relay(w)
    relay.start()
    w.clock.advance(1)
    cid = queue(w)
    w.clock.run_until(T0 + 24)
    w.agent_client().cancel_graph_run(cid)
    w.clock.advance(30)
    polls = [s.at - T0 for s in rec.sent if s.action == "control"]
    assert polls == [23, 26]  # 26 saw the flag; the stop took 2 s; no poll at 29
    assert [s.at - T0 for s in rec.sent if s.action == "complete"] == [28]
    assert len(w.engine.cancel_calls) == 1


def test_cancelled_even_if_the_graph_finished_between_the_flag_and_the_stop() -> None:
    # The run ends by itself at 54.0; the poll at 53 sees the flag; the stop would take
    # 2 s (55.0), so the Graph finishes first with a result. The relay reports cancelled.
    w = world(graph=Graph(duration=34, result="finished anyway", total_tokens=10))
    w.engine.stop_latency = 2.0
    w.clock.advance(1)
    cid = queue(w)
    w.clock.run_until(T0 + 52)
    w.agent_client().cancel_graph_run(cid)
    w.clock.advance(10)
    (run,) = engine_runs_for(w, cid)
    assert run.outcome is not None and run.outcome.status == "completed"
    assert run.ended_at == T0 + 54
    assert w.engine.cancel_calls == [run.run_id]
    seen = view(w, cid)
    assert seen["status"] == "cancelled"
    assert "result" not in seen or seen["result"] is None
    assert "error" not in seen
    assert stamp(seen["finished_at"]) == T0 + 54


def test_a_flag_set_after_the_graph_finished_changes_nothing() -> None:
    w = world(graph=Graph(duration=10, result="done"))
    w.clock.advance(1)
    cid = queue(w)
    w.clock.run_until(T0 + 31)
    answer = w.agent_client().cancel_graph_run(cid)
    assert answer["status"] == "completed"
    assert w.engine.cancel_calls == []
    assert view(w, cid)["result"] == "done"


def test_a_queued_cancel_is_terminal_at_once_and_never_reaches_the_desktop() -> None:
    w = world(start_relay=False)
    relay, rec = recorded_relay(w)
    relay.start()
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(4)
    answer = w.agent_client().cancel_graph_run(cid)
    assert answer == {"command_id": cid, "status": "cancelled", "cancel_requested": True}
    seen = view(w, cid)
    assert stamp(seen["finished_at"]) == T0 + 5
    assert seen["started_at"] is None
    w.clock.advance(100)
    assert w.engine.runs == []
    assert w.engine.cancel_calls == []
    assert all(s.command_id != cid for s in rec.sent)
    assert view(w, cid) == seen
