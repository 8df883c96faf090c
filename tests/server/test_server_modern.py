"""SPEC R1 for MCP 2026-07-28 (the modern, stateless era), dual-era serving and Origin."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from pytest_osfoundry.server import ReferenceServer
from pytest_osfoundry.server._eras import decode_header_value, normalize_protocols
from tests.server.osf_server_kit import GS1, INVENTED, RESOURCE_METADATA, Srv, session

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


def modern_headers(method: str, name: str | None = None, version: str = MODERN) -> dict[str, str]:
    headers = {"mcp-protocol-version": version, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


def modern(
    srv: Srv,
    method: str,
    params: dict[str, Any] | None = None,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    meta: dict[str, Any] | None = None,
    msg_id: Any = 41,
) -> Any:
    body = dict(params or {})
    body["_meta"] = META if meta is None else meta
    name = body.get("name") if method == "tools/call" else None
    hdrs = modern_headers(method, name)
    hdrs.update(headers or {})
    return srv.rpc(method, body, token, msg_id, {k: v for k, v in hdrs.items() if v is not None})


@pytest.fixture
def srv() -> Srv:
    s = Srv()
    s.server.state.share(s.pid, [session(GS1)])
    return s


def test_discover_names_versions_capabilities_and_server(srv: Srv) -> None:
    reply = modern(srv, "server/discover")
    assert reply.status == 200
    result = reply.json()["result"]
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert "tools" in result["capabilities"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
    assert result["resultType"] == "complete"
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")


def test_every_result_is_complete_and_tools_list_has_caching_hints(srv: Srv) -> None:
    listing = modern(srv, "tools/list").json()["result"]
    assert listing["resultType"] == "complete"
    assert isinstance(listing["ttlMs"], int) and listing["ttlMs"] >= 0
    assert listing["cacheScope"] == "public"
    assert len(listing["tools"]) == 4
    args = {"graph_session_id": GS1, "idempotency_key": "modern-key-1"}
    call = modern(srv, "tools/call", {"name": "run_graph_session", "arguments": args}, srv.agent)
    result = call.json()["result"]
    assert result["resultType"] == "complete" and result["structuredContent"]["status"] == "queued"
    failed = modern(srv, "tools/call", {"name": "get_graph_run", "arguments": {}}, srv.agent)
    assert failed.json()["result"]["isError"] is True
    assert failed.json()["result"]["resultType"] == "complete"


def test_the_tools_are_the_same_on_both_eras(srv: Srv) -> None:
    """One run queued in the modern era is seen, identically, in the legacy era."""
    args = {"graph_session_id": GS1, "idempotency_key": "both-eras-1"}
    ticket = modern(srv, "tools/call", {"name": "run_graph_session", "arguments": args}, srv.agent)
    legacy = srv.result("run_graph_session", args)
    structured = ticket.json()["result"]["structuredContent"]
    assert structured == legacy["structuredContent"]
    assert (
        srv.rpc("tools/list").json()["result"]["tools"]
        == (modern(srv, "tools/list").json()["result"]["tools"])
    )


@pytest.mark.parametrize(
    "meta",
    [
        {},
        {"io.modelcontextprotocol/clientCapabilities": {}},
        {"io.modelcontextprotocol/protocolVersion": MODERN},
    ],
    ids=["empty", "no-version", "no-capabilities"],
)
def test_meta_without_version_or_capabilities_is_400_invalid_params(
    srv: Srv, meta: dict[str, Any]
) -> None:
    reply = modern(srv, "server/discover", meta=meta, msg_id=102)
    assert reply.status == 400
    assert reply.json()["id"] == 102 and reply.json()["error"]["code"] == -32602


def test_missing_meta_is_400_invalid_params(srv: Srv) -> None:
    reply = srv.rpc("server/discover", {}, None, 101, modern_headers("server/discover"))
    assert (reply.status, reply.json()["error"]["code"], reply.json()["id"]) == (400, -32602, 101)


def test_client_info_is_optional(srv: Srv) -> None:
    meta = {k: v for k, v in META.items() if not k.endswith("clientInfo")}
    assert modern(srv, "server/discover", meta=meta).status == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"mcp-method": None},
        {"mcp-method": "prompts/list"},
        {"mcp-method": "TOOLS/CALL"},
        {"mcp-name": None},
        {"mcp-name": "cancel_graph_run"},
        {"mcp-name": "=?base64?!!!?="},
        {"mcp-protocol-version": None},
        {"mcp-protocol-version": "2025-11-25"},
        {"mcp-method": "tools/call\x01"},
    ],
    ids=lambda h: repr(h),
)
def test_header_missing_or_mismatched_is_400_header_mismatch(
    srv: Srv, headers: dict[str, Any]
) -> None:
    before = srv.snapshot()
    args = {"graph_session_id": GS1, "idempotency_key": "header-key-1"}
    params = {"name": "run_graph_session", "arguments": args}
    reply = modern(srv, "tools/call", params, srv.agent, headers=headers, msg_id="h-1")
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["code"] == -32020 and reply.json()["id"] == "h-1"
    assert srv.snapshot() == before  # nothing queued


def test_header_values_are_trimmed_and_base64_decoded(srv: Srv) -> None:
    args = {"command_id": INVENTED}
    params = {"name": "get_graph_run", "arguments": args}
    padded = modern(srv, "tools/call", params, srv.agent, headers={"mcp-name": "  get_graph_run  "})
    assert padded.status == 200
    encoded = "=?base64?" + base64.b64encode(b"get_graph_run").decode() + "?="
    assert modern(srv, "tools/call", params, srv.agent, headers={"mcp-name": encoded}).status == 200
    assert decode_header_value(" =?base64?SGVsbG8sIOS4lueVjA==?= ") == "Hello, 世界"
    assert decode_header_value("=?base64?SGVsbG8?=") is None  # bad padding
    assert decode_header_value("=?base64?SGVs") == "=?base64?SGVs"  # no suffix: literal


def test_unsupported_version_is_400_with_supported_and_requested(srv: Srv) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    reply = modern(srv, "server/discover", meta=meta, headers={"mcp-protocol-version": "v999.0.0"})
    error = reply.json()["error"]
    assert reply.status == 400 and error["code"] == -32022 and reply.json()["id"] == 41
    assert error["data"] == {
        "supported": ["2026-07-28", "2025-11-25", "2025-06-18"],
        "requested": "v999.0.0",
    }


def test_header_version_differing_from_meta_is_a_mismatch_before_support(srv: Srv) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    reply = modern(srv, "server/discover", meta=meta)
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32020)


@pytest.mark.parametrize("method", ["ping", "initialize", "logging/setLevel", "unknown/method"])
def test_removed_and_unknown_methods_are_404_method_not_found(srv: Srv, method: str) -> None:
    reply = modern(srv, method, msg_id=500)
    assert reply.status == 404
    assert reply.json()["error"]["code"] == -32601 and reply.json()["id"] == 500


def test_session_ids_are_ignored_and_never_minted(srv: Srv) -> None:
    reply = modern(srv, "tools/list", headers={"mcp-session-id": "not-a-session"})
    assert reply.status == 200 and "mcp-session-id" not in reply.headers


def test_get_and_delete_are_405(srv: Srv) -> None:
    assert srv.http("GET", "/mcp").status == 405
    assert srv.http("DELETE", "/mcp").status == 405


def test_auth_rules_are_the_same_in_the_modern_era(srv: Srv) -> None:
    params = {"name": "get_graph_run", "arguments": {"command_id": INVENTED}}
    reply = modern(srv, "tools/call", params)
    assert reply.status == 401 and reply.json()["id"] == 41
    assert reply.headers["www-authenticate"].endswith(f'resource_metadata="{RESOURCE_METADATA}"')
    cancel = {"name": "cancel_graph_run", "arguments": {"command_id": INVENTED}}
    assert modern(srv, "tools/call", cancel, srv.reader).status == 403


def test_sse_answers_in_the_modern_era() -> None:
    s = Srv(sse=True)
    reply = modern(s, "tools/list")
    assert reply.headers["content-type"] == "text/event-stream"
    assert b'"resultType":"complete"' in reply.body


# ---------------------------------------------------------------------- protocols
def test_protocols_setting_is_validated() -> None:
    assert normalize_protocols(["2025-06-18", "2026-07-28"]) == ("2026-07-28", "2025-06-18")
    assert normalize_protocols("2025-11-25") == ("2025-11-25",)
    with pytest.raises(ValueError, match="2024-11-05"):
        ReferenceServer(protocols=["2024-11-05"])
    with pytest.raises(ValueError, match="at least one"):
        ReferenceServer(protocols=[])


def test_modern_only_server_has_no_handshake() -> None:
    s = Srv(protocols=["2026-07-28"])
    init = s.rpc(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    assert init.status == 400 and "mcp-session-id" not in init.headers
    assert init.json()["error"]["data"]["supported"] == ["2026-07-28"]
    legacy_list = s.rpc("tools/list", headers={"mcp-protocol-version": "2025-11-25"})
    assert legacy_list.status == 400
    assert modern(s, "server/discover").json()["result"]["supportedVersions"] == ["2026-07-28"]
    assert s.http("DELETE", "/mcp", headers={"mcp-session-id": "x"}).status == 405


def test_legacy_only_server_answers_modern_requests_as_a_legacy_server() -> None:
    s = Srv(protocols=["2025-11-25", "2025-06-18"])
    reply = modern(s, "tools/list")
    assert reply.status == 400 and reply.json()["error"]["code"] == -32600  # not a modern error
    assert (
        s.rpc(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        ).status
        == 200
    )


def test_a_2025_06_18_only_server_negotiates_down() -> None:
    s = Srv(protocols=["2025-06-18"])
    init = s.rpc(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    ).json()["result"]
    assert init["protocolVersion"] == "2025-06-18"
    assert s.rpc("tools/list", headers={"mcp-protocol-version": "2025-11-25"}).status == 400


# ---------------------------------------------------------------------- Origin
@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "null",
        "http://evil.example:80",
        "https://osf.test.evil.example",
        # several Origin fields, joined by a door (RFC 9110 §5.3): never one origin
        "http://localhost/, http://evil.example",
        "http://localhost, http://localhost",
        "http://localhost http://127.0.0.1",
    ],
)
def test_foreign_origin_is_403_and_nothing_happens(srv: Srv, origin: str) -> None:
    before = srv.snapshot()
    args = {"graph_session_id": GS1, "idempotency_key": "origin-key-1"}
    reply = srv.rpc(
        "tools/call",
        {"name": "run_graph_session", "arguments": args},
        srv.agent,
        headers={"origin": origin},
    )
    assert reply.status == 403
    assert srv.snapshot() == before
    relay = srv.http("GET", "/.well-known/oauth-protected-resource", headers={"origin": origin})
    assert relay.status == 403


@pytest.mark.parametrize(
    "origin",
    ["http://localhost:3000", "http://127.0.0.1:9", "https://[::1]", "http://osf.test", None],
)
def test_loopback_own_and_absent_origins_are_served(srv: Srv, origin: str | None) -> None:
    headers = {} if origin is None else {"origin": origin}
    assert srv.rpc("tools/list", headers=headers).status == 200


def test_allow_origins_adds_origins() -> None:
    s = Srv(allow_origins=["https://app.example"])
    assert s.rpc("tools/list", headers={"origin": "https://app.example"}).status == 200
    assert s.rpc("tools/list", headers={"origin": "https://other.example"}).status == 403
    with pytest.raises(ValueError, match="not-an-origin"):
        ReferenceServer(allow_origins=["not-an-origin"])
