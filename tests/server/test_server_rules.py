"""The reference server, rule by rule (conformance/spec.md: D1, D3-D10, R1-R13), through its
HTTP app.

Each test is named after the rule it proves and asserts exact messages, statuses and
headers, and that refusals leave the state exactly as it was.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pytest_osfoundry.server import ReferenceServer
from tests.server.osf_server_kit import (
    GS1,
    GS2,
    INVENTED,
    KEY_CONFLICT,
    ORIGIN,
    PROJECT_NOT_FOUND,
    RESOURCE_METADATA,
    RUN_NOT_FOUND,
    SESSION_NOT_FOUND,
    Srv,
    session,
)

T0 = "2026-11-08T00:00:00.000Z"  # VirtualClock's default start


def stamp(seconds: float) -> str:
    """The RFC 3339 stamp ``seconds`` after T0 (for small offsets, written out by hand)."""
    whole = int(seconds)
    millis = round((seconds - whole) * 1000)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    assert hours < 24
    return f"2026-11-08T{hours:02d}:{minutes:02d}:{secs:02d}.{millis:03d}Z"


def challenge(scope: str, error: str | None = None) -> str:
    head = f'error="{error}", ' if error else ""
    return f'Bearer {head}scope="{scope}", resource_metadata="{RESOURCE_METADATA}"'


# ====================================================================== D1
def test_D1_run_graph_session_only_queues(srv: Srv) -> None:
    ticket = srv.queue()
    assert ticket["status"] == "queued"
    view = srv.get(ticket["command_id"])
    assert view["status"] == "queued"
    assert view["started_at"] is None and view["finished_at"] is None
    assert srv.server.state.counts() == {
        "queued": 1,
        "running": 0,
        "completed": 0,
        "failed": 0,
        "cancelled": 0,
    }


def test_D1_without_the_desktop_nothing_runs_but_reading_works(srv: Srv) -> None:
    ticket = srv.queue()
    srv.clock.advance(600)  # the desktop is offline: nobody syncs
    view = srv.get(ticket["command_id"])
    assert view["status"] == "queued" and view["started_at"] is None
    assert srv.ok("list_graph_sessions", {"project_id": srv.pid})["sessions"] == [session(GS1)]


# ====================================================================== D3
EXPECTED_TOOLS: list[dict[str, Any]] = [
    {
        "name": "run_graph_session",
        "description": "Queue a Graph run on the owner's online desktop in a connected project. "
        "Retrieve progress and result with get_graph_run. The desktop can go offline, and "
        "local tool approvals still apply.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "graph_session_id": {"type": "string"},
                "arguments": {"type": "object"},
                "idempotency_key": {"type": "string", "minLength": 8, "maxLength": 128},
            },
            "required": ["graph_session_id", "idempotency_key"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
        "securitySchemes": [{"type": "oauth2", "scopes": ["osfoundry:run"]}],
    },
    {
        "name": "list_graph_sessions",
        "inputSchema": {
            "type": "object",
            "properties": {
                "project_id": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "required": ["project_id"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
        "securitySchemes": [{"type": "oauth2", "scopes": ["osfoundry:read"]}],
    },
    {
        "name": "get_graph_run",
        "inputSchema": {
            "type": "object",
            "properties": {"command_id": {"type": "string"}},
            "required": ["command_id"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
        "securitySchemes": [{"type": "oauth2", "scopes": ["osfoundry:read"]}],
    },
    {
        "name": "cancel_graph_run",
        "inputSchema": {
            "type": "object",
            "properties": {"command_id": {"type": "string"}},
            "required": ["command_id"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
        "securitySchemes": [{"type": "oauth2", "scopes": ["osfoundry:run"]}],
    },
]


def test_D3_tools_list_exact(bare: Srv) -> None:
    reply = bare.rpc("tools/list", msg_id=3)  # no Authorization at all
    assert reply.status == 200
    payload = reply.json()
    assert payload["jsonrpc"] == "2.0" and payload["id"] == 3
    tools = payload["result"]["tools"]
    assert [t["name"] for t in tools] == [t["name"] for t in EXPECTED_TOOLS]
    for got, want in zip(tools, EXPECTED_TOOLS, strict=True):
        if "description" in want:
            assert got == want
        else:
            assert {k: v for k, v in got.items() if k != "description"} == want
            assert isinstance(got["description"], str) and got["description"]


def test_D3_tools_list_ignores_bad_credentials(bare: Srv) -> None:
    for auth in ("Bearer nope", "Basic dXNlcjpwYXNz", "garbage"):
        reply = bare.rpc("tools/list", headers={"authorization": auth})
        assert reply.status == 200
        assert len(reply.json()["result"]["tools"]) == 4


def test_D3_schemas_are_closed_2020_12_and_descriptions_say_who(bare: Srv) -> None:
    tools = {t["name"]: t for t in bare.rpc("tools/list").json()["result"]["tools"]}
    for tool in tools.values():
        schema = tool["inputSchema"]
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
    for name in ("get_graph_run", "cancel_graph_run"):
        assert "started by this Connected agent" in tools[name]["description"]


def test_D3_tools_list_is_not_shared_mutable_state(bare: Srv) -> None:
    first = bare.rpc("tools/list").json()["result"]["tools"]
    first[0]["name"] = "tampered"
    assert bare.rpc("tools/list").json()["result"]["tools"][0]["name"] == "run_graph_session"


# ====================================================================== D4
def test_D4_list_empty_until_shared(bare: Srv) -> None:
    assert bare.ok("list_graph_sessions", {"project_id": bare.pid}) == {
        "project_id": bare.pid,
        "sessions": [],
    }


def test_D4_list_shows_what_the_last_sync_uploaded(bare: Srv) -> None:
    bare.sync([session(GS1), session(GS2)])
    assert bare.ok("list_graph_sessions", {"project_id": bare.pid})["sessions"] == [
        session(GS1),
        session(GS2),
    ]
    bare.sync([session(GS2, slug="renamed")])
    assert bare.ok("list_graph_sessions", {"project_id": bare.pid})["sessions"] == [
        session(GS2, slug="renamed")
    ]


# ====================================================================== D5
@pytest.mark.parametrize(
    "command_id", [INVENTED, "ffffffff-ffff-4fff-bfff-ffffffffffff", "not-a-uuid", ""]
)
def test_D5_unknown_run(srv: Srv, command_id: str) -> None:
    srv.queue()
    before = srv.snapshot()
    result = srv.result("get_graph_run", {"command_id": command_id})
    assert result == {"content": [{"type": "text", "text": RUN_NOT_FOUND}], "isError": True}
    assert srv.snapshot() == before


# ====================================================================== D6
@pytest.mark.parametrize("who", ["other", "stranger"])
def test_D6_other_agent_indistinguishable(srv: Srv, who: str) -> None:
    real = srv.queue()["command_id"]
    token = getattr(srv, who)
    before = srv.snapshot()
    for tool in ("get_graph_run", "cancel_graph_run"):
        on_real = srv.call(tool, {"command_id": real}, token)
        on_invented = srv.call(tool, {"command_id": INVENTED}, token)
        assert on_real.status == on_invented.status == 200
        assert on_real.headers == on_invented.headers
        # the same bytes, once the id in the request is swapped (it is not echoed)
        assert on_real.body == on_invented.body
        assert srv.err(tool, {"command_id": real}, token) == RUN_NOT_FOUND
    assert srv.snapshot() == before
    assert srv.get(real)["status"] == "queued"  # its owner still sees it


def test_D6_started_and_finished_runs_stay_private(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    assert srv.start(cid).status == 200
    assert srv.complete(cid, {"status": "completed", "result": {"secret": 1}}).status == 200
    assert srv.err("get_graph_run", {"command_id": cid}, srv.other) == RUN_NOT_FOUND
    assert srv.err("get_graph_run", {"command_id": cid}, srv.stranger) == RUN_NOT_FOUND
    assert srv.get(cid)["result"] == {"secret": 1}


# ====================================================================== D7
@pytest.mark.parametrize("key", ["", "1234567", "x" * 129, 12345678, None])
def test_D7_key_out_of_bounds_is_refused(srv: Srv, key: Any) -> None:
    before = srv.snapshot()
    text = srv.err("run_graph_session", {"graph_session_id": GS1, "idempotency_key": key})
    assert text.startswith("Invalid arguments for run_graph_session: idempotency_key: ")
    assert srv.snapshot() == before


def test_D7_key_missing_is_refused(srv: Srv) -> None:
    before = srv.snapshot()
    text = srv.err("run_graph_session", {"graph_session_id": GS1})
    assert text == (
        "Invalid arguments for run_graph_session: arguments: "
        "'idempotency_key' is a required property"
    )
    assert srv.snapshot() == before


@pytest.mark.parametrize("length", [8, 128])
def test_D7_key_bounds_inclusive(srv: Srv, length: int) -> None:
    assert srv.queue(key="k" * length)["status"] == "queued"


def test_D7_retry_with_same_key_queues_nothing_new(srv: Srv) -> None:
    first = srv.queue(key="retry-key-1", arguments={"n": 1})
    srv.clock.advance(5)
    again = srv.queue(key="retry-key-1", arguments={"n": 1})
    assert again == first
    assert len(srv.server.state.runs) == 1
    assert [c["command_id"] for c in srv.sync()["commands"]] == [first["command_id"]]


# ====================================================================== D8
def test_D8_cancel_queued_is_terminal_at_once(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.clock.advance(4)
    assert srv.cancel(cid) == {"command_id": cid, "status": "cancelled", "cancel_requested": True}
    assert srv.get(cid) == {
        "command_id": cid,
        "graph_session_id": GS1,
        "status": "cancelled",
        "queued_at": T0,
        "started_at": None,
        "finished_at": stamp(4),
        "cancel_requested": True,
    }
    assert srv.sync()["commands"] == []  # the desktop never sees it
    assert srv.start(cid).json() == {"status": "cancelled"}
    assert srv.get(cid)["started_at"] is None


def test_D8_cancel_running_sets_a_flag_the_control_poll_reads(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.clock.advance(10)
    assert srv.start(cid).json() == {"status": "running"}
    srv.clock.advance(30)
    assert srv.cancel(cid) == {"command_id": cid, "status": "running", "cancel_requested": True}
    assert srv.control(cid).json() == {"status": "running", "cancel_requested": True}
    srv.clock.advance(3.5)
    done = {"execution_id": "exec-1", "status": "cancelled", "total_tokens": 10}
    assert srv.complete(cid, done).json() == {"status": "cancelled"}
    view = srv.get(cid)
    assert view["status"] == "cancelled" and view["cancel_requested"] is True
    assert view["started_at"] == stamp(10) and view["finished_at"] == stamp(43.5)
    assert view["total_tokens"] == 10


# ====================================================================== D9
def test_D9_command_ids_are_uuids(srv: Srv) -> None:
    ids = [srv.queue(key=f"uuid-key-{i:04d}")["command_id"] for i in range(50)]
    assert len(set(ids)) == 50
    for cid in ids:
        parsed = uuid.UUID(cid)
        assert str(parsed) == cid and parsed.version == 4


def test_D9_seeded_server_ids_are_uuids_and_reproducible() -> None:
    def ids() -> list[str]:
        s = Srv(seed=7)
        s.server.state.share(s.pid, [session(GS1)])
        return [s.queue(key=f"seeded-{i:03d}")["command_id"] for i in range(3)]

    first = ids()
    assert first == ids()
    assert all(uuid.UUID(c).version == 4 for c in first)


# ====================================================================== D10
def test_D10_sync_replaces_shared_sessions(bare: Srv) -> None:
    out = bare.sync([session(GS1)])
    assert out == {"project_id": bare.pid, "commands": []}
    reply = bare.relay("POST", "/sync", {"project_id": bare.pid, "sessions": []})
    assert reply.status == 200
    assert bare.ok("list_graph_sessions", {"project_id": bare.pid})["sessions"] == []


def test_D10_sync_keeps_only_the_documented_fields(bare: Srv) -> None:
    bare.sync([{**session(GS1), "secret_path": "/home/owner"}])
    assert bare.ok("list_graph_sessions", {"project_id": bare.pid})["sessions"] == [session(GS1)]


def test_D10_sync_hands_out_queued_commands_oldest_first(srv: Srv) -> None:
    srv.sync([session(GS1), session(GS2)])
    a = srv.queue(GS2, key="key-aaaaaaaa", arguments={"x": [1, 2]})["command_id"]
    srv.clock.advance(1)
    b = srv.queue(GS1, key="key-bbbbbbbb")["command_id"]
    srv.clock.advance(1)
    c = srv.queue(GS1, key="key-cccccccc", token=srv.other)["command_id"]
    assert srv.sync([session(GS1), session(GS2)]) == {
        "project_id": srv.pid,
        "commands": [
            {
                "command_id": a,
                "graph_session_id": GS2,
                "slug": session(GS2)["slug"],
                "arguments": {"x": [1, 2]},
                "queued_at": T0,
            },
            {
                "command_id": b,
                "graph_session_id": GS1,
                "slug": session(GS1)["slug"],
                "arguments": {},
                "queued_at": stamp(1),
            },
            {
                "command_id": c,
                "graph_session_id": GS1,
                "slug": session(GS1)["slug"],
                "arguments": {},
                "queued_at": stamp(2),
            },
        ],
    }


def test_D10_command_slug_is_the_slug_when_queued(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    out = srv.sync([session(GS1, slug="renamed-since")])
    assert [(c["command_id"], c["slug"]) for c in out["commands"]] == [(cid, session(GS1)["slug"])]


def test_D10_queued_command_is_delivered_until_started_or_completed(srv: Srv) -> None:
    a = srv.queue(key="key-aaaaaaaa")["command_id"]
    b = srv.queue(key="key-bbbbbbbb")["command_id"]
    c = srv.queue(key="key-cccccccc")["command_id"]
    for _ in range(3):
        assert [x["command_id"] for x in srv.sync()["commands"]] == [a, b, c]
    srv.start(a)
    srv.complete(b, {"status": "failed", "error": "re-check failed"})
    srv.cancel(c)
    assert srv.sync()["commands"] == []


def test_D10_at_most_100_sessions(bare: Srv) -> None:
    many = [session(f"gs_{i:032x}") for i in range(101)]
    assert len(bare.sync(many[:100])["commands"]) == 0
    before = bare.snapshot()
    reply = bare.relay("POST", "/sync", {"project_id": bare.pid, "sessions": many})
    assert reply.status == 400
    assert reply.json() == {"error": "at most 100 sessions per sync, got 101"}
    assert bare.snapshot() == before


def test_D10_only_the_project_s_commands(srv: Srv) -> None:
    srv.queue()
    stranger_pid = srv.info.stranger_project_id
    reply = srv.relay(
        "POST",
        "/sync",
        {"project_id": stranger_pid, "sessions": []},
        token=srv.info.stranger_desktop_token,
    )
    assert reply.json() == {"project_id": stranger_pid, "commands": []}


# ====================================================================== R1
@pytest.mark.parametrize(
    ("offered", "answered"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2024-11-05", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ],
)
def test_R1_initialize_negotiates(bare: Srv, offered: str | None, answered: str) -> None:
    params: dict[str, Any] = {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    if offered is not None:
        params["protocolVersion"] = offered
    reply = bare.rpc("initialize", params, msg_id=1)
    assert reply.status == 200
    result = reply.json()["result"]
    assert result["protocolVersion"] == answered
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert result["serverInfo"]["name"]
    session_id = reply.headers["mcp-session-id"]
    assert session_id.isascii() and session_id.isprintable() and len(session_id) >= 16
    # the session id is echoed with the negotiated version on every later request
    hdrs = {"mcp-session-id": session_id, "mcp-protocol-version": answered}
    assert bare.rpc("ping", headers=hdrs).json()["result"] == {}


def test_R1_initialize_without_a_protocol_version_is_refused_naming_it(bare: Srv) -> None:
    params = {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    error = bare.rpc("initialize", params, msg_id=1).json()["error"]
    assert error["code"] == -32602
    assert "at /params: 'protocolVersion' is a required property" in error["message"]


def test_R1_unsupported_protocol_version_header_is_400(srv: Srv) -> None:
    before = srv.snapshot()
    for method in ("tools/list", "ping", "tools/call"):
        reply = srv.rpc(
            method,
            {"name": "get_graph_run", "arguments": {"command_id": INVENTED}},
            srv.agent,
            headers={"mcp-protocol-version": "2024-11-05"},
        )
        assert reply.status == 400
        assert reply.json()["error"]["code"] == -32600
        assert "Unsupported MCP-Protocol-Version" in reply.json()["error"]["message"]
    reply = srv.rpc_raw(
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={"mcp-protocol-version": "1999-01-01"},
    )
    assert reply.status == 400
    assert srv.snapshot() == before


def test_R1_supported_protocol_version_headers_are_served(srv: Srv) -> None:
    for version in ("2025-11-25", "2025-06-18"):
        reply = srv.rpc("tools/list", headers={"mcp-protocol-version": version})
        assert reply.status == 200


def test_R1_notification_is_202_without_body(srv: Srv) -> None:
    for method in ("notifications/initialized", "notifications/cancelled", "notifications/x"):
        reply = srv.rpc_raw({"jsonrpc": "2.0", "method": method})
        assert reply.status == 202 and reply.body == b""


def test_R1_client_response_is_202(srv: Srv) -> None:
    reply = srv.rpc_raw({"jsonrpc": "2.0", "id": 9, "result": {}})
    assert reply.status == 202 and reply.body == b""


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "HEAD", "OPTIONS"])
def test_R1_other_http_methods_are_405(srv: Srv, method: str) -> None:
    reply = srv.http(method, "/mcp", headers={"accept": "text/event-stream"})
    assert reply.status == 405
    assert reply.headers["allow"] == "POST, DELETE"


def test_R1_unknown_method_is_32601(srv: Srv) -> None:
    reply = srv.rpc("resources/list", msg_id="abc")
    assert reply.status == 200
    assert reply.json() == {
        "jsonrpc": "2.0",
        "id": "abc",
        "error": {"code": -32601, "message": "Method not found: resources/list"},
    }


def test_R1_unparsable_body_is_32700(srv: Srv) -> None:
    reply = srv.rpc_raw(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"')
    assert reply.status == 400
    assert reply.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the body is not JSON"},
    }


def test_R1_unknown_tool_is_32602(srv: Srv) -> None:
    before = srv.snapshot()
    reply = srv.call("delete_everything", {}, srv.agent)
    assert reply.status == 200
    assert reply.json()["error"] == {"code": -32602, "message": "Unknown tool: 'delete_everything'"}
    assert srv.snapshot() == before


def test_R1_event_stream_answers() -> None:
    s = Srv(sse=True)
    s.server.state.share(s.pid, [session(GS1)])
    reply = s.call(
        "run_graph_session", {"graph_session_id": GS1, "idempotency_key": "sse-key-1"}, s.agent
    )
    assert reply.status == 200
    assert reply.headers["content-type"] == "text/event-stream"
    text = reply.body.decode()
    assert text.startswith("event: message\ndata: ") and text.endswith("\n\n")
    payload = json.loads(text.split("data: ", 1)[1])
    assert payload["result"]["structuredContent"]["status"] == "queued"
    note = s.rpc_raw({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status == 202 and note.body == b""


def test_R1_session_lifecycle(srv: Srv) -> None:
    sid = srv.rpc(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    ).headers["mcp-session-id"]
    assert srv.rpc("tools/list", headers={"mcp-session-id": sid}).status == 200
    assert srv.rpc("tools/list", headers={"mcp-session-id": "unknown"}).status == 404
    assert srv.http("DELETE", "/mcp", headers={"mcp-session-id": sid}).status == 204
    assert srv.rpc("tools/list", headers={"mcp-session-id": sid}).status == 404
    assert srv.http("DELETE", "/mcp", headers={"mcp-session-id": sid}).status == 404
    assert srv.http("DELETE", "/mcp").status == 405  # dual-era: the modern era has no sessions
    assert srv.rpc("tools/list").status == 200  # stateless callers are still served


def test_R1_trailing_slash_and_custom_path() -> None:
    s = Srv(mcp_path="/v1/mcp")
    assert (
        s.http(
            "POST", "/v1/mcp/", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        ).status
        == 200
    )
    assert s.http("POST", "/mcp", b"{}").status == 404
    with pytest.raises(ValueError, match="must start with '/'"):
        ReferenceServer(mcp_path="mcp")


# ====================================================================== R2
TOOL_SCOPES = {
    "run_graph_session": ("osfoundry:run", {"graph_session_id": GS1, "idempotency_key": "k" * 8}),
    "list_graph_sessions": ("osfoundry:read", {"project_id": "p"}),
    "get_graph_run": ("osfoundry:read", {"command_id": INVENTED}),
    "cancel_graph_run": ("osfoundry:run", {"command_id": INVENTED}),
}


@pytest.mark.parametrize("tool", sorted(TOOL_SCOPES))
def test_R2_no_token_is_401_with_challenge(srv: Srv, tool: str) -> None:
    scope, args = TOOL_SCOPES[tool]
    before = srv.snapshot()
    reply = srv.call(tool, args, token=None)
    assert reply.status == 401
    assert reply.headers["www-authenticate"] == challenge(scope)
    assert reply.json()["error"]["code"] == -32001
    assert srv.snapshot() == before


@pytest.mark.parametrize(
    "authorization",
    ["Bearer unknown-token", "Bearer ", "Bearer", "Basic dXNlcjpwYXNz", "bearer a b", "", "x"],
)
def test_R2_bad_token_is_401_invalid_token(srv: Srv, authorization: str) -> None:
    cid = srv.queue()["command_id"]
    before = srv.snapshot()
    for tool in ("run_graph_session", "cancel_graph_run"):
        args = TOOL_SCOPES[tool][1] if tool == "run_graph_session" else {"command_id": cid}
        reply = srv.rpc(
            "tools/call",
            {"name": tool, "arguments": args},
            headers={"authorization": authorization},
        )
        assert reply.status == 401
        assert reply.headers["www-authenticate"] == challenge("osfoundry:run", "invalid_token")
    assert srv.snapshot() == before


def test_R2_expired_token_is_401(srv: Srv) -> None:
    agent_id = next(iter(srv.server.state.agents))
    token = srv.server.tokens.issue(
        "agent", agent_id, "short-lived", expires_at=srv.clock.now() + 60
    )
    assert srv.ok("list_graph_sessions", {"project_id": srv.pid}, token)["project_id"] == srv.pid
    srv.clock.advance(60)
    reply = srv.call("get_graph_run", {"command_id": INVENTED}, token)
    assert reply.status == 401
    assert reply.headers["www-authenticate"] == challenge("osfoundry:read", "invalid_token")


def test_R2_revoked_token_is_401(srv: Srv) -> None:
    srv.server.tokens.revoke(srv.agent)
    assert srv.call("get_graph_run", {"command_id": INVENTED}, srv.agent).status == 401


def test_R2_token_case_and_whitespace(srv: Srv) -> None:
    for auth in (f"bearer {srv.agent}", f"BEARER {srv.agent}", f"  Bearer   {srv.agent}  "):
        reply = srv.rpc(
            "tools/call",
            {"name": "get_graph_run", "arguments": {"command_id": INVENTED}},
            headers={"authorization": auth},
        )
        assert reply.status == 200, auth
    reply = srv.call("get_graph_run", {"command_id": INVENTED}, srv.agent.upper())
    assert reply.status == 401


@pytest.mark.parametrize("tool", ["run_graph_session", "cancel_graph_run"])
def test_R2_insufficient_scope_is_403(srv: Srv, tool: str) -> None:
    cid = srv.queue()["command_id"]
    before = srv.snapshot()
    args = TOOL_SCOPES[tool][1] if tool == "run_graph_session" else {"command_id": cid}
    reply = srv.call(tool, args, srv.reader)
    assert reply.status == 403
    assert reply.headers["www-authenticate"] == (
        'Bearer error="insufficient_scope", scope="osfoundry:run", '
        f'resource_metadata="{RESOURCE_METADATA}"'
    )
    assert reply.json()["error"]["message"] == "Forbidden: this token lacks the osfoundry:run scope"
    assert srv.snapshot() == before
    assert srv.get(cid)["status"] == "queued"


def test_R2_read_scope_reads(srv: Srv) -> None:
    assert srv.ok("list_graph_sessions", {"project_id": srv.pid}, srv.reader)["sessions"]
    assert srv.err("get_graph_run", {"command_id": INVENTED}, srv.reader) == RUN_NOT_FOUND


@pytest.mark.parametrize("tool", sorted(TOOL_SCOPES))
def test_R2_desktop_token_is_not_an_agent(srv: Srv, tool: str) -> None:
    cid = srv.queue()["command_id"]
    before = srv.snapshot()
    scope, args = TOOL_SCOPES[tool]
    if "command_id" in args:
        args = {"command_id": cid}
    reply = srv.call(tool, args, srv.desktop)
    assert reply.status in (401, 403)
    assert reply.headers["www-authenticate"] == challenge(scope, "insufficient_scope")
    assert srv.snapshot() == before


def test_R2_token_in_query_string_never_accepted(srv: Srv) -> None:
    before = srv.snapshot()
    args = {"graph_session_id": GS1, "idempotency_key": "query-key-1"}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "run_graph_session", "arguments": args},
    }
    for token in (None, srv.agent):
        reply = srv.rpc_raw(message, token, query=f"access_token={srv.agent}")
        assert reply.status == 400
        assert srv.agent.encode() not in reply.body
    reply = srv.relay("GET", f"/commands/{INVENTED}/control")
    assert reply.status == 404
    reply = srv.http(
        "GET",
        f"/external-assistants/graph-relays/commands/{INVENTED}/control",
        query=f"x=1&access_token={srv.desktop}",
    )
    assert reply.status == 400
    assert srv.snapshot() == before


def test_R2_protected_resource_metadata(bare: Srv) -> None:
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ):
        reply = bare.http("GET", path)
        assert reply.status == 200
        meta = reply.json()
        assert meta["resource"] == f"{ORIGIN}/mcp"
        assert meta["authorization_servers"] == [ORIGIN]
        assert meta["scopes_supported"] == ["osfoundry:read", "osfoundry:run"]
    reply = bare.http("POST", "/.well-known/oauth-protected-resource")
    assert reply.status == 405 and reply.headers["allow"] == "GET"


def test_R2_public_url_names_the_resource_and_the_challenge() -> None:
    s = Srv(public_url="https://osf.example/connect/mcp")
    meta = s.http("GET", "/.well-known/oauth-protected-resource").json()
    assert meta["resource"] == "https://osf.example/connect/mcp"
    reply = s.call("get_graph_run", {"command_id": INVENTED}, token=None)
    assert reply.headers["www-authenticate"] == (
        'Bearer scope="osfoundry:read", '
        'resource_metadata="https://osf.example/.well-known/oauth-protected-resource"'
    )


def test_R1_origin_never_follows_host(srv: Srv) -> None:
    """The challenge and the metadata name the configured public URL, whatever Host says."""
    evil = {"host": "evil.example"}
    reply = srv.rpc("tools/call", {"name": "get_graph_run", "arguments": {}}, headers=evil)
    assert reply.headers["www-authenticate"].endswith(f'resource_metadata="{RESOURCE_METADATA}"')
    meta = srv.http("GET", "/.well-known/oauth-protected-resource", headers=evil).json()
    assert meta["resource"] == f"{ORIGIN}/mcp" and meta["authorization_servers"] == [ORIGIN]
    assert "evil" not in reply.headers["www-authenticate"]


def test_R1_public_url_defaults_to_localhost_until_a_door_names_it() -> None:
    server = ReferenceServer()
    assert server.mcp_url() == "http://localhost/mcp"
    server.serve_at("http://127.0.0.1:8123")
    server.serve_at("https://later.example")  # the first door wins
    assert server.mcp_url() == "http://127.0.0.1:8123/mcp"
    assert ReferenceServer(public_url="https://a.example/x/mcp").origin() == "https://a.example"
    with pytest.raises(ValueError, match="http"):
        ReferenceServer(public_url="ftp://a.example/mcp")


def test_R2_auth_before_argument_validation(srv: Srv) -> None:
    reply = srv.call("run_graph_session", {"bogus": 1}, token=None)
    assert reply.status == 401


# ====================================================================== R3
def test_R3_success_shape(srv: Srv) -> None:
    result = srv.result(
        "run_graph_session",
        {"graph_session_id": GS1, "idempotency_key": "shape-key", "arguments": {"q": "日本語"}},
    )
    assert set(result) == {"content", "structuredContent"}
    assert result["content"][0]["type"] == "text"
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_R3_session_not_found(srv: Srv) -> None:
    before = srv.snapshot()
    for gsid in (GS2, "gs_nope", ""):
        args = {"graph_session_id": gsid, "idempotency_key": "missing-1"}
        assert srv.err("run_graph_session", args) == SESSION_NOT_FOUND
    # a session shared with another account's project is the same "not found"
    srv.server.state.share(srv.info.stranger_project_id, [session(GS2)])
    args = {"graph_session_id": GS2, "idempotency_key": "missing-2"}
    assert srv.err("run_graph_session", args) == SESSION_NOT_FOUND
    after = srv.snapshot()
    after["sessions"][srv.info.stranger_project_id] = []
    assert after == before


def test_R3_project_not_found(srv: Srv) -> None:
    for pid in ("proj_unknown", srv.info.stranger_project_id):
        assert srv.err("list_graph_sessions", {"project_id": pid}) == PROJECT_NOT_FOUND


def test_R3_key_conflict(srv: Srv) -> None:
    srv.queue(key="conflict-1", arguments={"a": 1})
    before = srv.snapshot()
    args = {"graph_session_id": GS1, "idempotency_key": "conflict-1", "arguments": {"a": 2}}
    assert srv.err("run_graph_session", args) == KEY_CONFLICT
    assert srv.snapshot() == before


@pytest.mark.parametrize(
    ("tool", "args", "where"),
    [
        (
            "run_graph_session",
            {"graph_session_id": GS1, "idempotency_key": "abcdefgh", "extra": 1},
            "arguments",
        ),
        (
            "run_graph_session",
            {"graph_session_id": 5, "idempotency_key": "abcdefgh"},
            "graph_session_id",
        ),
        (
            "run_graph_session",
            {"graph_session_id": GS1, "idempotency_key": "abcdefgh", "arguments": []},
            "arguments",
        ),
        ("list_graph_sessions", {"project_id": "p", "limit": "5"}, "limit"),
        ("list_graph_sessions", {"project_id": "p", "limit": True}, "limit"),
        ("list_graph_sessions", {}, "arguments"),
        ("get_graph_run", {"command_id": None}, "command_id"),
        ("cancel_graph_run", {"command_id": ["x"]}, "command_id"),
        ("cancel_graph_run", {"command_id": INVENTED, "force": True}, "arguments"),
    ],
)
def test_R3_schema_violation_is_refused(srv: Srv, tool: str, args: Any, where: str) -> None:
    cid = srv.queue()["command_id"]
    before = srv.snapshot()
    text = srv.err(tool, args)
    assert text.startswith(f"Invalid arguments for {tool}: {where}: ")
    assert srv.snapshot() == before
    assert srv.get(cid)["status"] == "queued"


# ====================================================================== R4
def test_R4_ticket(srv: Srv) -> None:
    srv.clock.advance(1.25)
    ticket = srv.queue()
    assert ticket == {
        "command_id": ticket["command_id"],
        "graph_session_id": GS1,
        "status": "queued",
        "queued_at": stamp(1.25),
        "poll_after_seconds": 20,
    }
    assert uuid.UUID(ticket["command_id"]).version == 4


def test_R4_replay_shows_current_status(srv: Srv) -> None:
    first = srv.queue(key="replay-01")
    srv.clock.advance(20)
    srv.start(first["command_id"])
    assert srv.queue(key="replay-01") == {**first, "status": "running"}
    srv.complete(first["command_id"], {"status": "completed", "result": 1})
    assert srv.queue(key="replay-01") == {**first, "status": "completed"}


# ====================================================================== R5
def test_R5_key_per_agent(srv: Srv) -> None:
    mine = srv.queue(key="shared-key-1", arguments={"x": 1})
    theirs = srv.queue(key="shared-key-1", arguments={"x": 1}, token=srv.other)
    assert theirs["command_id"] != mine["command_id"]
    assert mine["command_id"] not in json.dumps(theirs)
    assert len(srv.server.state.runs) == 2
    # a different argument set under the same key is fine for the other agent too
    third = srv.queue(key="shared-key-2", arguments={"x": 1})
    other2 = srv.queue(key="shared-key-2", arguments={"x": 2}, token=srv.other)
    assert third["command_id"] != other2["command_id"]


def test_R5_same_key_same_call_is_the_original_ticket(srv: Srv) -> None:
    first = srv.queue(key="same-key-1", arguments={"b": [1, {"c": 2}], "a": "x"})
    again = srv.queue(key="same-key-1", arguments={"a": "x", "b": [1, {"c": 2}]})
    assert again == first
    assert len(srv.server.state.runs) == 1


@pytest.mark.parametrize(
    ("gsid", "arguments"), [(GS1, {"n": 2}), (GS2, {"n": 1}), (GS1, {}), (GS1, {"n": "1"})]
)
def test_R5_same_key_different_call_is_refused(srv: Srv, gsid: str, arguments: Any) -> None:
    srv.server.state.share(srv.pid, [session(GS1), session(GS2)])
    srv.queue(key="same-key-2", arguments={"n": 1})
    before = srv.snapshot()
    args = {"graph_session_id": gsid, "idempotency_key": "same-key-2", "arguments": arguments}
    assert srv.err("run_graph_session", args) == KEY_CONFLICT
    assert srv.snapshot() == before


def test_R5_keys_remembered_for_24_hours(srv: Srv) -> None:
    first = srv.queue(key="long-lived")
    srv.clock.advance(24 * 3600 - 1)  # forgotten at 24 hours (test_server_retention.py)
    assert srv.queue(key="long-lived")["command_id"] == first["command_id"]
    assert len(srv.server.state.runs) == 1


def test_R5_refused_call_does_not_burn_the_key(srv: Srv) -> None:
    args = {"graph_session_id": GS2, "idempotency_key": "not-burnt"}
    assert srv.err("run_graph_session", args) == SESSION_NOT_FOUND
    srv.server.state.share(srv.pid, [session(GS1), session(GS2)])
    assert srv.queue(GS2, key="not-burnt")["status"] == "queued"


# ====================================================================== R6
def test_R6_view_through_a_lifecycle(srv: Srv) -> None:
    cid = srv.queue(arguments={"q": 1})["command_id"]
    base = {"command_id": cid, "graph_session_id": GS1, "queued_at": T0, "cancel_requested": False}
    assert srv.get(cid) == {**base, "status": "queued", "started_at": None, "finished_at": None}
    srv.clock.advance(9.8)
    srv.start(cid, "exec-42")
    running = srv.get(cid)
    assert running == {
        **base,
        "status": "running",
        "started_at": stamp(9.8),
        "finished_at": None,
        "execution_id": "exec-42",
    }
    srv.clock.advance(60)
    body = {
        "execution_id": "exec-42",
        "status": "completed",
        "result": {"answer": [1, "二"]},
        "total_tokens": 1234,
        "reported_cost": 0.0123,
    }
    assert srv.complete(cid, body).json() == {"status": "completed"}
    final = srv.get(cid)
    assert final == {
        **base,
        "status": "completed",
        "started_at": stamp(9.8),
        "finished_at": stamp(69.8),
        "execution_id": "exec-42",
        "result": {"answer": [1, "二"]},
        "total_tokens": 1234,
        "reported_cost": 0.0123,
    }
    # terminal never changes again
    srv.clock.advance(100)
    assert srv.cancel(cid) == {"command_id": cid, "status": "completed", "cancel_requested": False}
    assert srv.complete(cid, {**body, "status": "failed"}).status == 409
    assert srv.start(cid).status == 409
    assert srv.get(cid) == final


def test_R6_failed_with_error_and_truncated_result(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.start(cid)
    body = {"execution_id": "e", "status": "failed", "result_truncated": True, "error": "boom"}
    srv.complete(cid, body)
    view = srv.get(cid)
    assert view["status"] == "failed" and view["result_truncated"] is True
    assert view["error"] == "boom" and "result" not in view
    assert "total_tokens" not in view and "reported_cost" not in view


def test_R6_error_cut_to_2000_characters(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.start(cid)
    srv.complete(cid, {"status": "failed", "error": "e" * 1999 + "😀" + "tail"})
    error = srv.get(cid)["error"]
    assert error == "e" * 1999  # the emoji counts 2 UTF-16 units and is never split
    cid2 = srv.queue(key="key-2-xxxxx")["command_id"]
    srv.start(cid2)
    srv.complete(cid2, {"status": "failed", "error": "x" * 5000})
    assert srv.get(cid2)["error"] == "x" * 2000


def test_R6_timestamps_are_rfc3339_utc(srv: Srv) -> None:
    srv.clock.advance(0.0004)  # rounds to whole milliseconds
    cid = srv.queue()["command_id"]
    assert srv.get(cid)["queued_at"] == T0


# ====================================================================== R7
def test_R7_cancel_results(srv: Srv) -> None:
    queued = srv.queue(key="cancel-q")["command_id"]
    running = srv.queue(key="cancel-r")["command_id"]
    done = srv.queue(key="cancel-d")["command_id"]
    srv.start(running)
    srv.start(done)
    srv.complete(done, {"status": "completed", "result": None})
    assert srv.cancel(queued) == {
        "command_id": queued,
        "status": "cancelled",
        "cancel_requested": True,
    }
    assert srv.cancel(running) == {
        "command_id": running,
        "status": "running",
        "cancel_requested": True,
    }
    assert srv.cancel(done) == {
        "command_id": done,
        "status": "completed",
        "cancel_requested": False,
    }
    before = srv.snapshot()
    assert srv.cancel(queued) == {
        "command_id": queued,
        "status": "cancelled",
        "cancel_requested": True,
    }
    assert srv.cancel(running)["status"] == "running"
    assert srv.snapshot() == before


@pytest.mark.parametrize("target", ["other-agent", "unknown", "malformed"])
def test_R7_cancel_refusals_change_nothing(srv: Srv, target: str) -> None:
    cid = srv.queue()["command_id"]
    before = srv.snapshot()
    token = srv.other if target == "other-agent" else srv.agent
    command_id = {"other-agent": cid, "unknown": INVENTED, "malformed": "'; DROP"}[target]
    assert srv.err("cancel_graph_run", {"command_id": command_id}, token) == RUN_NOT_FOUND
    assert srv.snapshot() == before


# ====================================================================== R8
def test_R8_list_shape_and_limit(bare: Srv) -> None:
    sessions = [session(f"gs_{i:032x}") for i in range(60)]
    bare.server.state.share(bare.pid, sessions)
    listed = bare.ok("list_graph_sessions", {"project_id": bare.pid})
    assert listed == {"project_id": bare.pid, "sessions": sessions[:50]}
    assert bare.ok("list_graph_sessions", {"project_id": bare.pid, "limit": 1})["sessions"] == [
        sessions[0]
    ]
    assert (
        len(bare.ok("list_graph_sessions", {"project_id": bare.pid, "limit": 50})["sessions"]) == 50
    )
    for bad in (0, 51, -1):
        text = bare.err("list_graph_sessions", {"project_id": bare.pid, "limit": bad})
        assert text.startswith("Invalid arguments for list_graph_sessions: limit: ")


def test_R8_sessions_have_the_six_fields(bare: Srv) -> None:
    bare.sync([{"graph_session_id": GS1, "slug": "s"}])
    assert bare.ok("list_graph_sessions", {"project_id": bare.pid})["sessions"] == [
        {
            "graph_session_id": GS1,
            "name": None,
            "description": None,
            "slug": "s",
            "version": None,
            "status": None,
        }
    ]


# ====================================================================== R9
def test_R9_start(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.clock.advance(3)
    reply = srv.start(cid, "exec-9")
    assert (reply.status, reply.json()) == (200, {"status": "running"})
    assert srv.get(cid)["started_at"] == stamp(3)
    srv.clock.advance(3)
    assert srv.start(cid, "exec-9").json() == {"status": "running"}
    assert srv.get(cid)["started_at"] == stamp(3)  # unchanged by the second start


@pytest.mark.parametrize("final", ["completed", "failed"])
def test_R9_start_after_finish_is_409(srv: Srv, final: str) -> None:
    cid = srv.queue()["command_id"]
    srv.start(cid)
    srv.complete(cid, {"status": final})
    before = srv.snapshot()
    reply = srv.start(cid, "exec-2")
    assert reply.status == 409
    assert reply.json() == {"error": f"command {cid} is already {final}"}
    assert srv.snapshot() == before


def test_R9_start_after_agent_cancel_says_cancelled(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.cancel(cid)
    before = srv.snapshot()
    assert srv.start(cid).json() == {"status": "cancelled"}
    assert srv.snapshot() == before


@pytest.mark.parametrize("body", [{}, {"execution_id": ""}, {"execution_id": 5}, []])
def test_R9_start_needs_an_execution_id(srv: Srv, body: Any) -> None:
    cid = srv.queue()["command_id"]
    before = srv.snapshot()
    reply = srv.relay("POST", f"/commands/{cid}/start", body)
    assert reply.status == 400
    assert "error" in reply.json()
    assert srv.snapshot() == before


# ====================================================================== R10
def test_R10_control(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    assert srv.control(cid).json() == {"status": "queued", "cancel_requested": False}
    srv.start(cid)
    assert srv.control(cid).json() == {"status": "running", "cancel_requested": False}
    srv.cancel(cid)
    assert srv.control(cid).json() == {"status": "running", "cancel_requested": True}
    srv.complete(cid, {"status": "cancelled"})
    assert srv.control(cid).json() == {"status": "cancelled", "cancel_requested": True}
    assert srv.relay("POST", f"/commands/{cid}/control", {}).status == 405


# ====================================================================== R11
def test_R11_redelivery_same_body(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.start(cid, "exec-1")
    body = {
        "execution_id": "exec-1",
        "status": "completed",
        "result": {"k": "v"},
        "total_tokens": 7,
        "reported_cost": 0.5,
    }
    assert srv.complete(cid, body).json() == {"status": "completed"}
    before = srv.snapshot()
    srv.clock.advance(40)
    reply = srv.complete(cid, body)
    assert (reply.status, reply.json()) == (200, {"status": "completed"})
    assert srv.snapshot() == before
    # the same body with another key order or escaping is the same completion
    raw = json.dumps(dict(reversed(list(body.items()))), ensure_ascii=True).encode()
    assert srv.complete(cid, raw).status == 200
    assert srv.snapshot() == before


def test_R11_different_completion_is_409(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.start(cid)
    srv.complete(cid, {"status": "completed", "result": 1})
    before = srv.snapshot()
    for other in (
        {"status": "completed", "result": 2},
        {"status": "failed"},
        {"status": "cancelled"},
        {"status": "completed", "result": 1, "total_tokens": 1},
    ):
        reply = srv.complete(cid, other)
        assert reply.status == 409
        assert reply.json() == {"error": f"command {cid} is already completed"}
    assert srv.snapshot() == before


def test_R11_queued_command_completes_only_as_cancelled_or_failed(srv: Srv) -> None:
    a = srv.queue(key="key-aaaaaaaa")["command_id"]
    b = srv.queue(key="key-bbbbbbbb")["command_id"]
    c = srv.queue(key="key-cccccccc")["command_id"]
    before = srv.snapshot()
    reply = srv.complete(a, {"status": "completed", "result": 1})
    assert reply.status == 409
    assert srv.snapshot() == before
    recheck = "Graph session is no longer shared with this project"
    assert srv.complete(a, {"status": "cancelled", "error": recheck}).json() == {
        "status": "cancelled"
    }
    assert srv.complete(b, {"status": "failed"}).json() == {"status": "failed"}
    view = srv.get(a)
    assert view["status"] == "cancelled" and view["error"] == recheck
    assert view["started_at"] is None and view["finished_at"] == T0
    assert [x["command_id"] for x in srv.sync()["commands"]] == [c]


def test_R11_cancelled_completion_after_agent_cancel(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.cancel(cid)
    before = srv.snapshot()
    recheck = {
        "status": "cancelled",
        "error": "Graph session is no longer shared with this project",
    }
    for body in (recheck, {"status": "cancelled"}, recheck):
        reply = srv.complete(cid, body)
        assert (reply.status, reply.json()) == (200, {"status": "cancelled"})
    assert srv.snapshot() == before
    assert "error" not in srv.get(cid)  # no relay-reported fields on a queued cancel
    assert srv.complete(cid, {"status": "failed"}).status == 409
    assert srv.snapshot() == before


def _sized(limit_text: str, total: int) -> dict[str, Any]:
    """A completion whose JSON.stringify length is exactly ``total`` (text of BMP/ASCII)."""
    empty = len('{"status":"completed","result":""}')
    return {"status": "completed", "result": limit_text * (total - empty)}


@pytest.mark.parametrize("char", ["a", "日"])
def test_R11_completion_bound_is_100000_characters(srv: Srv, char: str) -> None:
    ok = srv.queue(key="bound-ok-1")["command_id"]
    big = srv.queue(key="bound-big-1")["command_id"]
    srv.start(ok)
    srv.start(big)
    assert srv.complete(ok, _sized(char, 100_000)).status == 200
    before = srv.snapshot()
    reply = srv.complete(big, _sized(char, 100_001))
    assert reply.status == 413
    assert reply.json() == {
        "error": "completion is over 100000 characters as JSON.stringify counts"
    }
    assert srv.snapshot() == before


def test_R11_bound_ignores_the_client_s_escaping(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.start(cid)
    body = _sized("日", 100_000)
    raw = json.dumps(body, ensure_ascii=True).encode()  # 6 bytes per character on the wire
    assert len(raw) > 500_000
    assert srv.complete(cid, raw).status == 200


def test_R11_bound_counts_utf16_units(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    srv.start(cid)
    empty = len('{"status":"completed","result":""}')
    emoji = {"status": "completed", "result": "😀" * ((100_000 - empty) // 2 + 1)}
    before = srv.snapshot()
    assert srv.complete(cid, emoji).status == 413  # under 100,000 code points, over in units
    assert srv.snapshot() == before
    escapes = {"status": "completed", "result": "\n" * ((100_000 - empty) // 2 + 1)}
    assert srv.complete(cid, escapes).status == 413  # "\n" is two characters in JSON


@pytest.mark.parametrize(
    "body",
    [
        {"status": "done"},
        {"result": 1},
        {"status": "completed", "result_truncated": True, "result": 1},
        {"status": "completed", "result_truncated": "yes"},
        {"status": "completed", "total_tokens": -1},
        {"status": "completed", "total_tokens": "5"},
        {"status": "completed", "reported_cost": True},
        {"status": "completed", "error": 5},
        {"status": "completed", "execution_id": 5},
        {"status": "completed", "surprise": 1},
        [],
        "completed",
    ],
)
def test_R11_malformed_completion_is_400(srv: Srv, body: Any) -> None:
    cid = srv.queue()["command_id"]
    srv.start(cid)
    before = srv.snapshot()
    reply = srv.complete(cid, body)
    assert reply.status == 400
    assert isinstance(reply.json()["error"], str)
    assert srv.snapshot() == before


# ====================================================================== R12
def test_R12_relay_auth(srv: Srv) -> None:
    cid = srv.queue()["command_id"]
    before = srv.snapshot()
    paths = [
        ("POST", "/sync", {"project_id": srv.pid, "sessions": []}),
        ("POST", f"/commands/{cid}/start", {"execution_id": "e"}),
        ("GET", f"/commands/{cid}/control", None),
        ("POST", f"/commands/{cid}/complete", {"status": "failed"}),
    ]
    for method, path, body in paths:
        for token in (None, "unknown-token"):
            reply = srv.relay(method, path, body, token=token)
            assert reply.status == 401, (path, token)
            assert reply.headers["www-authenticate"] == "Bearer"
            assert reply.json() == {"error": "a valid desktop bearer token is required"}
        for token in (srv.agent, srv.reader, srv.stranger):
            reply = srv.relay(method, path, body, token=token)
            assert reply.status == 403
            assert reply.json() == {"error": "an agent's token cannot act as the desktop relay"}
    assert srv.snapshot() == before


def test_R12_desktop_token_only_for_its_owner_s_projects(srv: Srv) -> None:
    srv.queue()
    before = srv.snapshot()
    reply = srv.relay(
        "POST",
        "/sync",
        {"project_id": srv.pid, "sessions": []},
        token=srv.info.stranger_desktop_token,
    )
    assert reply.status == 404
    assert reply.json() == {"error": f"project {srv.pid} not found"}
    assert srv.snapshot() == before


# ====================================================================== R13
@pytest.mark.parametrize("action", ["start", "control", "complete"])
def test_R13_unknown_and_foreign_commands_are_404(srv: Srv, action: str) -> None:
    real = srv.queue()["command_id"]
    before = srv.snapshot()
    method = "GET" if action == "control" else "POST"
    body = {"start": {"execution_id": "e"}, "complete": {"status": "failed"}}.get(action)
    foreign = srv.relay(
        method, f"/commands/{real}/{action}", body, token=srv.info.stranger_desktop_token
    )
    unknown = srv.relay(method, f"/commands/{INVENTED}/{action}", body)
    malformed = srv.relay(method, f"/commands/not-a-uuid/{action}", body)
    assert foreign.status == unknown.status == malformed.status == 404
    assert foreign.json() == {"error": f"command {real} not found"}
    assert unknown.json() == {"error": f"command {INVENTED} not found"}
    assert malformed.json() == {"error": "command not-a-uuid not found"}
    assert srv.snapshot() == before


def test_R13_foreign_answer_matches_unknown_answer_byte_for_byte(srv: Srv) -> None:
    real = srv.queue()["command_id"]
    srv.server.state.runs.pop(real)  # now "real" is unknown to everyone ...
    unknown = srv.control(real)
    s2 = Srv()
    s2.server.state.share(s2.pid, [session(GS1)])
    real2 = s2.queue()["command_id"]
    foreign = s2.relay("GET", f"/commands/{real2}/control", token=s2.info.stranger_desktop_token)
    assert foreign.headers == unknown.headers
    assert foreign.body.replace(real2.encode(), real.encode()) == unknown.body
