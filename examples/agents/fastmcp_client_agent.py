"""An agent on fastmcp's ``Client`` that follows the agent contract.

``pytest --osf-agent-command="python examples/agents/fastmcp_client_agent.py"`` grades it
(docs/agent-conformance.md). :mod:`agent_contract` is the contract's stack-neutral
part; this file is the wire in fastmcp's idiom (``Client`` over
``StreamableHttpTransport``, ``call_tool``, whose tool error raises fastmcp's
``ToolError``) and what fastmcp does not do by itself: a lost reply (the connection
dropped, HTTP 502/503/504, no answer within three intervals) or a session the server
ended (404) ends fastmcp's session, so the agent opens a new one and asks the same call
again (a start: the same key and arguments). The HTTP client comes from
``httpx_client_factory``: a per-request time-out and a response hook that turns those
statuses into a lost reply. A tool error (D5, an unknown session), 401 and 403 are
final.

``--plain`` leaves that out (fastmcp's defaults: no retry, no saved state), keeping the
cadence: what the doc's table of each stack's defaults measures.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import httpx2
from agent_contract import ContractAgent, Final
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.exceptions import ToolError

LOST_STATUSES = (404, 502, 503, 504)  # 404: the server ended the MCP session


class Lost(Exception):
    """No usable reply: ask again on a new session."""


def is_lost(err: BaseException) -> bool:
    """Whether ``err`` (every error of a group, or the error fastmcp raised it from) is a
    lost reply."""
    inner = getattr(err, "exceptions", None)
    if inner:
        return all(is_lost(e) for e in inner)
    if isinstance(err, (Lost, httpx2.TransportError)):
        return True
    return err.__cause__ is not None and is_lost(err.__cause__)  # fastmcp's RuntimeError


async def refuse_lost_statuses(response: httpx2.Response) -> None:
    """httpx2 response hook: a POST answered 404/502/503/504 is a lost reply."""
    if response.request.method == "POST" and response.status_code in LOST_STATUSES:
        raise Lost(f"HTTP {response.status_code}")


class FastMcpAgent(ContractAgent[Client[Any]]):
    """The contract's agent on fastmcp's ``Client``."""

    def http_client(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        **kwargs: Any,
    ) -> httpx2.AsyncClient:
        """fastmcp's ``httpx_client_factory``: no answer in three intervals is lost."""
        return httpx2.AsyncClient(
            headers=headers,
            auth=auth,
            timeout=httpx2.Timeout(3 * self.interval),
            event_hooks={"response": [refuse_lost_statuses]},
            **kwargs,
        )

    async def tool(self, session: Client[Any], name: str, **args: Any) -> dict[str, Any]:
        """Call tool ``name``; its structured answer (a tool error is final)."""
        try:
            result = await session.call_tool(name, args)
        except ToolError as err:
            raise Final(f"{name}: {err}") from None
        return dict(result.structured_content or {})

    async def in_sessions(self) -> None:
        """Do the task, on a new session after every lost reply (plain: on one session)."""
        while True:
            transport = StreamableHttpTransport(
                self.url,
                auth=self.token,
                httpx_client_factory=None if self.plain else self.http_client,
            )
            try:
                async with Client(transport) as client:
                    await self.do(client)
                    return
            except Exception as err:
                if self.plain or not is_lost(err):
                    raise
            await anyio.sleep(min(1.0, self.interval / 4))


if __name__ == "__main__":
    sys.exit(anyio.run(FastMcpAgent(dict(os.environ), "--plain" in sys.argv[1:]).main))
