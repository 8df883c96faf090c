"""The simulation's direct path (issue 23): agents and relay calling the server's state
without the wire give the figures the full stack gives, to the last digit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from pytest_osfoundry.client import HttpStatusError, ToolError
from pytest_osfoundry.client._relay_client import RelayClient
from pytest_osfoundry.relay import FakeRelay
from pytest_osfoundry.server._state_clients import DirectRelayClient, DirectToolClient
from pytest_osfoundry.sim import NAMES, SimParams, simulate
from pytest_osfoundry.world import OsfWorld, WorldConfig


def test_direct_figures_are_the_full_stacks() -> None:
    params = SimParams(runs=60, seed=7)
    direct = simulate(list(NAMES), params, jobs=1)
    full = simulate(list(NAMES), replace(params, full_stack=True), jobs=1)
    assert direct.experiments == full.experiments
    assert direct.events == full.events
    assert not direct.params.full_stack and full.params.full_stack


def test_the_sims_many_run_worlds_are_direct_unless_told() -> None:
    from pytest_osfoundry.sim._experiments import make_world

    params = SimParams(runs=10)
    direct = make_world(params, 1, many=True)
    assert isinstance(direct.relay.client, DirectRelayClient)
    assert isinstance(direct.make_agent().client, DirectToolClient)
    full = make_world(replace(params, full_stack=True), 1, many=True)
    assert isinstance(full.relay.client, RelayClient)
    scenario = make_world(params, 1)
    assert isinstance(scenario.relay.client, RelayClient)


def _completed(world: OsfWorld, command_id: str) -> Callable[[], bool]:
    run = world.server.state.runs[command_id]
    return lambda: run.status == "completed"


def test_a_direct_world_ends_in_the_same_state() -> None:
    worlds = [OsfWorld(WorldConfig(seed=3, direct=d)) for d in (False, True)]
    views = []
    for world in worlds:
        agent = world.make_agent()
        record = agent.start(world.sessions[0].graph_session_id, key="same-key-0001", poll=False)
        world.clock.run_until(record.done, limit=3600)
        cid = record.command_id or ""
        world.clock.run_until(_completed(world, cid), limit=3600)
        views.append(world.run_view(cid))
    for view in views:
        view.pop("command_id")
    assert views[0] == views[1]


def test_refusals_are_what_the_wire_clients_raise() -> None:
    world = OsfWorld(WorldConfig(direct=True))
    unknown = "00000000-0000-4000-8000-000000000000"
    direct, wire = world.make_agent().client, world.agent_client()
    with pytest.raises(ToolError) as over_wire:
        wire.get_graph_run(unknown)
    with pytest.raises(ToolError) as straight:
        direct.get_graph_run(unknown)
    assert straight.value.message == over_wire.value.message
    with pytest.raises(ToolError) as short_key_wire:
        wire.run_graph_session(world.sessions[0].graph_session_id, "k-1")
    with pytest.raises(ToolError) as short_key:
        direct.run_graph_session(world.sessions[0].graph_session_id, "k-1")
    assert short_key.value.message == short_key_wire.value.message
    assert short_key.value.message.startswith("Invalid arguments for run_graph_session")
    relay = world.relay.client
    assert isinstance(relay, DirectRelayClient)
    with pytest.raises(HttpStatusError) as wire_refusal:
        world.relay_client().start(unknown, "exec-1")
    with pytest.raises(HttpStatusError) as direct_refusal:
        relay.start(unknown, "exec-1")
    assert direct_refusal.value.status == wire_refusal.value.status == 404
    assert direct_refusal.value.json() == wire_refusal.value.json()


def test_direct_refuses_the_wire_faults_by_name() -> None:
    with pytest.raises(ValueError, match="leave out drop_replies, lose_completions"):
        OsfWorld(WorldConfig(direct=True, drop_replies=0.5, lose_completions=1))
    with pytest.raises(TypeError, match="direct must be True or False"):
        OsfWorld(WorldConfig(direct=1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="full_stack must be True or False"):
        SimParams(full_stack="yes")  # type: ignore[arg-type]


def test_direct_clients_take_only_the_servers_principals() -> None:
    world = OsfWorld(WorldConfig(direct=True))
    with pytest.raises(TypeError, match="agent must be a server Agent"):
        DirectToolClient(world.server.state, "agent-1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="account must be a server Account"):
        DirectRelayClient(world.server.state, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not an agent token of this world"):
        world.make_agent(token="not-a-token")
    assert isinstance(world.relay, FakeRelay)


def test_the_command_line_takes_full_stack() -> None:
    import io
    import json
    from contextlib import redirect_stdout

    from pytest_osfoundry.sim._cli import main

    outputs = []
    for extra in ([], ["--full-stack"]):
        out = io.StringIO()
        with redirect_stdout(out):
            assert main(["cancel", "--runs", "20", "--json", *extra]) == 0
        outputs.append(json.loads(out.getvalue()))
    assert [o["params"]["full_stack"] for o in outputs] == [False, True]
    assert outputs[0]["experiments"] == outputs[1]["experiments"]
