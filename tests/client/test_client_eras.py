"""McpClient across MCP eras: probe, fallback, pinning, the per-origin cache (SPEC R1)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from pytest_osfoundry.client import (
    DirectTransport,
    HttpStatusError,
    McpClient,
    ProtocolViolation,
)
from pytest_osfoundry.client._mcp_client import EraCache, is_modern_error, mcp_header_value
from pytest_osfoundry.http import Request, Response, json_response
from pytest_osfoundry.server import ReferenceServer
from tests.client.conftest import FakeMcp

URL = "http://osf.test/mcp"
GS1 = "gs_" + "1" * 32


class Recording:
    """A handler wrapper that keeps every request."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler
        self.requests: list[Request] = []

    def __call__(self, request: Request) -> Response:
        self.requests.append(request)
        reply: Response = self.handler(request)
        return reply

    @property
    def methods(self) -> list[str]:
        return [json.loads(r.body).get("method") for r in self.requests]


def server(protocols: list[str] | None = None) -> tuple[Recording, str]:
    app = ReferenceServer(protocols=protocols, public_url=URL)
    info = app.provision()
    app.state.share(info.project_id, [{"graph_session_id": GS1, "slug": "s"}])
    return Recording(app), info.agent_token


def test_auto_against_a_dual_era_server_stays_modern() -> None:
    app, token = server()
    client = McpClient(DirectTransport(app), URL, token)
    ticket = client.run_graph_session(GS1, "era-key-0001")
    assert ticket["status"] == "queued"
    assert client.era == "modern" and client.negotiated_version == "2026-07-28"
    assert app.methods == ["server/discover", "tools/call"]
    call = app.requests[-1]
    assert call.headers["mcp-method"] == "tools/call"
    assert call.headers["mcp-name"] == "run_graph_session"
    assert call.headers["mcp-protocol-version"] == "2026-07-28"
    meta = json.loads(call.body)["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert client.discover_result is not None
    assert "2026-07-28" in client.discover_result["supportedVersions"]


def test_auto_against_a_legacy_only_server_falls_back_to_initialize() -> None:
    app, token = server(["2025-11-25", "2025-06-18"])
    client = McpClient(DirectTransport(app), URL, token)
    assert len(client.list_tools()) == 4
    assert client.era == "legacy" and client.negotiated_version == "2025-11-25"
    assert app.methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


def test_auto_falls_back_when_discover_is_an_unknown_method_in_a_200() -> None:
    fake = FakeMcp()
    fake.session_id = None
    client = McpClient(DirectTransport(fake), fake.url, fake.token)
    assert client.call_tool("echo", {"a": 1}) == {"echo": {"a": 1}}
    assert client.era == "legacy"
    assert fake.methods[:2] == ["server/discover", "initialize"]


def test_the_era_is_cached_per_origin_for_clients_sharing_a_cache() -> None:
    app, token = server()
    cache = EraCache()
    McpClient(DirectTransport(app), URL, token, era_cache=cache).list_tools()
    second = McpClient(DirectTransport(app), URL, token, era_cache=cache)
    second.list_tools()
    assert app.methods == ["server/discover", "tools/list", "tools/list"]
    assert cache.get(URL) == "modern" and cache.get("HTTP://OSF.TEST/other") == "modern"


def test_clients_share_nothing_unless_given_one_cache() -> None:
    app, token = server()
    first = McpClient(DirectTransport(app), URL, token)
    first.list_tools()
    McpClient(DirectTransport(app), URL, token).list_tools()
    assert app.methods == ["server/discover", "tools/list", "server/discover", "tools/list"]
    assert first.era_cache.get(URL) == "modern"


def test_a_dict_given_as_the_cache_holds_the_eras() -> None:
    app, token = server()
    seen: dict[str, str] = {}
    McpClient(DirectTransport(app), URL, token, era_cache=seen).list_tools()
    assert seen == {"http://osf.test": "modern"}
    with pytest.raises(ValueError, match="an era is 'modern' or 'legacy'"):
        EraCache(seen).remember(URL, "ancient")


def test_a_stale_cached_era_is_probed_again() -> None:
    modern, token = server()
    cache = EraCache()
    McpClient(DirectTransport(modern), URL, token, era_cache=cache).list_tools()  # "modern"
    legacy, _ = server(["2025-11-25"])
    client = McpClient(DirectTransport(legacy), URL, era_cache=cache)
    assert len(client.list_tools()) == 4
    assert client.era == "legacy"
    assert legacy.methods[:3] == ["tools/list", "server/discover", "initialize"]
    assert cache.get(URL) == "legacy"
    cached_legacy = McpClient(DirectTransport(modern), URL, era_cache=cache)  # a dual-era server
    assert len(cached_legacy.list_tools()) == 4  # the dual-era server answers initialize


def test_a_stale_legacy_cache_against_a_modern_only_server() -> None:
    legacy, _ = server(["2025-11-25"])
    cache = EraCache()
    McpClient(DirectTransport(legacy), URL, era_cache=cache).list_tools()  # caches "legacy"
    modern, _ = server(["2026-07-28"])
    client = McpClient(DirectTransport(modern), URL, era_cache=cache)
    assert len(client.list_tools()) == 4 and client.era == "modern"


@pytest.mark.parametrize("pinned", ["2025-11-25", "2025-06-18"])
def test_a_pinned_legacy_revision_is_negotiated(pinned: str) -> None:
    app, token = server()
    client = McpClient(DirectTransport(app), URL, token, protocol=pinned)
    client.list_tools()
    assert client.era == "legacy" and client.negotiated_version == pinned
    assert app.methods[0] == "initialize"


def test_pinned_modern_against_a_legacy_only_server_is_a_clear_error() -> None:
    app, _ = server(["2025-11-25"])
    client = McpClient(DirectTransport(app), URL, protocol="2026-07-28")
    with pytest.raises(HttpStatusError) as err:
        client.list_tools()
    assert err.value.status == 400 and "2026-07-28" in str(err.value)


def test_pinned_legacy_against_a_modern_only_server_is_a_clear_error() -> None:
    app, _ = server(["2026-07-28"])
    client = McpClient(DirectTransport(app), URL, protocol="2025-11-25")
    with pytest.raises(HttpStatusError) as err:
        client.list_tools()
    assert err.value.status == 400 and "2026-07-28" in str(err.value)


def test_auto_against_a_server_of_no_era_reports_the_error() -> None:
    def broken(request: Request) -> Response:
        return Response(500, {"content-type": "text/plain"}, b"boom")

    with pytest.raises(HttpStatusError, match="500"):
        McpClient(DirectTransport(broken), URL).list_tools()


def test_unknown_protocol_is_refused() -> None:
    with pytest.raises(ValueError, match="2024-11-05"):
        McpClient(DirectTransport(server()[0]), URL, protocol="2024-11-05")


def test_missing_result_type_is_read_as_complete_but_bad_json_is_not() -> None:
    def handler(request: Request) -> Response:
        msg = json.loads(request.body)
        body = {"jsonrpc": "2.0", "id": msg["id"], "result": {"supportedVersions": ["2026-07-28"]}}
        if msg["method"] == "tools/list":
            body["result"] = {"tools": []}
        return Response(200, {"content-type": "application/json"}, json.dumps(body).encode())

    client = McpClient(DirectTransport(handler), URL)
    assert client.list_tools() == [] and client.era == "modern"
    with pytest.raises(ProtocolViolation):
        McpClient(
            DirectTransport(lambda r: Response(200, {"content-type": "text/plain"}, b"x")),
            "http://other.test/mcp",
            protocol="2026-07-28",
        ).list_tools()


def test_mcp_name_values_are_base64_when_not_plain() -> None:
    assert mcp_header_value("get_graph_run") == "get_graph_run"
    for value in ("工具", " padded ", "=?base64?x?=", "line\nbreak"):
        encoded = mcp_header_value(value)
        assert encoded.startswith("=?base64?") and encoded.endswith("?=")
        assert base64.b64decode(encoded[9:-2]).decode() == value


@pytest.mark.parametrize(
    ("status", "body", "modern"),
    [
        (400, {"error": {"code": -32020, "message": "m"}}, True),
        (400, {"error": {"code": -32022, "message": "m"}}, True),
        (400, {"error": {"code": -32602, "message": "m"}}, True),
        (404, {"error": {"code": -32601, "message": "m"}}, True),
        (200, {"error": {"code": -32601, "message": "m"}}, False),
        (400, {"error": {"code": -32600, "message": "m"}}, False),
        (400, {"error": "no session"}, False),
        (404, [], False),
    ],
)
def test_recognized_modern_errors(status: int, body: Any, modern: bool) -> None:
    assert is_modern_error(json_response(status, body)) is modern
    stream = f"event: message\ndata: {json.dumps(body)}\n\n".encode()
    assert (
        is_modern_error(Response(status, {"content-type": "text/event-stream"}, stream)) is modern
    )
    assert is_modern_error(Response(400, {"content-type": "application/json"}, b"no")) is False


@pytest.mark.parametrize(
    ("config", "settled"),
    [
        ({}, "2026-07-28"),
        ({"protocols": ("2025-11-25", "2025-06-18")}, "2025-11-25"),
        ({"protocols": ("2025-06-18",)}, "2025-06-18"),
        ({"protocol": "2025-06-18"}, "2025-06-18"),
    ],
)
def test_the_world_settles_its_agents_protocol_once(config: dict[str, Any], settled: str) -> None:
    from pytest_osfoundry.world import OsfWorld, WorldConfig

    world = OsfWorld(WorldConfig(**config))
    assert world.protocol == settled
    client = world.agent_client()
    client.list_tools()
    assert client.negotiated_version == settled
    pinned = world.make_agent(protocol="2025-11-25").client
    assert isinstance(pinned, McpClient)
    assert pinned.protocol == "2025-11-25"


def test_the_world_refuses_an_unknown_protocol() -> None:
    from pytest_osfoundry.world import OsfWorld, WorldConfig

    with pytest.raises(ValueError, match="protocol must be one of"):
        OsfWorld(WorldConfig(protocol="2024-11-05"))
    with pytest.raises(ValueError, match="2024-11-05"):
        OsfWorld(WorldConfig(protocols=("2024-11-05",)))


def test_a_modern_error_to_discover_still_means_a_modern_server() -> None:
    app, token = server()

    def no_discover(request: Request) -> Response:
        if json.loads(request.body).get("method") == "server/discover":
            error = {"code": -32601, "message": "Method not found"}
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode()
            return Response(404, {"content-type": "application/json"}, body)
        return app(request)

    client = McpClient(DirectTransport(no_discover), URL, token)
    assert len(client.list_tools()) == 4 and client.era == "modern"
