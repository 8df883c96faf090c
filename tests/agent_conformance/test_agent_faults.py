"""The machinery under the agent suite's fault checks: where a token leaked, a held
answer, an event stream left open, a legacy-only lane and an ended session, and the
embedded agent's side of them (a session renewed, a 503 retried with the same key)."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from typing import Any

import pytest

from pytest_osfoundry.agent import ScriptedAgent, every
from pytest_osfoundry.agent._contract import request_timeout
from pytest_osfoundry.client import (
    DirectTransport,
    HttpStatusError,
    HttpTransport,
    McpClient,
)
from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.conformance.agent import AgentFault
from pytest_osfoundry.conformance.agent._instrumented import InstrumentedMcp
from pytest_osfoundry.conformance.agent._process import AgentProcess
from pytest_osfoundry.http import DropConnection, KeptOpen, Request, Response
from pytest_osfoundry.server import LoopbackServer, ReferenceServer


def _world() -> tuple[InstrumentedMcp, str, str]:
    reference = ReferenceServer()
    made = reference.provision()
    return InstrumentedMcp(reference), made.agent_token, made.project_id


def test_the_token_is_noted_wherever_else_it_travels() -> None:
    server, token, _ = _world()
    lane = server.lane(token)
    bearer = {"authorization": f"Bearer {token}"}
    server(Request("POST", "/mcp", bearer, b"{}"))
    assert lane.leaks == []
    server(Request("GET", "/mcp", {}, b"", f"access_token={token}"))  # no header: found anyway
    server(Request("POST", "/mcp", {**bearer, "x-api-key": token}, b"{}"))
    server(Request("POST", "/mcp", bearer, json.dumps({"token": token}).encode()))
    server(Request("GET", "/.well-known/oauth-protected-resource", {"authorization": token}))
    assert lane.leaks == [
        "GET /mcp: in the URL's query string",
        "POST /mcp: in the x-api-key header",
        "POST /mcp: in the request body",
        "GET /.well-known/oauth-protected-resource: in an Authorization header that is not "
        "`Bearer <token>`",
    ]


def test_a_held_answer_is_dropped_once_the_tool_is_called_again() -> None:
    server, token, project = _world()
    lane = server.lane(token)
    lane.add_fault(AgentFault("list_graph_sessions", "hold-after", seconds=30.0))
    dropped: list[BaseException] = []

    def held() -> None:
        try:
            McpClient(DirectTransport(server), "http://127.0.0.1/mcp", token).list_graph_sessions(
                project
            )
        except DropConnection as err:
            dropped.append(err)

    thread = threading.Thread(target=held)
    began = time.monotonic()
    thread.start()
    assert lane.wait_for(lambda: False, 0.2) is False and not dropped  # still held
    again = McpClient(DirectTransport(server), "http://127.0.0.1/mcp", token)
    assert again.list_graph_sessions(project)["project_id"] == project
    thread.join(5.0)
    assert dropped and time.monotonic() - began < 5.0
    assert [c.status for c in lane.snapshot() if c.tool] == [200, 0]


def test_a_held_answer_is_dropped_when_the_check_ends() -> None:
    server, token, project = _world()
    lane = server.lane(token)
    lane.add_fault(AgentFault("list_graph_sessions", "hold-after", seconds=30.0))
    client = McpClient(DirectTransport(server), "http://127.0.0.1/mcp", token)
    threading.Timer(0.2, lambda: server.forget(lane)).start()
    with pytest.raises(DropConnection):
        client.list_graph_sessions(project)


def test_an_answer_left_open_is_read_from_its_event_and_closed_at_the_end() -> None:
    until = threading.Event()
    event = b'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'

    def handler(request: Request) -> Response:
        return KeptOpen(200, {"content-type": "text/event-stream"}, event, until=until)

    with LoopbackServer(handler) as door:
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        reply = HttpTransport(timeout=5.0).request("POST", door.origin + "/mcp", {}, body)
        assert reply.body == event  # the answer taken from its event, the stream still open
        with socket.create_connection(("127.0.0.1", door.port), timeout=5.0) as raw:
            raw.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            head = b""
            while event not in head:
                head += raw.recv(4096)
            assert b"transfer-encoding: chunked" in head.lower() and not head.endswith(b"0\r\n\r\n")
            raw.settimeout(0.3)
            with pytest.raises(TimeoutError):
                raw.recv(1)  # nothing more: the answer is not ended
            until.set()
            raw.settimeout(5.0)
            assert raw.recv(1) == b""  # the door closes it once the check ends


def test_a_legacy_only_lane_gets_a_session_the_server_can_end() -> None:
    server, token, project = _world()
    lane = server.lane(token)
    lane.legacy_only = True
    client = McpClient(DirectTransport(server), "http://127.0.0.1/mcp", token)
    client.list_graph_sessions(project)
    first = client.session_id
    assert client.era == "legacy" and first is not None
    assert server.end_session(lane) == first
    with pytest.raises(HttpStatusError) as refused:
        client.list_graph_sessions(project)
    assert refused.value.status == 404
    assert server.end_session(lane) is None  # it has ended already


def test_a_client_renewing_sessions_starts_a_new_one_on_a_404() -> None:
    server, token, project = _world()
    lane = server.lane(token)
    lane.legacy_only = True
    client = McpClient(
        DirectTransport(server), "http://127.0.0.1/mcp", token, renew_session=True
    )
    client.list_graph_sessions(project)
    first = client.session_id
    server.end_session(lane)
    assert client.list_graph_sessions(project)["project_id"] == project
    assert client.session_id not in (None, first)
    assert [c.status for c in lane.snapshot() if c.tool] == [200, 404, 200]


class _Flaky:
    """A tool client whose first start answers 503 after applying nothing."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def run_graph_session(
        self, graph_session_id: str, idempotency_key: str, arguments: Any = None
    ) -> dict[str, Any]:
        self.keys.append(idempotency_key)
        if len(self.keys) == 1:
            raise HttpStatusError(503, {}, b"")
        return {"command_id": "c1", "status": "queued", "poll_after_seconds": 1}

    def get_graph_run(self, command_id: str) -> dict[str, Any]:
        return {"command_id": command_id, "status": "completed"}

    def cancel_graph_run(self, command_id: str) -> dict[str, Any]:
        raise AssertionError("no cancel")


@pytest.mark.parametrize("statuses", [(), (503,)])
def test_a_scripted_agent_retries_its_retry_statuses_with_the_same_key(
    statuses: tuple[int, ...],
) -> None:
    client = _Flaky()
    agent = ScriptedAgent(
        VirtualClock(), client, strategy=every(1.0), retry_statuses=statuses
    )
    run = agent.run("gs_" + "0" * 32, {"a": 1})
    if statuses:
        assert run.status == "completed" and client.keys[0] == client.keys[1]
    else:  # a 503 not taken as lost is final
        assert run.error == "HTTP 503" and len(client.keys) == 1


def test_the_embedded_agents_request_timeout_is_three_intervals_at_least_3_s() -> None:
    assert request_timeout(0.5) == 3.0
    assert request_timeout(2.0) == 6.0
    assert request_timeout(20.0) == 60.0


def test_a_token_the_agent_printed_is_seen_before_it_is_masked() -> None:
    code = "import sys; print('x'); print('sk-' + 'abc123def456', file=sys.stderr)"
    printed = AgentProcess([sys.executable, "-c", code], {}, secrets=["sk-abc123def456"])
    assert printed.wait(10.0) == 0
    printed.stop()
    assert printed.shows_secret() and "sk-abc123def456" not in printed.output_text()
    quiet = AgentProcess([sys.executable, "-c", "print('x')"], {}, secrets=["sk-abc123def456"])
    assert quiet.wait(10.0) == 0
    quiet.stop()
    assert not quiet.shows_secret()


def test_a_body_the_server_refuses_as_not_json_is_recorded_as_no_message() -> None:
    # The record reads a request as the server does: a NaN (refused -32700) is no
    # arguments in the record (a NaN there would make the --osf-agent-record file
    # invalid JSON), and a body nested too deep is answered, not a RecursionError.
    server, token, _ = _world()
    lane = server.lane(token)
    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    nan = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"get_graph_run","arguments":{"command_id":NaN}}}'
    )
    assert server(Request("POST", "/mcp", headers, nan)).status == 400
    assert server(Request("POST", "/mcp", headers, b"[" * 100_000)).status == 400
    assert [(c.rpc, c.tool, c.arguments, c.status) for c in lane.snapshot()] == [
        ("", None, None, 400),
        ("", None, None, 400),
    ]
