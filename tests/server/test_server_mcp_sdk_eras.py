"""The official MCP Python SDK (``mcp`` 2.x ``Client``) against the dual-era reference server.

Modern (``mode="2026-07-28"`` and ``mode="auto"`` against a dual-era or modern-only
server: ``server/discover``, per-request ``_meta``, ``Mcp-Method``/``Mcp-Name``) and
legacy (``mode="legacy"``, and ``mode="auto"`` falling back against a legacy-only
server), JSON and SSE answers, over a real loopback socket.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.server import LoopbackServer, Provisioned, ReferenceServer
from tests.server.osf_server_kit import GS1, INVENTED, RUN_NOT_FOUND, session

pytest.importorskip("mcp")
httpx2 = pytest.importorskip("httpx2")

from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

ALL = None
MODERN_ONLY = ["2026-07-28"]
LEGACY_ONLY = ["2025-11-25", "2025-06-18"]

# (server protocols, SDK mode, the revision the SDK must end up on)
CASES = [
    (ALL, "2026-07-28", "2026-07-28"),
    (ALL, "auto", "2026-07-28"),
    (MODERN_ONLY, "auto", "2026-07-28"),
    (ALL, "legacy", "2025-11-25"),
    (LEGACY_ONLY, "auto", "2025-11-25"),
]


@pytest.fixture(params=[False, True], ids=["json", "sse"])
def sse(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def serve(
    protocols: list[str] | None, sse: bool
) -> Iterator[tuple[ReferenceServer, str, Provisioned]]:
    server = ReferenceServer(VirtualClock(), sse=sse, protocols=protocols)
    info = server.provision()
    server.state.share(info.project_id, [session(GS1)])
    with LoopbackServer(server) as loop:
        yield server, loop.origin + "/mcp", info


def run_client(url: str, token: str, mode: str, body: Any) -> Any:
    async def main() -> Any:
        with anyio.fail_after(20):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, mode=mode, cache=None) as client:
                    return client.protocol_version, await body(client)

    return anyio.run(main)


@pytest.mark.parametrize(("protocols", "mode", "expected"), CASES)
def test_sdk_client_queues_reads_and_cancels_on_every_era(
    protocols: list[str] | None, mode: str, expected: str, sse: bool
) -> None:
    for server, url, info in serve(protocols, sse):

        async def body(client: Client) -> Any:
            tools = (await client.list_tools()).tools
            ticket = await client.call_tool(
                "run_graph_session", {"graph_session_id": GS1, "idempotency_key": "sdk-era-001"}
            )
            cid = ticket.structured_content["command_id"]
            view = await client.call_tool("get_graph_run", {"command_id": cid})
            missing = await client.call_tool("get_graph_run", {"command_id": INVENTED})
            cancelled = await client.call_tool("cancel_graph_run", {"command_id": cid})
            return tools, ticket, view, missing, cancelled

        version, (tools, ticket, view, missing, cancelled) = run_client(
            url, info.agent_token, mode, body
        )
        assert version == expected
        assert len(tools) == 4
        assert ticket.structured_content["status"] == "queued"
        assert view.structured_content["command_id"] == ticket.structured_content["command_id"]
        assert missing.is_error is True and missing.content[0].text == RUN_NOT_FOUND
        assert cancelled.structured_content["status"] == "cancelled"
        assert len(server.state.runs) == 1
