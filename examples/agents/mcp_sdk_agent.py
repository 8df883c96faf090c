"""An agent on the official MCP Python SDK that follows the agent contract.

``pytest --osf-agent-command="python examples/agents/mcp_sdk_agent.py"`` grades it
(docs/agent-conformance.md). :mod:`agent_contract` is the contract's stack-neutral
part (saved keys and command ids, the cadence, the cancel, the report, the exit
status); this file is the wire, on ``ClientSession`` over ``streamable_http_client``,
and what the SDK does not do by itself: a lost reply (the connection dropped, HTTP
502/503/504, no answer within three intervals) or a session the server ended (404)
ends the SDK's session, so the agent opens a new one and asks the same call again (a
start: the same key and arguments). A tool error (D5, an unknown session), 401 and
403 are final.

``--plain`` leaves that out (the SDK's defaults: its client's timeouts, no retry, no
saved state), keeping the cadence: what the doc's table of each stack's defaults
measures.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import httpx2
from agent_contract import ContractAgent, Final
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

LOST_STATUSES = (404, 502, 503, 504)  # 404: the server ended the MCP session


class Lost(Exception):
    """No usable reply: ask again on a new session."""


def is_lost(err: BaseException) -> bool:
    """Whether ``err`` (every error of a group) is a lost reply."""
    inner = getattr(err, "exceptions", None)
    if inner:
        return all(is_lost(e) for e in inner)
    if isinstance(err, MCPError):
        return err.error.code == CONNECTION_CLOSED
    return isinstance(err, (Lost, httpx2.TransportError))


async def refuse_lost_statuses(response: httpx2.Response) -> None:
    """httpx2 response hook: a POST answered 404/502/503/504 is a lost reply."""
    if response.request.method == "POST" and response.status_code in LOST_STATUSES:
        raise Lost(f"HTTP {response.status_code}")


class SdkAgent(ContractAgent[ClientSession]):
    """The contract's agent on the official MCP Python SDK."""

    async def tool(self, session: ClientSession, name: str, **args: Any) -> dict[str, Any]:
        """Call tool ``name``; its structured answer (a tool error is final)."""
        result = await session.call_tool(name, args)
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            raise Final(f"{name}: {text}")
        return dict(result.structured_content or {})

    async def in_sessions(self) -> None:
        """Do the task, on a new session after every lost reply (plain: on one session)."""
        auth = {"Authorization": f"Bearer {self.token}"}
        http = (
            # the timeouts of the client the SDK makes when given none: 300 s to read
            httpx2.AsyncClient(headers=auth, timeout=httpx2.Timeout(30.0, read=300.0))
            if self.plain
            else httpx2.AsyncClient(
                headers=auth,
                timeout=httpx2.Timeout(3 * self.interval),  # no answer in 3 I: lost
                event_hooks={"response": [refuse_lost_statuses]},
            )
        )
        async with http:
            while True:
                try:
                    async with (
                        streamable_http_client(self.url, http_client=http) as (read, write),
                        ClientSession(read, write) as session,
                    ):
                        await session.initialize()
                        await self.do(session)
                        return
                except Exception as err:
                    if self.plain or not is_lost(err):
                        raise
                await anyio.sleep(min(1.0, self.interval / 4))


if __name__ == "__main__":
    sys.exit(anyio.run(SdkAgent(dict(os.environ), "--plain" in sys.argv[1:]).main))
