"""Fixtures for the client tests: a scripted fake MCP endpoint and two ways to reach it.

``via`` turns any handler (``Request -> Response``) into a transport, once as a
:class:`DirectTransport` and once as an :class:`HttpTransport` talking real HTTP to a
loopback server that serves the handler, so every test that uses it runs through both
doors. The tests address ``https://osf.test``; over the wire, that origin is the
loopback server's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from pytest_osfoundry.client import DirectTransport, HttpTransport, Transport
from pytest_osfoundry.http import Handler, Request, Response, json_response
from pytest_osfoundry.server import LoopbackServer

BASE = "https://osf.test"
MCP_URL = f"{BASE}/mcp"
TOKEN = "tok-S3CRET-9f8e7d6c5b4a"

ToolFn = Callable[[dict[str, Any]], dict[str, Any]]


def ok_result(payload: dict[str, Any]) -> dict[str, Any]:
    """A tools/call success result as SPEC R3 shapes it."""
    return {
        "content": [{"type": "text", "text": json.dumps(payload)}],
        "structuredContent": payload,
    }


def error_result(message: str) -> dict[str, Any]:
    """A tools/call domain error as SPEC R3 shapes it."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


class FakeMcp:
    """A small, scriptable MCP Streamable HTTP endpoint that records what it got.

    Attributes are the knobs: ``sse`` answers requests as event streams,
    ``sse_prelude`` puts a progress notification and a comment before the response,
    ``session_id`` (``None``: none issued), ``version`` (what initialize answers),
    ``notify_status``, and ``tools`` mapping tool names to functions of the arguments.
    ``tools/call`` needs ``Bearer <token>`` and answers 401 with a challenge otherwise.
    """

    url = MCP_URL
    token = TOKEN
    ok = staticmethod(ok_result)
    error = staticmethod(error_result)

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.sse = False
        self.sse_prelude = False
        self.session_id: str | None = "sess-0001"
        self.version = "2025-11-25"
        self.notify_status = 202
        self.tools: dict[str, ToolFn] = {
            "echo": lambda args: ok_result({"echo": args}),
            "get_graph_run": lambda args: error_result("Graph run not found or access removed"),
        }

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages received, in order."""
        return [json.loads(r.body) for r in self.requests]

    @property
    def methods(self) -> list[str]:
        """The JSON-RPC methods received, in order."""
        return [m["method"] for m in self.messages]

    def answer(self, req_id: Any, body: dict[str, Any], status: int = 200) -> Response:
        """Wrap a JSON-RPC ``result``/``error`` member as JSON or SSE."""
        message = {"jsonrpc": "2.0", "id": req_id, **body}
        headers: dict[str, str] = {}
        if not self.sse:
            return json_response(status, message, headers)
        events = []
        if self.sse_prelude:
            events.append(": keep-alive comment\n")
            progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}
            events.append(f"event: message\ndata: {json.dumps(progress)}\n")
        events.append(f"id: ev-{req_id}\nevent: message\ndata: {json.dumps(message)}\n")
        stream = "\n".join(events) + "\n"
        return Response(status, {"content-type": "text/event-stream"}, stream.encode())

    def __call__(self, request: Request) -> Response:
        self.requests.append(request)
        msg = json.loads(request.body)
        if "id" not in msg:
            return Response(self.notify_status)
        method, req_id = msg["method"], msg["id"]
        if method == "initialize":
            reply = self.answer(
                req_id,
                {
                    "result": {
                        "protocolVersion": self.version,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "fake", "version": "1"},
                    }
                },
            )
            if self.session_id is not None:
                reply.headers["mcp-session-id"] = self.session_id
            return reply
        if method == "ping":
            return self.answer(req_id, {"result": {}})
        if method == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in self.tools]
            return self.answer(req_id, {"result": {"tools": tools}})
        if method == "tools/call":
            if request.header("authorization") != f"Bearer {self.token}":
                challenge = (
                    f'Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource", '
                    'scope="osfoundry:read"'
                )
                return json_response(
                    401, {"error": "unauthorized"}, {"WWW-Authenticate": challenge}
                )
            name = msg["params"]["name"]
            if name not in self.tools:
                return self.answer(
                    req_id, {"error": {"code": -32602, "message": f"Unknown tool: {name}"}}
                )
            return self.answer(req_id, {"result": self.tools[name](msg["params"]["arguments"])})
        return self.answer(req_id, {"error": {"code": -32601, "message": "Method not found"}})


class _Wire:
    """A loopback server serving whichever handler a test gave last, and the transport
    reaching it: requests to ``https://osf.test`` go to the server's origin instead."""

    def __init__(self) -> None:
        self.handler: Handler = lambda _request: Response(500)
        self.server = LoopbackServer(lambda request: self.handler(request))
        self.transport = HttpTransport(timeout=10.0)

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        assert url.startswith(BASE), url
        return self.transport.request(method, self.server.origin + url[len(BASE) :], headers, body)

    def close(self) -> None:
        self.transport.close()
        self.server.close()


@pytest.fixture(scope="session")
def _wire() -> Iterator[_Wire]:
    wire = _Wire()
    yield wire
    wire.close()


@pytest.fixture
def fake() -> FakeMcp:
    """A fresh fake MCP endpoint."""
    return FakeMcp()


@pytest.fixture(params=["direct", "wire"])
def via(request: pytest.FixtureRequest) -> Callable[[Handler], Transport]:
    """A factory turning a handler into a transport, once per door."""

    def make(handler: Handler) -> Transport:
        if request.param == "direct":
            return DirectTransport(handler)
        wire: _Wire = request.getfixturevalue("_wire")
        wire.handler = handler
        return wire

    return make
