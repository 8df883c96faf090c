"""Example (g): one agent on every client stack, four scenarios each, on virtual time.

An agent team's thirty lines (queue with a key, wait 20 s, poll every 10 s, repeat a
call whose reply was lost with the same key, cancel) in the idiom of each stack, each
wired to the world by one line (docs/fixtures.md):

* httpx, sync (:mod:`polling_agent`): ``osf_respx`` + ``patch_sleep``;
* requests, sync (:mod:`requests_agent`): ``osf_requests`` + ``patch_sleep``;
* aiohttp (:mod:`aiohttp_agent`): ``osf_loopback`` on the virtual loop (real sockets:
  the loop holds time while the in-process server holds a request);
* the official MCP SDK (:mod:`sdk_agent`): ``osf_httpx2`` in-process, and over
  ``osf_loopback``'s real sockets;
* fastmcp's ``Client`` (:mod:`fastmcp_agent`): ``osf_httpx2`` as its
  ``httpx_client_factory``.

The scenarios: a minute-long Graph; 30 % of the replies dropped; the desktop asleep
for two minutes; a cancel of the running Graph. Every stack ends each scenario at
exactly the same virtual time (:data:`ENDS`), the async ones over real sockets
included, and queues exactly one run however many replies it lost.
"""

from __future__ import annotations

from typing import Any

import fastmcp_agent
import httpx2
import pytest
import requests_agent
import sdk_agent
from aiohttp_agent import run_graph as aiohttp_run_graph
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from mcp.shared.exceptions import MCPError
from polling_agent import GraphRunner

from pytest_osfoundry.engine import Fixed, Graph
from pytest_osfoundry.faults import DropReplies, FaultyHandler

MINUTE_GRAPH = Graph(duration=Fixed(60))

#: The four scenarios, by the osf options of each.
SCENARIOS: dict[str, dict[str, Any]] = {
    "minute-graph": {"seed": 7, "graph": MINUTE_GRAPH},
    "drop-replies": {"seed": 3, "graph": MINUTE_GRAPH, "drop_replies": 0.3},
    "desktop-offline": {"seed": 2, "graph": MINUTE_GRAPH, "offline": (1, 120)},
    "running-cancel": {"seed": 5, "graph": MINUTE_GRAPH},
}

#: Virtual seconds from queueing to the agent seeing the run end, on every stack: 20 s
#: to the first pickup and 60 s of Graph; a lost reply costs no time (asked again at
#: once); the desktop asleep from +1 to +121 picks the run up as it wakes, so it ends
#: at +181, seen at the poll at +190; a cancel sent at the first poll (+20, running)
#: is seen done at the next one (+30).
ENDS = {"minute-graph": 80, "drop-replies": 80, "desktop-offline": 190, "running-cancel": 30}


def scenarios(**extra: Any) -> list[Any]:
    return [
        pytest.param(name, marks=pytest.mark.osf(**options, **extra), id=name)
        for name, options in SCENARIOS.items()
    ]


def check(world: Any, name: str, run: dict[str, Any], started: float, lost: int) -> None:
    """What every stack shows at the end of scenario ``name`` (``lost``: replies dropped)."""
    assert run["status"] == ("cancelled" if name == "running-cancel" else "completed")
    assert world.clock.now() - started == ENDS[name]
    assert len(world.server.state.runs) == 1  # one run queued, however many replies were lost
    assert (lost > 0) == (name == "drop-replies")


def dropped(handler: object) -> int:
    """Replies the door's drop fault took (0 when it has none)."""
    faults = handler.faults if isinstance(handler, FaultyHandler) else ()
    return sum(f.dropped for f in faults if isinstance(f, DropReplies))


def session_id(world: Any) -> str:
    return str(world.sessions[0].graph_session_id)


@pytest.mark.parametrize("name", scenarios(patch_sleep=True))
def test_httpx_agent(osf_world, osf_respx, name):
    agent = GraphRunner(osf_world.mcp_url, osf_world.creds.agent_token)
    agent.connect()
    started = osf_world.clock.now()
    run = agent.run_and_wait(session_id(osf_world), "httpx-key-0001",
                             cancel=name == "running-cancel")
    check(osf_world, name, run, started, agent.lost)


@pytest.mark.parametrize("name", scenarios(patch_sleep=True))
def test_requests_agent(osf_world, osf_requests, name):
    started = osf_world.clock.now()
    run = requests_agent.run_graph(
        osf_world.mcp_url, osf_world.creds.agent_token, session_id(osf_world),
        "requests-key-0001", cancel=name == "running-cancel",
    )
    check(osf_world, name, run, started, dropped(osf_requests.handler))


@pytest.mark.parametrize("name", scenarios(virtual_loop=True))
async def test_aiohttp_agent_over_loopback(osf_world, osf_loopback, name):
    started = osf_world.clock.now()
    run = await aiohttp_run_graph(
        osf_loopback.origin + "/mcp", osf_world.creds.agent_token, session_id(osf_world),
        "aiohttp-key-0001", cancel=name == "running-cancel",
    )
    check(osf_world, name, run, started, dropped(osf_loopback.handler))


@pytest.mark.parametrize("name", scenarios(virtual_loop=True))
async def test_sdk_agent_in_process(osf_world, osf_httpx2, name):
    auth = {"Authorization": f"Bearer {osf_world.creds.agent_token}"}
    started = osf_world.clock.now()
    async with osf_httpx2.async_client(headers=auth) as http:
        run = await sdk_agent.run_graph(osf_world.mcp_url, http, session_id(osf_world),
                                        "sdk-key-0001", cancel=name == "running-cancel")
    check(osf_world, name, run, started, dropped(osf_httpx2.handler))


@pytest.mark.parametrize("name", scenarios(virtual_loop=True))
async def test_sdk_agent_over_loopback(osf_world, osf_loopback, name):
    auth = {"Authorization": f"Bearer {osf_world.creds.agent_token}"}
    started = osf_world.clock.now()
    async with httpx2.AsyncClient(headers=auth) as http:  # real sockets, the SDK's defaults
        run = await sdk_agent.run_graph(osf_loopback.origin + "/mcp", http,
                                        session_id(osf_world), "sdk-key-0002",
                                        cancel=name == "running-cancel")
    check(osf_world, name, run, started, dropped(osf_loopback.handler))


@pytest.mark.parametrize("name", scenarios(virtual_loop=True))
async def test_fastmcp_agent(osf_world, osf_httpx2, name):
    def make_client() -> Client[Any]:
        return Client(StreamableHttpTransport(
            osf_world.mcp_url, auth=osf_world.creds.agent_token,
            httpx_client_factory=osf_httpx2.async_client,
        ))

    started = osf_world.clock.now()
    run = await fastmcp_agent.run_graph(make_client, session_id(osf_world), "fastmcp-key-0001",
                                        cancel=name == "running-cancel")
    check(osf_world, name, run, started, dropped(osf_httpx2.handler))


# ------------------------------------------------------------------ what a lost reply looks like
# What each stack raises when a reply is lost (the request reached the server, the
# connection closed without an answer): what an agent's retry must catch. docs/fixtures.md
# ("What each framework does under faults") quotes these.


def errors_of(err: BaseException) -> list[BaseException]:
    """``err``, or the leaves of an exception group."""
    inner = getattr(err, "exceptions", None)
    return [leaf for e in inner for leaf in errors_of(e)] if inner else [err]


@pytest.mark.osf(drop_replies=1.0)
def test_a_lost_reply_in_httpx_and_requests(osf_world, osf_respx, osf_requests):
    import httpx
    import requests

    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(osf_world.mcp_url, json={})
    with pytest.raises(requests.ConnectionError, match="Remote end closed connection"):
        requests.post(osf_world.mcp_url, json={})


@pytest.mark.osf(drop_replies=1.0, virtual_loop=True)
async def test_a_lost_reply_in_aiohttp(osf_world, osf_loopback):
    import aiohttp

    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.ServerDisconnectedError):  # an aiohttp.ClientError
            await http.post(osf_loopback.origin + "/mcp", json={})


async def lost_mid_session(osf_world: Any, osf_httpx2: Any, call: Any) -> BaseException:
    """Connect with the drops held back, then let them take the next reply; what ``call``
    (given the connected client) raised."""
    (drops,) = osf_httpx2.handler.faults
    osf_httpx2.handler.faults.remove(drops)
    try:
        await call(lambda: osf_httpx2.handler.faults.append(drops))
    except Exception as err:  # what it raised is the finding
        return err
    raise AssertionError("the lost reply raised nothing")


@pytest.mark.osf(drop_replies=1.0, virtual_loop=True)
async def test_a_lost_reply_in_the_official_sdk_ends_the_session(osf_world, osf_httpx2):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    project = {"project_id": osf_world.project_id}
    auth = {"Authorization": f"Bearer {osf_world.creds.agent_token}"}

    async def call(drop: Any) -> None:
        async with (
            osf_httpx2.async_client(headers=auth) as http,
            streamable_http_client(osf_world.mcp_url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            drop()
            await session.call_tool("list_graph_sessions", project)

    with pytest.raises(Exception) as connecting:  # lost while connecting
        await call(lambda: None)
    (leaf,) = errors_of(connecting.value)
    assert connecting.value is not leaf and isinstance(leaf, httpx2.RemoteProtocolError)

    err = await lost_mid_session(osf_world, osf_httpx2, call)  # lost on a call
    (leaf,) = errors_of(err)
    assert err is not leaf and isinstance(leaf, MCPError) and "Connection closed" in str(leaf)


@pytest.mark.osf(drop_replies=1.0, virtual_loop=True)
async def test_a_lost_reply_in_fastmcp(osf_world, osf_httpx2):
    def client() -> Client[Any]:
        return Client(StreamableHttpTransport(
            osf_world.mcp_url, auth=osf_world.creds.agent_token,
            httpx_client_factory=osf_httpx2.async_client,
        ))

    with pytest.raises(RuntimeError, match=r"^Client failed to connect: Server disconnected"):
        async with client():  # lost while connecting: a bare RuntimeError
            pass

    async def call(drop: Any) -> None:
        async with client() as connected:
            drop()
            await connected.call_tool("list_graph_sessions", {"project_id": osf_world.project_id})

    err = await lost_mid_session(osf_world, osf_httpx2, call)
    assert type(err) is httpx2.RemoteProtocolError  # lost on a call: httpx2's own, no group


@pytest.mark.osf(server_errors=("/mcp", 503), virtual_loop=True)
async def test_a_server_error_in_the_sdk_and_fastmcp(osf_world, osf_httpx2):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    auth = {"Authorization": f"Bearer {osf_world.creds.agent_token}"}
    with pytest.raises(Exception) as sdk:
        async with (
            osf_httpx2.async_client(headers=auth) as http,
            streamable_http_client(osf_world.mcp_url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
    (leaf,) = errors_of(sdk.value)
    assert sdk.value is not leaf and isinstance(leaf, MCPError)
    assert str(leaf) == "Server returned an error response"

    transport = StreamableHttpTransport(osf_world.mcp_url, auth=osf_world.creds.agent_token,
                                        httpx_client_factory=osf_httpx2.async_client)
    with pytest.raises(MCPError, match=r"^Server returned an error response$"):
        async with Client(transport):
            pass
