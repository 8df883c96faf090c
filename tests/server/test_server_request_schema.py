"""The reference server checks what callers send against MCP's schema (R1)."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import pytest

from pytest_osfoundry.client import DirectTransport, McpClient, RelayClient
from pytest_osfoundry.http import Request
from pytest_osfoundry.server import ReferenceServer

LOGGER = "pytest_osfoundry.server"
REVISIONS = ("2026-07-28", "2025-11-25", "2025-06-18")


def _post(server: ReferenceServer, message: dict[str, Any], **headers: str) -> Any:
    sent = {"host": "x", "content-type": "application/json", **headers}
    reply = server(Request.build("POST", "/mcp", sent, json.dumps(message).encode()))
    return reply.status, json.loads(reply.body)


def _modern_meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def test_a_progress_token_that_is_an_object_is_refused_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = ReferenceServer()
    made = server.provision()
    meta = {**_modern_meta(), "progressToken": {"not": "allowed"}}
    params = {"name": "list_graph_sessions", "arguments": {"project_id": made.project_id}}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {**params, "_meta": meta},
    }
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        status, answer = _post(
            server,
            message,
            authorization=f"Bearer {made.agent_token}",
            **{
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": "list_graph_sessions",
            },
        )
    assert status == 400 and answer["id"] == 1
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"].startswith("Invalid params: tools/call at /params/_meta")
    assert "progressToken" in answer["error"]["message"]
    assert any("refused a request breaking MCP's schema" in r.message for r in caplog.records)


def test_a_legacy_request_breaking_the_schema_gets_invalid_params() -> None:
    server = ReferenceServer()
    client = {"name": "t", "version": "1"}
    params = {"protocolVersion": "2025-11-25", "capabilities": "all", "clientInfo": client}
    status, answer = _post(
        server, {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": params}
    )
    assert status == 200 and answer["error"]["code"] == -32602
    assert "at /params/capabilities: 'all' is not of type 'object'" in answer["error"]["message"]


def test_the_hand_written_tool_call_errors_stay() -> None:
    server = ReferenceServer()
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    bad = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {"name": "get_graph_run", "arguments": [1]},
    }
    reply = server(
        Request.build(
            "POST",
            "/mcp",
            {"host": "x", "content-type": "application/json"},
            json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
            ).encode(),
        )
    )
    sid = reply.headers["mcp-session-id"]
    _, answer = _post(server, bad, **{"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"})
    assert answer["error"]["message"] == "Invalid params: arguments must be an object"


@pytest.mark.parametrize("protocol", REVISIONS)
def test_every_request_the_kits_clients_make_passes(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The agent's and the desktop's clients, every call they have, in each revision."""
    server = ReferenceServer()
    made = server.provision()
    transport = DirectTransport(server)
    gsid = "gs_" + uuid.uuid4().hex
    session = {
        "graph_session_id": gsid,
        "name": "n",
        "description": "d",
        "slug": "s",
        "version": 1,
        "status": "active",
    }
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        agent = McpClient(transport, "http://x/mcp", made.agent_token, protocol=protocol)
        agent.connect()
        assert len(agent.list_tools()) == 4
        if protocol != "2026-07-28":
            agent.ping()
        desktop = RelayClient(transport, "http://x", made.desktop_token)
        desktop.sync(made.project_id, [session])
        assert agent.list_graph_sessions(made.project_id, limit=5)
        ticket = agent.run_graph_session(gsid, uuid.uuid4().hex, {"q": 1})
        command_id = ticket["command_id"]
        agent.get_graph_run(command_id)
        desktop.start(command_id, "exec-1")
        desktop.control(command_id)
        desktop.complete(
            command_id, {"execution_id": "exec-1", "status": "completed", "result": "ok"}
        )
        other = agent.run_graph_session(gsid, uuid.uuid4().hex)
        agent.cancel_graph_run(other["command_id"])
        agent.notify(
            "notifications/cancelled", {"requestId": 1}
        ) if protocol != "2026-07-28" else None
    refused = [r.message for r in caplog.records if "breaking MCP's schema" in r.message]
    assert refused == []
