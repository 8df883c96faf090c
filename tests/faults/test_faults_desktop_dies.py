"""The "desktop dies" fault: the relay process ends at a chosen time with what it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_osfoundry.engine import Graph
from pytest_osfoundry.relay._outbox import FileOutbox
from pytest_osfoundry.world import OsfWorld, WorldConfig


def _queue(world: OsfWorld, key: str) -> str:
    agent = world.agent_client()
    ticket = agent.run_graph_session(world.sessions[0].graph_session_id, key)
    return str(ticket["command_id"])


def test_a_run_under_way_stays_running_for_good() -> None:
    world = OsfWorld(WorldConfig(graph=Graph(duration=120.0), desktop_dies=30.0))
    command_id = _queue(world, "dies-key-0001")
    world.clock.advance(25)  # the pass at t=20 started it
    assert world.run_view(command_id)["status"] == "running"
    events_before = len(world.relay.events)
    world.clock.advance(3600)
    assert world.run_view(command_id)["status"] == "running"
    [death] = world.deaths
    assert death.running == command_id and death.at == pytest.approx(world.config.start + 30)
    after = world.relay.events[events_before:]
    assert [e.kind for e in after] == ["died"]  # nothing at all after the death
    assert not world.engine.active  # the Graph died with it


def test_nothing_queued_later_is_ever_picked_up() -> None:
    world = OsfWorld(WorldConfig(desktop_dies=5.0))
    world.clock.advance(10)
    command_id = _queue(world, "dies-key-0002")
    world.clock.advance(600)
    assert world.run_view(command_id)["status"] == "queued"


def test_an_in_memory_outbox_dies_with_the_desktop() -> None:
    world = OsfWorld(WorldConfig(graph=Graph(duration=5.0), lose_completions=1, desktop_dies=30.0))
    command_id = _queue(world, "dies-key-0003")
    world.clock.advance(600)
    [death] = world.deaths
    assert death.outbox_lost == (command_id,) and death.outbox_kept == ()
    assert world.run_view(command_id)["status"] == "running"
    assert world.relay.outbox is not None and world.relay.outbox.items() == []


def test_a_file_outbox_survives_and_a_new_relay_delivers_it(tmp_path: Path) -> None:
    path = tmp_path / "outbox.json"
    world = OsfWorld(
        WorldConfig(
            graph=Graph(duration=5.0),
            lose_completions=1,
            outbox=FileOutbox(path),
            desktop_dies=30.0,
        )
    )
    command_id = _queue(world, "dies-key-0004")
    world.clock.advance(60)
    [death] = world.deaths
    assert death.outbox_kept == (command_id,) and death.outbox_lost == ()
    assert world.run_view(command_id)["status"] == "running"
    reborn = world.make_relay(outbox=FileOutbox(path))
    reborn.share(world.project_id, world.sessions)
    reborn.start()
    world.clock.advance(1)
    assert world.run_view(command_id)["status"] == "completed"


@pytest.mark.parametrize("bad", [-1, float("nan"), "soon", True])
def test_desktop_dies_must_be_seconds(bad: object) -> None:
    with pytest.raises(ValueError, match="desktop_dies"):
        OsfWorld(WorldConfig(desktop_dies=bad))  # type: ignore[arg-type]
