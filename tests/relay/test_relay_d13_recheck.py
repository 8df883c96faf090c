"""D13: re-check just before each run; a command no longer shared is cancelled, never run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_osfoundry.engine import Graph
from pytest_osfoundry.relay._desktop import NO_LONGER_SHARED
from tests.relay.osf_relay_kit import T0, engine_runs_for, queue, view, world

NO_LONGER_SHARED_TEXT = "Graph session is no longer shared with this project"

# Each reason, applied to the session of w.sessions[1] (or its project).
REASONS: dict[str, Callable[[Any], None]] = {
    "session unticked": lambda w: w.relay.untick(w.project_id, w.sessions[1].graph_session_id),
    "project disabled": lambda w: w.relay.disable(w.project_id),
    "slug renamed": lambda w: w.relay.rename(
        w.project_id, w.sessions[1].graph_session_id, w.sessions[1].slug + "-v2"
    ),
}


def assert_cancelled_unrun(w: Any, command_id: str) -> None:
    seen = view(w, command_id)
    assert seen["status"] == "cancelled"
    assert seen["error"] == NO_LONGER_SHARED_TEXT
    assert seen["started_at"] is None
    assert seen["finished_at"] is not None
    assert "result" not in seen or seen["result"] is None
    assert engine_runs_for(w, command_id) == [], "the engine must never run it"
    assert command_id not in w.relay.executed
    assert [e.kind for e in w.relay.events if e.command_id == command_id] == [
        "recheck-cancelled",
        "delivered",
    ]


def test_the_error_text_is_the_documented_one() -> None:
    assert NO_LONGER_SHARED == NO_LONGER_SHARED_TEXT


@pytest.mark.parametrize("reason", sorted(REASONS))
def test_a_change_while_an_earlier_command_runs_cancels_the_later_one(reason: str) -> None:
    w = world(graph=Graph(duration=30, result="first"))
    w.clock.advance(1)
    first = queue(w, index=0)
    w.clock.advance(1)
    second = queue(w, index=1)
    w.clock.advance(28)  # t = 30: the pass at 20 runs `first` (till 50), `second` waits
    assert w.relay.current == first
    REASONS[reason](w)  # the pass this triggers is skipped: the relay is busy
    assert w.relay.passes[-1].skipped
    w.clock.advance(30)
    assert view(w, first)["status"] == "completed"
    assert view(w, first)["result"] == "first"
    assert_cancelled_unrun(w, second)
    cancelled_at = next(e.at for e in w.relay.events if e.kind == "recheck-cancelled")
    assert cancelled_at == T0 + 50, "the re-check happens just before the run, not at sync"
    assert len(w.engine.runs) == 1


@pytest.mark.parametrize("reason", ["session unticked", "slug renamed"])
def test_a_change_between_queueing_and_the_next_pass_cancels_the_command(reason: str) -> None:
    w = world()
    w.clock.advance(5)
    cid = queue(w, index=1)
    w.clock.advance(3)
    REASONS[reason](w)  # passes at once: the sync still hands the command out
    assert_cancelled_unrun(w, cid)
    w.clock.advance(60)
    assert w.engine.runs == []
    assert view(w, cid)["status"] == "cancelled"


def test_a_disabled_project_is_not_synced_so_its_command_waits_unrun() -> None:
    # With the project disabled before the next pass the relay never syncs it (D12):
    # the command is not handed out, so it stays queued and is never run.
    w = world()
    w.clock.advance(5)
    cid = queue(w, index=1)
    REASONS["project disabled"](w)
    w.clock.advance(120)
    assert view(w, cid)["status"] == "queued"
    assert w.engine.runs == []
    w.relay.enable(w.project_id)
    w.clock.advance(31)
    assert view(w, cid)["status"] == "completed"


def test_the_other_sessions_of_the_project_still_run() -> None:
    w = world(graph=Graph(duration=10))
    w.clock.advance(1)
    ids = [queue(w, index=i) for i in range(3)]
    REASONS["session unticked"](w)  # session 1 only
    w.clock.advance(60)
    assert [view(w, c)["status"] for c in ids] == ["completed", "cancelled", "completed"]
    assert [r.channel for r in w.engine.runs] == [
        f"graph:external:{ids[0]}",
        f"graph:external:{ids[2]}",
    ]


def test_the_recheck_is_per_command_a_restored_share_runs_again() -> None:
    w = world(graph=Graph(duration=30))
    w.clock.advance(1)
    first = queue(w, index=0)
    second = queue(w, index=1)
    third = queue(w, index=1, key="another-key-for-third")
    w.clock.advance(29)  # t = 30, `first` running
    w.relay.untick(w.project_id, w.sessions[1].graph_session_id)
    w.clock.advance(19)  # t = 49
    w.relay.tick(w.project_id, w.sessions[1])  # back before the re-check at 50
    w.clock.advance(100)
    assert [view(w, c)["status"] for c in (first, second, third)] == ["completed"] * 3


def test_a_rename_back_to_the_queued_slug_passes_the_recheck() -> None:
    w = world(graph=Graph(duration=30))
    w.clock.advance(1)
    first = queue(w, index=0)
    second = queue(w, index=1)
    w.clock.advance(29)
    gsid = w.sessions[1].graph_session_id
    w.relay.rename(w.project_id, gsid, "elsewhere")
    w.relay.rename(w.project_id, gsid, w.sessions[1].slug)
    w.clock.advance(100)
    assert view(w, first)["status"] == view(w, second)["status"] == "completed"
