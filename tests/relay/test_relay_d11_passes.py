"""D11: a pass every 20 s at the start phase, at once on a sharing change, skipped while busy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_osfoundry.engine import Graph, make_sessions
from pytest_osfoundry.relay._desktop import FakeRelay
from tests.relay.osf_relay_kit import T0, queue, world


def ran(relay: FakeRelay) -> list[tuple[float, str]]:
    """(time since T0, reason) of every pass that ran."""
    return [(p.at - T0, p.reason) for p in relay.passes if not p.skipped]


def skipped(relay: FakeRelay) -> list[tuple[float, str]]:
    return [(p.at - T0, p.reason) for p in relay.passes if p.skipped]


@pytest.mark.parametrize("phase", [0.0, 7.0, 19.5])
def test_passes_every_interval_from_the_start_phase(phase: float) -> None:
    w = world(start_relay=False)
    w.relay.start(phase=phase)
    w.clock.advance(100)
    expected = [phase + 20 * k for k in range(6) if phase + 20 * k <= 100]
    assert [at for at, _ in ran(w.relay)] == expected
    assert [reason for _, reason in ran(w.relay)] == ["start"] + ["interval"] * (len(expected) - 1)
    assert skipped(w.relay) == []


def test_the_interval_is_configurable() -> None:
    w = world(start_relay=False, interval=7.5)
    w.relay.start(phase=1)
    w.clock.advance(30)
    assert [at for at, _ in ran(w.relay)] == [1, 8.5, 16, 23.5]


def test_a_started_world_passes_at_once_then_every_20_s() -> None:
    w = world()
    assert ran(w.relay) == [(0, "start")]
    w.clock.advance(61)
    assert ran(w.relay) == [(0, "start"), (20, "interval"), (40, "interval"), (60, "interval")]


def _share_more(w: Any) -> None:
    w.relay.share(w.project_id, make_sessions(5, seed=99)[4:])


SHARING_CHANGES: dict[str, Callable[[Any], None]] = {
    "share": _share_more,
    "tick": lambda w: w.relay.tick(w.project_id, make_sessions(5, seed=98)[4]),
    "untick": lambda w: w.relay.untick(w.project_id, w.sessions[0].graph_session_id),
    "rename": lambda w: w.relay.rename(w.project_id, w.sessions[0].graph_session_id, "new-slug"),
    "disable": lambda w: w.relay.disable(w.project_id),
    "enable": lambda w: w.relay.enable(w.project_id),
}


@pytest.mark.parametrize("change", sorted(SHARING_CHANGES))
def test_a_sharing_change_passes_at_once_and_restarts_the_interval(change: str) -> None:
    w = world()
    w.clock.advance(5)
    SHARING_CHANGES[change](w)
    assert ran(w.relay)[-1] == (5, "sharing"), "the change must trigger a pass at once"
    w.clock.advance(40.5)
    # The interval restarts from the change: 25 and 45, not 20 and 40.
    assert ran(w.relay) == [(0, "start"), (5, "sharing"), (25, "interval"), (45, "interval")]


def test_a_sharing_change_uploads_the_new_list_in_that_pass() -> None:
    w = world()
    w.clock.advance(3)
    w.relay.untick(w.project_id, w.sessions[0].graph_session_id)
    shared = w.agent_client().list_graph_sessions(w.project_id)["sessions"]
    assert [s["graph_session_id"] for s in shared] == [s.graph_session_id for s in w.sessions[1:]]


def test_a_sharing_change_before_start_or_after_stop_triggers_nothing() -> None:
    w = world(start_relay=False)
    _share_more(w)
    assert w.relay.passes == []
    w.relay.start(phase=10)
    w.clock.advance(11)
    w.relay.stop()
    _share_more(w)
    w.clock.advance(100)
    assert ran(w.relay) == [(10, "start")]


def test_ticks_while_busy_are_recorded_as_skipped() -> None:
    w = world(graph=Graph(duration=50, result="slow"))
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(100)  # the pass at 20 is busy with the run until 70
    assert ran(w.relay) == [(0, "start"), (20, "interval"), (80, "interval"), (100, "interval")]
    assert skipped(w.relay) == [(40, "interval"), (60, "interval")]
    busy = next(p for p in w.relay.passes if p.at == T0 + 20)
    assert busy.ended_at == T0 + 70
    for record in w.relay.passes:
        if record.skipped:
            assert record.ended_at == record.at
    assert len(w.engine.runs) == 1, "a skipped tick must not start a second worker"
    assert w.run_view(cid)["status"] == "completed"


def test_a_sharing_change_while_busy_is_skipped_and_still_restarts_the_interval() -> None:
    w = world(graph=Graph(duration=50, result="slow"))
    w.clock.advance(1)
    queue(w)
    w.clock.advance(44)  # t = 45, busy since 20
    w.relay.tick(w.project_id, make_sessions(5, seed=97)[4])
    assert skipped(w.relay)[-1] == (45, "sharing")
    w.clock.advance(45)  # to 90
    # Restarted at 45: 65 (still busy, skipped), 85 (runs); never 60 or 80.
    assert skipped(w.relay) == [(40, "interval"), (45, "sharing"), (65, "interval")]
    assert ran(w.relay)[-1] == (85, "interval")


def test_pass_now_runs_a_pass_without_moving_the_interval() -> None:
    w = world()
    w.clock.advance(7)
    w.relay.pass_now()
    w.clock.advance(14)
    assert ran(w.relay) == [(0, "start"), (7, "manual"), (20, "interval")]


def test_pass_now_while_busy_is_skipped() -> None:
    w = world(graph=Graph(duration=50))
    w.clock.advance(1)
    queue(w)
    w.clock.advance(29)
    assert w.relay.busy
    w.relay.pass_now()
    assert skipped(w.relay) == [(30, "manual")]


def test_no_passes_while_offline_and_one_at_once_when_back() -> None:
    w = world()
    w.clock.advance(5)
    w.relay.go_offline()
    w.clock.advance(100)
    assert ran(w.relay) == [(0, "start")]
    w.relay.go_online()
    assert ran(w.relay)[-1] == (105, "online")
    w.clock.advance(21)
    assert ran(w.relay)[-1] == (125, "interval")


def test_a_timer_that_keeps_its_phase_passes_at_its_next_tick_when_back() -> None:
    # The seed's reading of the offline scenario (issue 23): no pass at once.
    w = world()
    w.clock.advance(5)
    w.relay.go_offline(keep_phase=True)
    w.clock.advance(100)
    assert ran(w.relay) == [(0, "start")]
    w.relay.go_online()
    assert ran(w.relay) == [(0, "start")]
    w.clock.advance(15)
    assert ran(w.relay)[-1] == (120, "interval")
    w.clock.advance(20)
    assert ran(w.relay)[-1] == (140, "interval")


def test_schedule_offline_keeps_the_phase_when_told() -> None:
    from pytest_osfoundry.faults import schedule_offline

    for keep, first in ((False, 50), (True, 60)):
        w = world()
        schedule_offline(w.clock, w.relay, T0 + 5, 45, keep_phase=keep)
        w.clock.advance(61)
        assert [at for at, _ in ran(w.relay)][:2] == [0, first]
    with pytest.raises(TypeError, match="keep_phase must be True or False"):
        schedule_offline(w.clock, w.relay, T0, 1, keep_phase="yes")  # type: ignore[arg-type]


def test_stop_ends_the_passes() -> None:
    w = world()
    w.clock.advance(30)
    w.relay.stop()
    w.clock.advance(100)
    assert ran(w.relay) == [(0, "start"), (20, "interval")]
    assert not w.relay.running
