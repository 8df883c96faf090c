"""The MCP session table is bounded: the oldest session is forgotten, never the newest."""

from __future__ import annotations

import json

import pytest

from pytest_osfoundry.http import Request
from pytest_osfoundry.server import ReferenceServer
from pytest_osfoundry.server import _mcp as mcp_module


def _initialize(server: ReferenceServer) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    reply = server(Request.build("POST", "/mcp", {"host": "x"}, json.dumps(body).encode()))
    return reply.headers["mcp-session-id"]


def _ping(server: ReferenceServer, session: str) -> int:
    body = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    headers = {"host": "x", "mcp-session-id": session}
    return server(Request.build("POST", "/mcp", headers, json.dumps(body).encode())).status


def test_the_oldest_session_is_forgotten_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp_module, "MAX_SESSIONS", 3)
    server = ReferenceServer()
    sessions = [_initialize(server) for _ in range(4)]
    assert _ping(server, sessions[0]) == 404  # forgotten: the client initializes again
    assert [_ping(server, s) for s in sessions[1:]] == [200, 200, 200]
