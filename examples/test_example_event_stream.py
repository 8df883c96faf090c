"""The agents on httpx, requests and aiohttp read an answer sent as an event stream.

Each sends ``Accept: application/json, text/event-stream``, so a server may answer a
POST with either; many (FastMCP, the official SDKs) pick the stream. Each agent's own
``answer`` reads it as the SSE format says, and these tests hold each to it: first on
streams written to trip a reader (CR, LF and CRLF line ends, comments, an event with
empty data as MCP's servers send first, the answer's JSON over two ``data`` lines, a
notification and a request of the server's own before it), then whole runs against
the reference server behind :class:`EventStreamed`, which sends every answer so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import aiohttp_agent
import polling_agent
import pytest
import requests
import requests_agent

from pytest_osfoundry.http import Handler, HandlerWrapper, KeptOpen, Request, Response
from pytest_osfoundry.server import LoopbackServer, RequestsMount, mount

SSE = "text/event-stream"
ANSWERS: dict[str, Callable[[str, Any, int], dict[str, Any]]] = {
    "httpx": polling_agent.answer,
    "requests": requests_agent.answer,
    "aiohttp": aiohttp_agent.answer,
}
RESULT = {"structuredContent": {"text": "日本語のテキスト", "lines": "a\nb"}}


def stream(answer: dict[str, Any], end: str) -> bytes:
    """An event stream carrying ``answer`` after everything a reader must skip, its
    lines ended with ``end``."""
    text = json.dumps(answer, ensure_ascii=False)
    head, _, tail = text.partition(",")  # the answer's JSON split over two data lines
    lines = [
        ": a comment, then an event with empty data (what MCP's servers send first)",
        "id: 0",
        "data:",
        "",
        "retry: 1000",
        "data",
        "",
        "event: message",
        'data: {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}',
        "",
        'data:{"jsonrpc": "2.0", "id": 7, "method": "ping"}',  # the server's own request
        "",
        "event: message",
        "id: 1",
        f"data: {head},",
        f"data:{tail}",
        ": a comment inside the event",
        "",
    ]
    return (end.join(lines) + end).encode("utf-8")  # the last line ended: the event too


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("stack", sorted(ANSWERS))
def test_each_agent_reads_the_answer_in_an_event_stream(stack: str, end: str) -> None:
    answer = {"jsonrpc": "2.0", "id": 7, "result": RESULT}
    got = ANSWERS[stack](f"{SSE}; charset=utf-8", stream(answer, end), 7)
    assert got == answer


@pytest.mark.parametrize("stack", sorted(ANSWERS))
def test_each_agent_still_reads_a_json_body(stack: str) -> None:
    answer = {"jsonrpc": "2.0", "id": 3, "result": RESULT}
    body = json.dumps(answer, ensure_ascii=False).encode("utf-8")
    assert ANSWERS[stack]("application/json", body, 3) == answer


@pytest.mark.parametrize("stack", sorted(ANSWERS))
def test_a_stream_without_the_answer_is_an_error_not_a_guess(stack: str) -> None:
    """Only a whole event counts (one cut off before its empty line is dropped, as the
    format says), and only the answer to this request."""
    cut = b'data: {"jsonrpc": "2.0", "id": 1, "result": {}}'
    other = b'data: {"jsonrpc": "2.0", "id": 2, "result": {}}\n\n'
    for body in (cut, other, b": nothing but a comment\n\n"):
        with pytest.raises(ValueError, match="without the answer to request 1"):
            ANSWERS[stack](SSE, body, 1)


class EventStreamed(HandlerWrapper[Handler]):
    """The wrapped server with every JSON answer sent as an event stream (CRLF)."""

    def __call__(self, request: Request, /) -> Response:
        response = self.inner(request)
        if not response.headers.get("content-type", "").startswith("application/json"):
            return response
        headers = {**response.headers, "content-type": SSE}
        return Response(response.status, headers, stream(response.json(), "\r\n"))


MINUTE = pytest.mark.osf(seed=7, patch_sleep=True)


@MINUTE
def test_the_httpx_agent_against_a_server_that_streams(osf_world: Any) -> None:
    with mount(EventStreamed(osf_world.server), osf_world.base_url):
        agent = polling_agent.GraphRunner(osf_world.mcp_url, osf_world.creds.agent_token)
        agent.connect()
        run = agent.run_and_wait(osf_world.sessions[0].graph_session_id, "sse-key-0001")
    assert run["status"] == "completed" and len(osf_world.server.state.runs) == 1


@MINUTE
def test_the_requests_agent_against_a_server_that_streams(osf_world: Any) -> None:
    with RequestsMount(EventStreamed(osf_world.server), osf_world.base_url):
        run = requests_agent.run_graph(
            osf_world.mcp_url,
            osf_world.creds.agent_token,
            osf_world.sessions[0].graph_session_id,
            "sse-key-0002",
        )
    assert run["status"] == "completed" and len(osf_world.server.state.runs) == 1


@pytest.mark.osf(seed=7, virtual_loop=True)
async def test_the_aiohttp_agent_against_a_server_that_streams(osf_world: Any) -> None:
    with LoopbackServer(EventStreamed(osf_world.server)) as server:
        run = await aiohttp_agent.run_graph(
            server.origin + "/mcp",
            osf_world.creds.agent_token,
            osf_world.sessions[0].graph_session_id,
            "sse-key-0003",
        )
    assert run["status"] == "completed" and len(osf_world.server.state.runs) == 1


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("stack", sorted(ANSWERS))
def test_each_agent_stops_reading_at_the_answer_of_a_stream_left_open(
    stack: str, end: str
) -> None:
    """A server may leave the stream open after the answer: the agent takes the answer
    from its event, byte by byte as it arrives (a CRLF split between two chunks), and
    reads no further."""
    answer = {"jsonrpc": "2.0", "id": 7, "result": RESULT}
    body = stream(answer, end)

    def left_open() -> Iterator[bytes]:
        for i in range(len(body)):
            yield body[i : i + 1]
        raise AssertionError("read past the answer: the stream is still open")

    assert ANSWERS[stack](SSE, left_open(), 7) == answer


def test_the_requests_agent_takes_the_answer_of_a_stream_left_open() -> None:
    """Over a real socket: the server sends the answer's event and leaves the stream
    open (until the test ends); the requests agent returns with the answer, not at the
    stream's end (its read would wait for that, then time out and ask again)."""
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": RESULT}}
    open_until = threading.Event()
    asked: list[Request] = []

    def server(request: Request) -> Response:
        asked.append(request)
        return KeptOpen(200, {"content-type": SSE}, stream(answer, "\r\n"), until=open_until)

    with LoopbackServer(server) as door, requests.Session() as http:
        try:
            got = requests_agent.call(http, door.origin + "/mcp", "get_graph_run", command_id="c")
            still_open = not open_until.is_set()
        finally:
            open_until.set()
    assert got == RESULT and len(asked) == 1 and still_open
