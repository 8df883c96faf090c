"""Interoperability with the official MCP Python SDK over Streamable HTTP on loopback.

The SDK (``mcp`` 2.x, on ``httpx2``) connects, initializes, lists the four tools and
calls them with the agent token as a bearer header, against the server answering in
``application/json`` and in ``text/event-stream``. Runs with ``anyio.run`` inside
plain sync tests, so no pytest async plugin is needed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import pytest

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.server import LoopbackServer, Provisioned, ReferenceServer
from tests.server.osf_server_kit import GS1, INVENTED, RUN_NOT_FOUND, session

pytest.importorskip("mcp")
httpx2 = pytest.importorskip("httpx2")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

Body = Callable[[ClientSession], Awaitable[Any]]


@pytest.fixture(params=[False, True], ids=["json", "sse"])
def live(request: pytest.FixtureRequest) -> Iterator[tuple[ReferenceServer, str, Provisioned]]:
    server = ReferenceServer(VirtualClock(), sse=request.param)
    info = server.provision()
    server.state.share(info.project_id, [session(GS1)])
    with LoopbackServer(server) as loop:
        yield server, loop.origin + "/mcp", info


def run_sdk(url: str, token: str | None, body: Body) -> Any:
    """Connect with the SDK, initialize, run ``body(session)``; return what it returns."""

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with anyio.fail_after(20):
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as sdk,
            ):
                init = await sdk.initialize()
                assert init.protocol_version == "2025-11-25"
                assert init.capabilities.tools is not None
                return await body(sdk)

    return anyio.run(main)


def test_sdk_lists_the_four_tools(live: tuple[ReferenceServer, str, Provisioned]) -> None:
    _, url, info = live

    async def body(sdk: ClientSession) -> Any:
        return (await sdk.list_tools()).tools

    for token in (info.agent_token, None):  # D3: no token needed
        tools = run_sdk(url, token, body)
        assert [t.name for t in tools] == [
            "run_graph_session",
            "list_graph_sessions",
            "get_graph_run",
            "cancel_graph_run",
        ]
        by_name = {t.name: t for t in tools}
        assert by_name["run_graph_session"].input_schema["required"] == [
            "graph_session_id",
            "idempotency_key",
        ]
        assert by_name["get_graph_run"].annotations.read_only_hint is True
        assert "started by this Connected agent" in (by_name["cancel_graph_run"].description or "")


def test_sdk_unknown_run_is_a_tool_error(live: tuple[ReferenceServer, str, Provisioned]) -> None:
    _, url, info = live

    async def body(sdk: ClientSession) -> Any:
        return await sdk.call_tool("get_graph_run", {"command_id": INVENTED})

    result = run_sdk(url, info.agent_token, body)
    assert result.is_error is True
    assert [(c.type, c.text) for c in result.content] == [("text", RUN_NOT_FOUND)]
    assert result.structured_content is None


def test_sdk_queue_read_cancel(live: tuple[ReferenceServer, str, Provisioned]) -> None:
    server, url, info = live

    async def body(sdk: ClientSession) -> Any:
        ticket = await sdk.call_tool(
            "run_graph_session",
            {"graph_session_id": GS1, "idempotency_key": "sdk-key-001", "arguments": {"a": 1}},
        )
        cid = ticket.structured_content["command_id"]
        view = await sdk.call_tool("get_graph_run", {"command_id": cid})
        listed = await sdk.call_tool("list_graph_sessions", {"project_id": info.project_id})
        cancelled = await sdk.call_tool("cancel_graph_run", {"command_id": cid})
        return ticket, view, listed, cancelled

    ticket, view, listed, cancelled = run_sdk(url, info.agent_token, body)
    assert not ticket.is_error and ticket.structured_content["status"] == "queued"
    cid = ticket.structured_content["command_id"]
    assert view.structured_content["command_id"] == cid
    assert view.structured_content["status"] == "queued"
    assert listed.structured_content == {"project_id": info.project_id, "sessions": [session(GS1)]}
    assert cancelled.structured_content == {
        "command_id": cid,
        "status": "cancelled",
        "cancel_requested": True,
    }
    assert server.state.runs[cid].status == "cancelled"


def test_sdk_sees_401_without_token(live: tuple[ReferenceServer, str, Provisioned]) -> None:
    server, url, _ = live

    async def body(sdk: ClientSession) -> Any:
        with pytest.raises(MCPError, match="Unauthorized: a valid bearer token is required"):
            await sdk.call_tool(
                "run_graph_session", {"graph_session_id": GS1, "idempotency_key": "sdk-key-002"}
            )

    run_sdk(url, None, body)
    assert server.state.runs == {}


def test_sdk_schema_violation_comes_back_as_tool_error(
    live: tuple[ReferenceServer, str, Provisioned],
) -> None:
    server, url, info = live

    async def body(sdk: ClientSession) -> Any:
        return await sdk.call_tool(
            "run_graph_session", {"graph_session_id": GS1, "idempotency_key": "short"}
        )

    result = run_sdk(url, info.agent_token, body)
    assert result.is_error is True
    assert result.content[0].text.startswith(
        "Invalid arguments for run_graph_session: idempotency_key: "
    )
    assert server.state.runs == {}
