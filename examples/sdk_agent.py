"""A user's own agent on the official MCP Python SDK: queue a Graph run and poll it.

The twenty lines an agent team writes: ``ClientSession`` over
``streamable_http_client``, queue with an idempotency key, wait one pickup interval
(20 s), then poll every 10 s until the run is terminal. A lost reply ends the SDK's
session, so a call whose reply is lost is made again on a new session with the same
arguments (the same idempotency key: the server queues one run however often it is
asked). It knows nothing of the kit; ``test_example_sdk_agent.py`` tests it.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

TERMINAL = ("completed", "failed", "cancelled")


def reply_lost(err: BaseException) -> bool:
    """Whether ``err`` (or every error of a group) says the connection failed."""
    inner = getattr(err, "exceptions", None)
    if inner:
        return all(reply_lost(e) for e in inner)
    return isinstance(err, (httpx2.TransportError, MCPError))


async def call(mcp_url: str, http: httpx2.AsyncClient, tool: str, **args: Any) -> dict[str, Any]:
    """Call ``tool`` on a fresh session; make the same call again when its reply is lost."""
    for _ in range(10):
        try:
            async with (
                streamable_http_client(mcp_url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool(tool, args)
        except Exception as err:
            if not reply_lost(err):
                raise
            continue
        if result.is_error:
            raise RuntimeError(f"{tool}: {result.content[0]}")
        structured: dict[str, Any] = result.structured_content or {}
        return structured
    raise RuntimeError(f"{tool}: no reply in 10 attempts")


async def run_graph(
    mcp_url: str, http: httpx2.AsyncClient, graph_session_id: str, key: str
) -> dict[str, Any]:
    """Queue a run of ``graph_session_id`` under ``key``, poll until it ends, return it."""
    ticket = await call(
        mcp_url, http, "run_graph_session", graph_session_id=graph_session_id,
        idempotency_key=key,
    )
    await anyio.sleep(20)
    while True:
        run = await call(mcp_url, http, "get_graph_run", command_id=ticket["command_id"])
        if run["status"] in TERMINAL:
            return run
        await anyio.sleep(10)
