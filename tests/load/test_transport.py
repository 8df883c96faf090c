"""StatsTransport: every tool call and relay action named; a lost reply is a failure."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_osfoundry.client import DirectTransport, McpClient, RelayClient, ReplyLost
from pytest_osfoundry.client._errors import ToolError
from pytest_osfoundry.faults import DropReplies, FaultyTransport
from pytest_osfoundry.http import Response
from pytest_osfoundry.load import StatsTransport
from pytest_osfoundry.load._transport import name_of, refusal_of
from pytest_osfoundry.server import ReferenceServer

URL = "http://127.0.0.1:9/mcp"
GSID = "gs_" + "a" * 32


class Fired(list[dict[str, Any]]):
    def __call__(self, **event: Any) -> None:
        self.append(event)


@pytest.fixture
def world():
    server = ReferenceServer(public_url=URL)
    info = server.provision()
    return server, info


def test_tool_calls_and_relay_actions_are_named_and_timed(world) -> None:
    server, info = world
    fired = Fired()
    transport = StatsTransport(DirectTransport(server), fired)
    relay = RelayClient(transport, "http://127.0.0.1:9", info.desktop_token)
    relay.sync(info.project_id, [{"graph_session_id": GSID, "name": "n", "description": "",
                                  "slug": "n", "version": 1, "status": "active"}])
    agent = McpClient(transport, URL, info.agent_token)
    ticket = agent.run_graph_session(GSID, "k" * 16)
    agent.get_graph_run(ticket["command_id"])
    relay.start(ticket["command_id"], "exec_1")
    relay.control(ticket["command_id"])
    names = [(e["request_type"], e["name"]) for e in fired]
    assert ("relay", "sync") in names and ("relay", "start") in names
    assert ("relay", "control") in names
    assert ("MCP", "run_graph_session") in names and ("MCP", "get_graph_run") in names
    assert all(e["exception"] is None for e in fired)
    assert all(e["response_time"] >= 0 and e["response_length"] > 0 for e in fired)


def test_a_reply_dropped_after_the_server_answered_counts_as_a_failure(world) -> None:
    server, info = world
    fired = Fired()
    faulty = FaultyTransport(DirectTransport(server), DropReplies(fraction=1.0, match="/mcp"))
    agent = McpClient(StatsTransport(faulty, fired), URL, info.agent_token)
    with pytest.raises(ReplyLost):
        agent.list_graph_sessions(info.project_id)
    assert fired and all(isinstance(e["exception"], ReplyLost) for e in fired)
    assert all(e["response_length"] == 0 for e in fired)


def test_http_errors_and_tool_errors_count_as_failures(world) -> None:
    server, info = world
    fired = Fired()
    transport = StatsTransport(DirectTransport(server), fired)
    with pytest.raises(ToolError):
        McpClient(transport, URL, info.agent_token).get_graph_run("not-a-run")
    assert fired[-1]["name"] == "get_graph_run"
    assert "isError" in str(fired[-1]["exception"])
    fired.clear()
    with pytest.raises(Exception):  # noqa: B017 - the client's error for a 401 is not ours
        RelayClient(transport, "http://127.0.0.1:9", "wrong-token").control("x")
    assert str(fired[-1]["exception"]) == "HTTP 401"


@pytest.mark.parametrize(
    ("method", "url", "body", "expected"),
    [
        ("POST", URL, b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
         ("MCP", "initialize")),
        ("POST", URL, b"not json", ("MCP", "unparsable")),
        ("POST", URL, b"[]", ("MCP", "batch")),
        ("GET", URL, b"", ("MCP", "GET")),
        ("POST", "http://h/external-assistants/graph-relays/commands/c1/complete", b"{}",
         ("relay", "complete")),
    ],
)
def test_names(method, url, body, expected) -> None:
    assert name_of(method, url, body) == expected


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="inner must be a Transport"):
        StatsTransport(object(), Fired())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="fire must be callable"):
        StatsTransport(DirectTransport(ReferenceServer()), None)  # type: ignore[arg-type]


class _Replying:
    """A transport answering every request with one fixed reply."""

    def __init__(self, ctype: str, body: bytes) -> None:
        self.reply = Response(200, {"content-type": ctype}, body)

    def request(self, method: str, url: str, headers: Any, body: bytes) -> Response:
        return self.reply


CALL = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_graph_run"}}'
_ERROR = b'{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}'
_FAILED_TOOL = b'{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":true}}'
# A success whose structured content holds an object named "error" (a run's own data).
_SUCCESS = (
    b'{"jsonrpc":"2.0","id":7,"result":{"content":[],'
    b'"structuredContent":{"status":"failed","error":{"note":"the Graph\'s"}},"isError":false}}'
)


def _stream(*messages: bytes) -> bytes:
    """An event stream as MCP servers write it: a priming event, then each message's
    data over two lines (split at its first comma)."""
    out = b"id: 0\ndata:\n\n"
    for message in messages:
        head, _, tail = message.partition(b",")
        out += b"event: message\ndata: " + head + b",\ndata: " + tail + b"\n\n"
    return out


@pytest.mark.parametrize(
    ("ctype", "body", "failure"),
    [
        ("application/json", _ERROR, "JSON-RPC error"),
        ("application/json", _FAILED_TOOL, "isError tool result"),
        ("application/json", _SUCCESS, None),
        ("text/event-stream", _stream(_ERROR), "JSON-RPC error"),
        ("text/event-stream", _stream(_FAILED_TOOL), "isError tool result"),
        ("text/event-stream", _stream(_SUCCESS), None),
        # an answer to another request only: this one got none
        ("text/event-stream", _stream(_SUCCESS.replace(b'"id":7', b'"id":8')), "no JSON-RPC"),
    ],
)
def test_an_answer_is_judged_by_the_kit_s_reply_reader(
    ctype: str, body: bytes, failure: str | None
) -> None:
    """The JSON-RPC answer to the request, from a JSON body or an event stream in any
    form the SSE format allows, is what is judged: not a byte pattern in the body."""
    fired = Fired()
    StatsTransport(_Replying(ctype, body), fired).request("POST", URL, {}, CALL)
    said = fired[-1]["exception"]
    if failure is None:
        assert said is None, said
    else:
        assert said is not None and str(said).startswith(failure), said


def test_each_exchange_says_whose_it_was_and_whether_it_was_refused(world) -> None:
    server, info = world
    fired = Fired()
    who = {"account": 2, "credential": "desktop token"}
    transport = StatsTransport(DirectTransport(server), fired, who)
    with pytest.raises(Exception):  # noqa: B017 - the client's error for a 401 is not ours
        RelayClient(transport, "http://127.0.0.1:9", "wrong-token").sync("proj_x", [])
    assert fired[-1]["context"] == {**who, "status": 401, "refused": "token"}
    McpClient(transport, URL, info.agent_token).list_graph_sessions(info.project_id)
    assert fired[-1]["context"] == {**who, "status": 200, "refused": None}
    with pytest.raises(Exception):  # noqa: B017
        McpClient(transport, "http://127.0.0.1:9/elsewhere", info.agent_token).list_tools()
    assert fired[-1]["context"]["refused"] == "url"


@pytest.mark.parametrize(
    ("kind", "name", "status", "in_session", "expected"),
    [
        ("relay", "sync", 401, False, "token"),
        ("MCP", "get_graph_run", 403, True, "token"),
        ("relay", "sync", 404, False, "url"),
        ("MCP", "initialize", 404, False, "url"),
        ("MCP", "get_graph_run", 404, True, None),  # an expired session: its own meaning
        ("relay", "control", 404, False, None),  # an unknown command (R13)
        ("relay", "sync", 500, False, None),
        ("MCP", "run_graph_session", 200, True, None),
    ],
)
def test_refusals(kind, name, status, in_session, expected) -> None:
    assert refusal_of(kind, name, status, in_session) == expected
