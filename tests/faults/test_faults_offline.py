"""schedule_offline and the world's fault fields, end to end on the virtual clock."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pytest

from pytest_osfoundry._ids import parse_rfc3339
from pytest_osfoundry.clock import DEFAULT_START
from pytest_osfoundry.engine import Fixed, Graph
from pytest_osfoundry.faults import schedule_offline
from pytest_osfoundry.http import Response
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


class RelayRequests:
    """A transport in front of the relay's: every request that reaches the server, timed."""

    def __init__(self, w: OsfWorld) -> None:
        self.inner = w.relay.client.transport  # type: ignore[attr-defined]
        self.clock = w.clock
        self.seen: list[tuple[float, str]] = []
        w.relay.client.transport = self  # type: ignore[attr-defined]

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        self.seen.append((self.clock.now() - T0, f"{method} {url.rsplit('/', 1)[-1]}"))
        return self.inner.request(method, url, headers, body)  # type: ignore[no-any-return]

    def between(self, start: float, end: float) -> list[tuple[float, str]]:
        return [(at, what) for at, what in self.seen if start <= at < end]


def graph_from_20_to_80(offline: tuple[Any, ...], **options: Any) -> tuple[OsfWorld, str]:
    """The issue's case: a 60 s Graph started by the pass at 20, offline from 30 for 300 s."""
    w = OsfWorld(WorldConfig(graph=Graph(duration=Fixed(60)), offline=offline, **options))
    w.clock.advance(1)
    cid = queue_five(w)[0]
    return w, cid


def kinds_at(w: OsfWorld, cid: str) -> list[tuple[float, str]]:
    return [(e.at - T0, e.kind) for e in w.relay.events if e.command_id == cid]


def test_asleep_the_desktop_reaches_nothing_and_its_graph_pauses() -> None:
    w, cid = graph_from_20_to_80((30, 300))
    sent = RelayRequests(w)
    w.clock.run_until(T0 + 329.9)
    assert sent.between(30, 330) == []  # no sync, control poll, completion or start
    assert w.server.state.runs[cid].status == "running"
    assert [k for _, k in kinds_at(w, cid)] == ["started"]
    w.clock.run_until(T0 + 400)
    # Asleep 300 s with 50 s of the Graph left: it ends at 380, delivered at once.
    assert w.engine.runs[0].ended_at == T0 + 380
    assert kinds_at(w, cid)[-2:] == [(380, "finished"), (380, "delivered")]
    assert w.server.state.runs[cid].status == "completed"
    assert sent.between(330, 333) == [(332, "GET control")]  # its control polls go on
    assert [(e.at - T0, e.detail) for e in w.relay.events if e.kind == "offline"] == [
        (30, "asleep")
    ]


def test_network_lost_the_graph_runs_on_and_its_completion_waits_in_the_outbox() -> None:
    w, cid = graph_from_20_to_80((30, 300, "network"))
    sent = RelayRequests(w)
    w.clock.run_until(T0 + 329.9)
    assert sent.between(30, 330) == []
    assert w.engine.runs[0].ended_at == T0 + 80
    assert kinds_at(w, cid)[-2:] == [(80, "finished"), (80, "complete-held")]
    assert w.relay.outbox is not None and [c for c, _ in w.relay.outbox.items()] == [cid]
    assert w.server.state.runs[cid].status == "running"
    w.clock.run_until(T0 + 331)
    # Back at 330: the first pass delivers the outbox first, then syncs.
    assert sent.between(330, 331)[:2] == [(330, "POST complete"), (330, "POST sync")]
    assert kinds_at(w, cid)[-1] == (330, "delivered")
    assert w.server.state.runs[cid].status == "completed"


def test_network_lost_without_an_outbox_the_completion_is_lost_for_good() -> None:
    w, cid = graph_from_20_to_80((30, 300, "network"), outbox=False)
    sent = RelayRequests(w)
    w.clock.advance(3600)
    assert sent.between(30, 330) == []
    assert kinds_at(w, cid)[-1] == (80, "complete-lost")
    assert w.server.state.runs[cid].status == "running"  # D17: never delivered


def test_a_cancel_asked_for_while_asleep_is_seen_after_waking() -> None:
    w, cid = graph_from_20_to_80((30, 300))
    w.clock.run_until(T0 + 100)
    w.agent_client().cancel_graph_run(cid)
    w.clock.run_until(T0 + 340)
    # The first control poll after waking (332) sees the flag; the run stops 0.5 s later.
    assert w.engine.cancel_calls == [w.engine.runs[0].run_id]
    assert w.engine.runs[0].ended_at == T0 + 332.5
    assert w.server.state.runs[cid].status == "cancelled"


def test_going_offline_between_commands_takes_no_more_of_them() -> None:
    w = OsfWorld(WorldConfig(graph=Graph(duration=20)))
    schedule_offline(w.clock, w.relay, T0 + 30, 100, mode="network")
    w.clock.advance(1)
    first, second = queue_five(w)[:2]
    # The pass at 20 runs `first` until 40; offline at 30: `second` is not taken.
    w.clock.run_until(T0 + 129)
    assert w.server.state.runs[first].status == "running"  # its completion waits
    assert w.server.state.runs[second].status == "queued"
    w.clock.run_until(T0 + 131)
    assert w.server.state.runs[first].status == "completed"
    assert started_at(w, second) == T0 + 130
    kinds = [e.kind for e in w.relay.events if e.kind in ("offline", "online")]
    assert kinds == ["offline", "online"]


def test_asleep_needs_an_engine_whose_runs_can_pause() -> None:
    w, _ = graph_from_20_to_80((30, 300, "network"))
    w.clock.run_until(T0 + 25)

    class Unpausable:
        channel = "graph:external:x"
        done = w.clock.signal()
        outcome = None

        def cancel(self) -> None:
            pass

    w.relay.current_run = Unpausable()
    with pytest.raises(TypeError, match="mode='network'"):
        w.relay.go_offline()
    assert w.relay.online


def test_a_zero_length_outage_changes_nothing_visible() -> None:
    w = OsfWorld(WorldConfig(graph=Graph(duration=5)))
    schedule_offline(w.clock, w.relay, T0 + 40, 0)
    w.clock.advance(1)
    cid = queue_five(w)[0]
    w.clock.advance(60)
    assert w.server.state.runs[cid].status == "completed"


@pytest.mark.parametrize(
    ("at", "duration", "match", "options"),
    [
        (T0, -1, "duration", {}),
        (T0, math.nan, "duration", {}),
        (T0, math.inf, "duration", {}),
        (T0, "60", "duration", {}),
        (math.nan, 60, "at", {}),
        ("soon", 60, "at", {}),
        (None, 60, "at", {}),
        (T0, 60, "mode must be 'asleep'.*or 'network'.*got 'nap'", {"mode": "nap"}),
        (T0, 60, "keep_phase", {"keep_phase": "yes"}),
    ],
)
def test_schedule_offline_refuses_bad_arguments_and_schedules_nothing(
    at: Any, duration: Any, match: str, options: dict[str, Any]
) -> None:
    w = OsfWorld(WorldConfig())
    pending = w.clock.pending
    with pytest.raises(ValueError, match=match):
        schedule_offline(w.clock, w.relay, at, duration, **options)
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
