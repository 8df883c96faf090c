"""Example (e): the owner's desktop dies mid-Graph; the agent gives up sensibly.

``desktop_dies=45`` kills the fake desktop relay 45 virtual seconds in, with
whatever it holds: the run it started stays ``running`` on the server for good
(the documented relay has no lease), exactly as when a real desktop crashes or is
switched off. An agent that waits for ``completed`` forever hangs; this one gives
the run a budget, then asks for a cancel and reports the run as abandoned.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from polling_agent import GraphRunner

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.engine import Graph
from pytest_osfoundry.world import OsfWorld


def run_with_budget(
    runner: GraphRunner, graph_session_id: str, key: str, budget: float, every: float = 30
) -> dict[str, Any]:
    """Queue a run and poll it; past ``budget`` seconds, cancel it and give up."""
    ticket = runner.call(
        "run_graph_session", graph_session_id=graph_session_id, idempotency_key=key
    )
    deadline = time.monotonic() + budget
    while True:
        time.sleep(every)
        runner.polls += 1
        run = runner.call("get_graph_run", command_id=ticket["command_id"])
        if run["status"] in ("completed", "failed", "cancelled"):
            return run
        if time.monotonic() >= deadline:
            runner.call("cancel_graph_run", command_id=ticket["command_id"])
            return {**run, "abandoned": True}


@pytest.mark.osf(seed=3, patch_sleep=True, desktop_dies=45, graph=Graph(duration=300.0))
def test_agent_gives_up_on_a_run_whose_desktop_died(
    osf_world: OsfWorld, osf_clock: VirtualClock, osf_respx: object
) -> None:
    runner = GraphRunner(osf_world.mcp_url, osf_world.creds.agent_token)
    runner.connect()
    started = osf_clock.now()

    run = run_with_budget(runner, osf_world.sessions[0].graph_session_id, "dies-0001", 600)

    assert run.get("abandoned") is True and run["status"] == "running"
    assert 600 <= osf_clock.now() - started <= 600 + 30  # gave up on time, no later
    assert runner.polls <= 21  # and polled at a sensible pace meanwhile
    [death] = osf_world.deaths
    assert death.running == run["command_id"]
    view = osf_world.run_view(run["command_id"])
    assert view["status"] == "running" and view["cancel_requested"] is True
