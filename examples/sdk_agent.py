"""A user's own agent on the official MCP Python SDK: queue a Graph run and poll it.

The twenty lines an agent team writes: ``ClientSession`` over
``streamable_http_client``, queue with an idempotency key, wait one pickup interval
(20 s), then poll every 10 s until the run is terminal (``cancel=True``: cancel it once
it is seen running). A lost reply ends the SDK's
session, so the agent connects again and repeats the call whose reply it lost, with
the same arguments (the same idempotency key: the server queues one run however
often it is asked). It knows nothing of the kit; ``test_example_sdk_agent.py`` tests it.
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


async def tool(session: ClientSession, name: str, **args: Any) -> dict[str, Any]:
    """Call tool ``name``; its structured result (a tool error raises RuntimeError)."""
    result = await session.call_tool(name, args)
    if result.is_error:
        raise RuntimeError(f"{name}: {result.content[0]}")
    structured: dict[str, Any] = result.structured_content or {}
    return structured


async def run_graph(
    mcp_url: str,
    http: httpx2.AsyncClient,
    graph_session_id: str,
    key: str,
    *,
    cancel: bool = False,
) -> dict[str, Any]:
    """Queue a run of ``graph_session_id`` under ``key``, poll until it ends, return it.

    One session while it lasts; when a reply is lost the session ends, and the agent
    connects again and repeats the call it was making (the same key, if it was queueing).
    """
    ticket: dict[str, Any] | None = None
    for _ in range(50):
        try:
            async with (
                streamable_http_client(mcp_url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                if ticket is None:
                    ticket = await tool(
                        session, "run_graph_session", graph_session_id=graph_session_id,
                        idempotency_key=key,
                    )
                    await anyio.sleep(20)
                while True:
                    run = await tool(session, "get_graph_run", command_id=ticket["command_id"])
                    if run["status"] in TERMINAL:
                        return run
                    if cancel and run["status"] == "running":
                        await tool(session, "cancel_graph_run", command_id=ticket["command_id"])
                    await anyio.sleep(10)
        except Exception as err:
            if not reply_lost(err):
                raise
    raise RuntimeError("no reply in 50 connections")
