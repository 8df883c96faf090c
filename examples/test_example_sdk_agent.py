"""Example (f): an agent on the official MCP Python SDK, tested on virtual time.

``virtual_loop=True`` runs the ``async def`` test on an event loop whose time is the
kit's virtual clock: when the agent awaits ``anyio.sleep(20)`` and nothing else is
ready, time jumps to the next due event (a relay pass, the Graph's completion, the
agent's own timer), so a one-minute Graph takes milliseconds. ``osf_httpx2`` is the
server as an httpx2 transport, the HTTP stack the SDK sends through.
"""

from datetime import datetime, timezone

import pytest
from sdk_agent import run_graph

from pytest_osfoundry.engine import Fixed, Graph

MINUTE_GRAPH = Graph(duration=Fixed(60))


def stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.osf(seed=7, graph=MINUTE_GRAPH, virtual_loop=True)
async def test_sdk_agent_polls_a_minute_long_graph(osf_world, osf_httpx2):
    auth = {"Authorization": f"Bearer {osf_world.creds.agent_token}"}
    started = osf_world.clock.now()
    async with osf_httpx2.async_client(headers=auth) as http:
        run = await run_graph(
            osf_world.mcp_url, http, osf_world.sessions[0].graph_session_id, "example-key-0001"
        )

    assert run["status"] == "completed"
    assert (stamp(run["finished_at"]) - stamp(run["started_at"])).total_seconds() == 60
    assert osf_world.clock.now() - started == 80  # 20 s to pick up, 60 s to run, none slept
    late = (datetime.now(timezone.utc) - stamp(run["finished_at"])).total_seconds()
    assert 0 <= late <= 10  # seen at most one poll after it finished (datetime follows)


@pytest.mark.osf(seed=3, graph=MINUTE_GRAPH, drop_replies=0.3, virtual_loop=True)
async def test_sdk_agent_retries_lost_replies_with_the_same_key(osf_world, osf_httpx2):
    auth = {"Authorization": f"Bearer {osf_world.creds.agent_token}"}
    async with osf_httpx2.async_client(headers=auth) as http:
        run = await run_graph(
            osf_world.mcp_url, http, osf_world.sessions[0].graph_session_id, "example-key-0002"
        )

    assert run["status"] == "completed"
    (drops,) = osf_httpx2.handler.faults
    assert drops.dropped > 0  # replies were lost, so the agent asked again
    assert len(osf_world.server.state.runs) == 1  # and exactly one run was queued
