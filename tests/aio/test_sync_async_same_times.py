"""A sync and an async agent on the same seed see the same run times."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry import aio
from pytest_osfoundry.agent import wait_then_every
from pytest_osfoundry.doors import Httpx2Door
from pytest_osfoundry.world import OsfWorld, WorldConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from sdk_agent import run_graph

TIMES = ("queued_at", "started_at", "finished_at")


def sync_run(seed: int) -> tuple[dict[str, Any], float]:
    world = OsfWorld(WorldConfig(seed=seed))
    agent = world.make_agent(strategy=wait_then_every(20, 10))
    run = agent.run(world.sessions[0].graph_session_id)
    assert run.view is not None and run.seen_at is not None
    return run.view, run.seen_at


def async_run(seed: int) -> tuple[dict[str, Any], float]:
    world = OsfWorld(WorldConfig(seed=seed))
    mount = Httpx2Door(world.faulty_server(), world.base_url)
    auth = {"Authorization": f"Bearer {world.creds.agent_token}"}

    async def main() -> dict[str, Any]:
        async with mount.async_client(headers=auth) as http:
            gsid = world.sessions[0].graph_session_id
            return await run_graph(world.mcp_url, http, gsid, "same-times-key-01")

    view = aio.run(main(), world.clock)
    return view, world.clock.now()


@pytest.mark.parametrize("seed", [1, 4])
def test_the_same_seed_gives_the_same_times(seed: int) -> None:
    sync_view, sync_seen = sync_run(seed)
    async_view, async_seen = async_run(seed)
    assert sync_view["status"] == async_view["status"] == "completed"
    assert {k: sync_view[k] for k in TIMES} == {k: async_view[k] for k in TIMES}
    assert sync_seen == async_seen  # both saw it end at the same poll
