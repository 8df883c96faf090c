"""A user's own agent on fastmcp's ``Client``: queue a Graph run, poll it, cancel it.

The same agent as :mod:`sdk_agent`, in fastmcp's idiom: ``Client`` over
``StreamableHttpTransport``, ``call_tool`` (a tool error raises fastmcp's
``ToolError``). What fastmcp does with a lost reply is what the agent must handle: the
session it was on is over, and fastmcp says so as a ``RuntimeError`` ("Client failed to
connect: …") or an httpx2 transport error, so the agent connects again and repeats the
call whose reply it lost, the same idempotency key included. ``make_client`` is where a
test wires the HTTP stack in (``httpx_client_factory``); the agent knows nothing of the
kit: ``test_example_stacks.py`` tests it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import httpx2
from fastmcp import Client
from mcp.shared.exceptions import MCPError

TERMINAL = ("completed", "failed", "cancelled")


def reply_lost(err: BaseException) -> bool:
    """Whether ``err`` (or every error of a group) says the connection or session failed."""
    inner = getattr(err, "exceptions", None)
    if inner:
        return all(reply_lost(e) for e in inner)
    return isinstance(err, (RuntimeError, httpx2.TransportError, MCPError))


async def run_graph(
    make_client: Callable[[], Client[Any]], graph_session_id: str, key: str, *,
    cancel: bool = False,
) -> dict[str, Any]:
    """Queue a run under ``key``, poll until it ends (cancelling it once running)."""
    ticket: dict[str, Any] | None = None
    for _ in range(50):
        try:
            async with make_client() as client:
                if ticket is None:
                    queued = await client.call_tool(
                        "run_graph_session",
                        {"graph_session_id": graph_session_id, "idempotency_key": key},
                    )
                    ticket = queued.structured_content or {}
                    await anyio.sleep(20)
                while True:
                    polled = await client.call_tool(
                        "get_graph_run", {"command_id": ticket["command_id"]}
                    )
                    run: dict[str, Any] = polled.structured_content or {}
                    if run["status"] in TERMINAL:
                        return run
                    if cancel and run["status"] == "running":
                        await client.call_tool(
                            "cancel_graph_run", {"command_id": ticket["command_id"]}
                        )
                    await anyio.sleep(10)
        except Exception as err:
            if not reply_lost(err):
                raise
    raise RuntimeError("no reply in 50 connections")
