"""schedule_offline and the world's fault fields, end to end on the virtual clock."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_osfoundry._ids import parse_rfc3339
from pytest_osfoundry.clock import DEFAULT_START
from pytest_osfoundry.engine import Graph
from pytest_osfoundry.faults import schedule_offline
from pytest_osfoundry.world import OsfWorld, WorldConfig

T0 = DEFAULT_START


def queue_five(w: OsfWorld) -> list[str]:
    agent = w.agent_client()
    return [
        agent.run_graph_session(w.sessions[i % 3].graph_session_id, f"offline-key-{i}")[
            "command_id"
        ]
        for i in range(5)
    ]


def statuses(w: OsfWorld, ids: list[str]) -> list[str]:
    return [w.server.state.runs[c].status for c in ids]


def started_at(w: OsfWorld, cid: str) -> float:
    stamp = parse_rfc3339(w.run_view(cid)["started_at"])
    assert stamp is not None
    return stamp.timestamp()


def test_offline_600_s_with_five_queued_executes_nothing_then_all_complete() -> None:
    w = OsfWorld(WorldConfig(graph=Graph(duration=20), offline=(5, 600)))
    w.clock.advance(10)
    ids = queue_five(w)
    w.clock.run_until(T0 + 604.9)
    assert statuses(w, ids) == ["queued"] * 5
    assert w.engine.runs == []
    assert [p.at - T0 for p in w.relay.passes] == [0]
    w.clock.run_until(lambda: all(s == "completed" for s in statuses(w, ids)))
    assert started_at(w, ids[0]) == T0 + 605, "back online: a pass at once"
    assert w.clock.now() == T0 + 705
    assert len(w.engine.runs) == 5


def test_schedule_offline_on_a_running_relay() -> None:
    w = OsfWorld(WorldConfig(graph=Graph(duration=20)))
    schedule_offline(w.clock, w.relay, T0 + 30, 100)
    w.clock.advance(1)
    first, second = queue_five(w)[:2]
    # The pass at 20 runs `first` until 40; offline at 30: `second` is not taken.
    w.clock.run_until(T0 + 129)
    assert w.server.state.runs[first].status == "completed"
    assert w.server.state.runs[second].status == "queued"
    w.clock.run_until(T0 + 131)
    assert started_at(w, second) == T0 + 130
    kinds = [e.kind for e in w.relay.events if e.kind in ("offline", "online")]
    assert kinds == ["offline", "online"]


def test_a_zero_length_outage_changes_nothing_visible() -> None:
    w = OsfWorld(WorldConfig(graph=Graph(duration=5)))
    schedule_offline(w.clock, w.relay, T0 + 40, 0)
    w.clock.advance(1)
    cid = queue_five(w)[0]
    w.clock.advance(60)
    assert w.server.state.runs[cid].status == "completed"


@pytest.mark.parametrize(
    ("at", "duration", "match"),
    [
        (T0, -1, "duration"),
        (T0, math.nan, "duration"),
        (T0, math.inf, "duration"),
        (T0, "60", "duration"),
        (math.nan, 60, "at"),
        ("soon", 60, "at"),
        (None, 60, "at"),
    ],
)
def test_schedule_offline_refuses_bad_arguments_and_schedules_nothing(
    at: Any, duration: Any, match: str
) -> None:
    w = OsfWorld(WorldConfig())
    pending = w.clock.pending
    with pytest.raises(ValueError, match=match):
        schedule_offline(w.clock, w.relay, at, duration)
    assert w.clock.pending == pending
    w.clock.advance(100)
    assert w.relay.online


def test_server_errors_on_sync_leave_commands_queued_until_they_stop() -> None:
    w = OsfWorld(WorldConfig(graph=Graph(duration=5), server_errors=("/sync", 503)))
    w.server.state.share(w.project_id, [s.to_dict() for s in w.sessions])  # no sync gets through
    w.clock.advance(1)
    cid = queue_five(w)[0]
    w.clock.advance(100)
    assert w.server.state.runs[cid].status == "queued"
    assert w.engine.runs == []
    assert {e.kind for e in w.relay.events} == {"sync-failed"}
