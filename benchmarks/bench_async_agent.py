"""Benchmark the async SDK agent on virtual time against the kit's synchronous agent.

Run ``python benchmarks/bench_async_agent.py`` (``--json`` for one machine-readable
line). One scenario, two agents, the same seed: a world (server, relay, engine) with
a one-minute Graph; the agent queues a run, waits 20 s, polls every 10 s until it
ends (80 virtual seconds).

* **async** — ``examples/sdk_agent.py`` (the official MCP Python SDK: ClientSession
  over streamable_http_client, httpx2) on :func:`pytest_osfoundry.aio.run`, through
  the in-process httpx2 mount;
* **sync** — the kit's :class:`~pytest_osfoundry.agent.ScriptedAgent` with
  ``wait_then_every(20, 10)``, on the same world;
* **kit-client async** — the same calls through the kit's own in-process MCP client,
  from a coroutine awaiting ``asyncio.sleep`` on the virtual loop: what the loop
  itself costs, without the SDK.

Runs are paired (sync, SDK async, sync, kit-client async, ...) in one process, so
all see the same machine; the figures are medians: virtual seconds per wall second
of the SDK agent (goal >= 100) and the ratios of the async medians to the sync one
(the issue's goal: <= 1.5). World construction is timed in every run. The SDK's
ratio is the official SDK's cost (pydantic models, anyio streams, httpx2, and 14
requests a run: handshake, tools/list, GET stream, DELETE beside the 8 tool calls)
against the kit's direct in-process client; the kit-client ratio is the virtual loop's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from sdk_agent import run_graph

from pytest_osfoundry import aio
from pytest_osfoundry.agent import wait_then_every
from pytest_osfoundry.doors import Httpx2Door
from pytest_osfoundry.engine import Fixed, Graph
from pytest_osfoundry.world import OsfWorld, WorldConfig

CONFIG = {"seed": 7, "graph": Graph(duration=Fixed(60))}


def sync_once() -> tuple[float, float]:
    """Wall seconds and virtual seconds of one run by the scripted agent."""
    start = time.perf_counter()
    world = OsfWorld(WorldConfig(**CONFIG))
    begin = world.clock.now()
    run = world.make_agent(strategy=wait_then_every(20, 10)).run(
        world.sessions[0].graph_session_id
    )
    assert run.status == "completed"
    return time.perf_counter() - start, world.clock.now() - begin


def async_once() -> tuple[float, float]:
    """Wall seconds and virtual seconds of one run by the SDK agent on the virtual loop."""
    start = time.perf_counter()
    world = OsfWorld(WorldConfig(**CONFIG))
    begin = world.clock.now()
    mount = Httpx2Door(world.faulty_server(), world.base_url)
    auth = {"Authorization": f"Bearer {world.creds.agent_token}"}

    async def main() -> dict[str, Any]:
        async with mount.async_client(headers=auth) as http:
            gsid = world.sessions[0].graph_session_id
            return await run_graph(world.mcp_url, http, gsid, "bench-key-00000001")

    assert aio.run(main(), world.clock)["status"] == "completed"
    return time.perf_counter() - start, world.clock.now() - begin


def loop_once() -> tuple[float, float]:
    """The scripted agent's calls (the kit's MCP client, in-process) from a coroutine that
    awaits ``asyncio.sleep`` on the virtual loop: the loop's own cost, without the SDK's."""
    import asyncio

    start = time.perf_counter()
    world = OsfWorld(WorldConfig(**CONFIG))
    begin = world.clock.now()
    client = world.agent_client()

    async def main() -> dict[str, Any]:
        ticket = client.run_graph_session(world.sessions[0].graph_session_id, "bench-key-02")
        await asyncio.sleep(20)
        while True:
            run = client.get_graph_run(ticket["command_id"])
            if run["status"] in ("completed", "failed", "cancelled"):
                return run
            await asyncio.sleep(10)

    assert aio.run(main(), world.clock)["status"] == "completed"
    return time.perf_counter() - start, world.clock.now() - begin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15, help="paired runs (default 15)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sync_once(), async_once(), loop_once()  # warm-up: imports, caches
    sync_walls, async_walls, loop_walls, virtual = [], [], [], 0.0
    for _ in range(args.pairs):
        sync_walls.append(sync_once()[0])
        wall, virtual = async_once()
        async_walls.append(wall)
        sync_walls.append(sync_once()[0])
        loop_walls.append(loop_once()[0])
    sync_median = statistics.median(sync_walls)
    async_median = statistics.median(async_walls)
    loop_median = statistics.median(loop_walls)
    figures = {
        "virtual seconds per run": virtual,
        "sync median wall ms": round(sync_median * 1000, 2),
        "SDK async median wall ms": round(async_median * 1000, 2),
        "kit-client async median wall ms": round(loop_median * 1000, 2),
        "SDK async virtual s per wall s": round(virtual / async_median),
        "SDK async / sync wall ratio": round(async_median / sync_median, 2),
        "kit-client async / sync ratio": round(loop_median / sync_median, 2),
    }
    if args.json:
        print(json.dumps(figures))
        return
    for name, value in figures.items():
        print(f"{name:32s} {value:>10}")


if __name__ == "__main__":
    main()
