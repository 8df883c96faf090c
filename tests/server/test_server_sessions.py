"""Legacy MCP sessions are bound to their agent (issue 39.5, docs/choices.md).

A session belongs to the identity that opened it (``initialize`` with a valid token)
or, opened without one, to the first identity that used it. Another identity's
request with it is answered exactly as an unknown session is (404); a DELETE by
anyone but its identity, no token included, is refused the same way and the session
goes on; a request without a token acts as nobody (D3's open methods are served,
``tools/call`` asks for a token).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_osfoundry.http import Response
from tests.server.osf_server_kit import GS1, MCP, Srv

UNKNOWN_SESSION = "0" * 32


def _initialize(srv: Srv, token: str | None) -> str:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    reply = srv.rpc("initialize", params, token)
    assert reply.status == 200, reply.body
    session: str = reply.headers["mcp-session-id"]
    return session


def _on(srv: Srv, session: str, method: str, params: Any, token: str | None) -> Response:
    return srv.rpc(method, params, token, msg_id=9, headers={"mcp-session-id": session})


def _get(srv: Srv, session: str, command_id: str, token: str | None) -> Response:
    params = {"name": "get_graph_run", "arguments": {"command_id": command_id}}
    return _on(srv, session, "tools/call", params, token)


def _delete(srv: Srv, session: str, token: str | None) -> Response:
    headers = {"mcp-session-id": session}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return srv.http("DELETE", MCP, headers=headers)


def _served(reply: Response) -> bool:
    return reply.status == 200 and "error" not in json.loads(reply.body)


def test_a_tokenless_delete_leaves_the_agents_session_intact(srv: Srv) -> None:
    session = _initialize(srv, srv.agent)
    refused = _delete(srv, session, None)
    assert refused.status == 404
    assert refused.body == _delete(srv, UNKNOWN_SESSION, None).body  # as if unknown
    assert _served(_on(srv, session, "ping", {}, srv.agent))
    command_id = srv.queue()["command_id"]
    assert _served(_get(srv, session, command_id, srv.agent))


@pytest.mark.parametrize("who", ["other", "stranger", "desktop", "reader"])
def test_another_identity_finds_the_session_unknown(srv: Srv, who: str) -> None:
    session = _initialize(srv, srv.agent)
    command_id = srv.queue()["command_id"]
    token = getattr(srv, who)
    theirs = _get(srv, session, command_id, token)
    unknown = _get(srv, UNKNOWN_SESSION, command_id, token)
    assert theirs.status == 404
    assert (theirs.status, theirs.headers, theirs.body) == (
        unknown.status,
        unknown.headers,
        unknown.body,
    )
    assert _on(srv, session, "ping", {}, token).status == 404
    assert _delete(srv, session, token).status == 404
    assert _served(_get(srv, session, command_id, srv.agent))  # still the agent's


def test_its_own_agent_ends_it(srv: Srv) -> None:
    session = _initialize(srv, srv.agent)
    assert _delete(srv, session, srv.agent).status == 204
    assert _on(srv, session, "ping", {}, srv.agent).status == 404


def test_a_session_opened_without_a_token_is_bound_at_its_first_authenticated_use(
    srv: Srv,
) -> None:
    session = _initialize(srv, None)
    assert _served(_on(srv, session, "tools/list", {}, None))  # nobody's yet
    command_id = srv.queue()["command_id"]
    assert _served(_get(srv, session, command_id, srv.agent))  # now the agent's
    assert _get(srv, session, command_id, srv.other).status == 404
    assert _delete(srv, session, None).status == 404
    assert _served(_on(srv, session, "ping", {}, srv.agent))


def test_nobodys_session_is_ended_by_anyone(srv: Srv) -> None:
    session = _initialize(srv, None)
    assert _delete(srv, session, None).status == 204
    assert _on(srv, session, "ping", {}, None).status == 404


def test_a_session_is_no_credential(srv: Srv) -> None:
    """Without a token, or with one the server does not know, a request on the agent's
    session acts as nobody: the open methods answer, a tool call gets 401."""
    session = _initialize(srv, srv.agent)
    command_id = srv.queue()["command_id"]
    for token in (None, "osf-not-a-token-of-this-server"):
        assert _served(_on(srv, session, "tools/list", {}, token))
        refused = _get(srv, session, command_id, token)
        assert refused.status == 401 and command_id.encode() not in refused.body
    assert _served(_get(srv, session, command_id, srv.agent))


def test_the_modern_era_ignores_session_ids(srv: Srv) -> None:
    session = _initialize(srv, srv.agent)
    params = {
        "name": "run_graph_session",
        "arguments": {"graph_session_id": GS1, "idempotency_key": "modern-bound-1"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }
    headers = {
        "mcp-session-id": session,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "run_graph_session",
    }
    reply = srv.rpc("tools/call", params, srv.other, headers=headers)
    assert _served(reply)
