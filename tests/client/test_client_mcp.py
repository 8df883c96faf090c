"""McpClient against a fake Streamable HTTP endpoint, through both transports."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import pytest

from pytest_osfoundry.client import (
    HttpStatusError,
    HttpTransport,
    JsonRpcError,
    McpClient,
    ProtocolViolation,
    ReplyLost,
    ToolError,
    Transport,
)
from pytest_osfoundry.client._mcp_client import CLIENT_NAME
from pytest_osfoundry.http import Handler, Request, Response, json_response

Via = Callable[[Handler], Transport]
LEGACY = "2025-11-25"


def client_for(fake: Any, via: Via, **kwargs: Any) -> McpClient:
    """A client of the legacy fake (pinned to 2025-11-25 unless told otherwise)."""
    token = kwargs.pop("token", fake.token)
    kwargs.setdefault("protocol", "2025-11-25")
    return McpClient(via(fake), fake.url, token, **kwargs)


def scripted(*replies: Response) -> Handler:
    """A handler answering initialize normally, then the given replies in order."""
    queue = list(replies)

    def handler(request: Request) -> Response:
        msg = json.loads(request.body)
        if msg.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}
            return json_response(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result})
        if "id" not in msg:
            return Response(202)
        return queue.pop(0)

    return handler


def sse(text: str) -> Response:
    return Response(200, {"content-type": "text/event-stream"}, text.encode())


# -- handshake, headers, session -------------------------------------------------


def test_initialize_handshake_headers_and_session(fake: Any, via: Via) -> None:
    client = client_for(fake, via)
    result = client.initialize()
    assert result["protocolVersion"] == "2025-11-25"
    assert client.initialized and client.session_id == "sess-0001"
    assert client.negotiated_version == "2025-11-25"
    init, ack = fake.requests
    assert init.method == "POST" and init.path == "/mcp"
    assert init.header("content-type") == "application/json"
    assert init.header("accept") == "application/json, text/event-stream"
    assert init.header("authorization") == f"Bearer {fake.token}"
    assert init.header("mcp-protocol-version") is None
    assert init.header("mcp-session-id") is None
    params = json.loads(init.body)["params"]
    assert params["protocolVersion"] == "2025-11-25"
    assert params["capabilities"] == {}
    assert params["clientInfo"]["name"] == CLIENT_NAME
    assert json.loads(ack.body) == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert ack.header("mcp-session-id") == "sess-0001"
    assert ack.header("mcp-protocol-version") == "2025-11-25"
    client.ping()
    assert fake.requests[-1].header("mcp-session-id") == "sess-0001"
    assert fake.requests[-1].header("mcp-protocol-version") == "2025-11-25"


def test_auto_initialize_runs_once(fake: Any, via: Via) -> None:
    client = client_for(fake, via)
    assert [t["name"] for t in client.list_tools()] == ["echo", "get_graph_run"]
    client.ping()
    assert fake.methods == ["initialize", "notifications/initialized", "tools/list", "ping"]
    ids = [m.get("id") for m in fake.messages]
    assert ids == [1, None, 2, 3]


def test_no_auto_initialize_sends_no_version_header(fake: Any, via: Via) -> None:
    client = client_for(fake, via, auto_initialize=False)
    client.list_tools()
    assert fake.methods == ["tools/list"]
    assert fake.requests[0].header("mcp-protocol-version") is None
    assert fake.requests[0].header("mcp-session-id") is None


def test_older_supported_version_is_echoed(fake: Any, via: Via) -> None:
    fake.version = "2025-06-18"
    client = client_for(fake, via)
    client.ping()
    assert client.negotiated_version == "2025-06-18"
    assert fake.requests[-1].header("mcp-protocol-version") == "2025-06-18"


def test_unsupported_version_is_a_violation(fake: Any, via: Via) -> None:
    fake.version = "2024-11-05"
    client = client_for(fake, via)
    with pytest.raises(ProtocolViolation, match="2024-11-05"):
        client.ping()
    assert not client.initialized
    assert fake.methods == ["initialize"]


def test_no_session_id_means_no_header(fake: Any, via: Via) -> None:
    fake.session_id = None
    client = client_for(fake, via)
    client.ping()
    assert client.session_id is None
    assert all(r.header("mcp-session-id") is None for r in fake.requests)


def test_reinitialize_starts_a_fresh_session(fake: Any, via: Via) -> None:
    client = client_for(fake, via)
    client.initialize()
    fake.session_id = "sess-0002"
    client.initialize()
    second_init = fake.requests[2]
    assert json.loads(second_init.body)["method"] == "initialize"
    assert second_init.header("mcp-session-id") is None
    assert second_init.header("mcp-protocol-version") is None
    client.ping()
    assert fake.requests[-1].header("mcp-session-id") == "sess-0002"


def test_no_token_sends_no_authorization(fake: Any, via: Via) -> None:
    client = client_for(fake, via, token=None)
    client.list_tools()
    assert all(r.header("authorization") is None for r in fake.requests)
    assert not client.has_token


@pytest.mark.parametrize("status", [200, 204])
def test_initialized_ack_tolerates_200_and_204(fake: Any, via: Via, status: int) -> None:
    fake.notify_status = status
    client = client_for(fake, via)
    client.initialize()
    assert client.initialized


def test_initialized_ack_error_status_raises(fake: Any, via: Via) -> None:
    fake.notify_status = 500
    client = client_for(fake, via)
    with pytest.raises(HttpStatusError) as info:
        client.initialize()
    assert info.value.status == 500
    assert not client.initialized


def test_initialized_ack_odd_2xx_is_a_violation(fake: Any, via: Via) -> None:
    fake.notify_status = 201
    with pytest.raises(ProtocolViolation, match="201"):
        client_for(fake, via).initialize()


def test_notify_returns_the_reply(fake: Any, via: Via) -> None:
    client = client_for(fake, via)
    reply = client.notify("notifications/cancelled", {"requestId": 9})
    assert reply.status == 202 and reply.body == b""
    assert fake.messages[-1] == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 9},
    }
    assert fake.methods[:2] == ["initialize", "notifications/initialized"]


# -- answers as JSON and as event streams -------------------------------------------


@pytest.mark.parametrize("prelude", [False, True])
def test_sse_answers(fake: Any, via: Via, prelude: bool) -> None:
    fake.sse = True
    fake.sse_prelude = prelude
    client = client_for(fake, via)
    assert client.call_tool("echo", {"x": 1}) == {"echo": {"x": 1}}
    assert client.session_id == "sess-0001"


def test_sse_multiline_data_crlf_priming_and_other_event_types(via: Via) -> None:
    response = {"jsonrpc": "2.0", "id": 2, "result": {"ok": True}}
    text = json.dumps(response, indent=1)
    data_lines = "".join(f"data: {line}\r\n" for line in text.split("\n"))
    stream = (
        "id: prime\r\ndata:\r\n\r\n"  # priming event: empty data, not dispatched
        ": a comment\r\n\r\n"
        'event: endpoint\r\ndata: {"jsonrpc":"2.0","id":2,"result":{"ok":false}}\r\n\r\n'
        'data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\r\n\r\n'
        f"event: message\r\n{data_lines}\r\n"
    )
    client = McpClient(via(scripted(sse(stream))), "https://osf.test/mcp", protocol=LEGACY)
    assert client.rpc("tools/list") == {"ok": True}


def test_sse_without_response_is_a_violation(via: Via) -> None:
    stream = 'data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n'
    client = McpClient(via(scripted(sse(stream))), "https://osf.test/mcp", protocol=LEGACY)
    with pytest.raises(ProtocolViolation, match="without the response to request 2"):
        client.ping()


def test_sse_unterminated_last_event_does_not_count(via: Via) -> None:
    stream = 'data: {"jsonrpc":"2.0","id":2,"result":{}}\n'
    client = McpClient(via(scripted(sse(stream))), "https://osf.test/mcp", protocol=LEGACY)
    with pytest.raises(ProtocolViolation, match="blank line"):
        client.ping()


def test_sse_response_to_another_id_is_not_taken(via: Via) -> None:
    stream = 'data: {"jsonrpc":"2.0","id":99,"result":{}}\n\n'
    client = McpClient(via(scripted(sse(stream))), "https://osf.test/mcp", protocol=LEGACY)
    with pytest.raises(ProtocolViolation, match="id 99"):
        client.ping()


def test_sse_bad_json_data_is_a_violation(via: Via) -> None:
    client = McpClient(
        via(scripted(sse("data: {nope\n\n"))), "https://osf.test/mcp", protocol=LEGACY
    )
    with pytest.raises(ProtocolViolation, match="not valid JSON"):
        client.ping()


def test_sse_error_response(via: Via) -> None:
    stream = 'data: {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope"}}\n\n'
    client = McpClient(via(scripted(sse(stream))), "https://osf.test/mcp", protocol=LEGACY)
    with pytest.raises(JsonRpcError) as info:
        client.rpc("bogus/method")
    assert info.value.code == -32601


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (Response(200, {"content-type": "application/json"}, b"{not json"), "not valid JSON"),
        (json_response(200, {"jsonrpc": "2.0", "id": 7, "result": {}}), "does not match"),
        (json_response(200, {"jsonrpc": "2.0", "id": True, "result": {}}), "does not match"),
        (json_response(200, {"id": 2, "result": {}}), "jsonrpc"),
        (json_response(200, {"jsonrpc": "2.0", "id": 2}), "neither result nor error"),
        (json_response(200, [1, 2]), "JSON list"),
        (
            json_response(200, {"jsonrpc": "2.0", "id": 2, "result": {}, "error": {}}),
            "both result and error",
        ),
        (
            json_response(200, {"jsonrpc": "2.0", "id": 2, "error": {"code": "x"}}),
            "malformed error",
        ),
        (Response(200, {"content-type": "text/html"}, b"<html>"), "text/html"),
        (Response(202), "202 Accepted"),
    ],
)
def test_malformed_answers_are_violations(via: Via, reply: Response, match: str) -> None:
    client = McpClient(via(scripted(reply)), "https://osf.test/mcp", protocol=LEGACY)
    with pytest.raises(ProtocolViolation, match=match):
        client.ping()


def test_error_with_null_id_is_still_the_answer(via: Via) -> None:
    reply = json_response(
        200, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    )
    client = McpClient(via(scripted(reply)), "https://osf.test/mcp", protocol=LEGACY)
    with pytest.raises(JsonRpcError) as info:
        client.ping()
    assert info.value.code == -32700


# -- results and errors -------------------------------------------------------------


def test_unknown_method_raises_json_rpc_error(fake: Any, via: Via) -> None:
    client = client_for(fake, via)
    with pytest.raises(JsonRpcError) as info:
        client.rpc("no/such/method")
    assert info.value.code == -32601
    assert info.value.message == "Method not found"
    assert "-32601" in str(info.value)


def test_unknown_tool_raises_json_rpc_error(fake: Any, via: Via) -> None:
    with pytest.raises(JsonRpcError) as info:
        client_for(fake, via).call_tool("nope", {})
    assert info.value.code == -32602


def test_is_error_raises_tool_error_with_message(fake: Any, via: Via) -> None:
    client = client_for(fake, via)
    with pytest.raises(ToolError) as info:
        client.get_graph_run("00000000-0000-4000-8000-000000000000")
    assert info.value.message == "Graph run not found or access removed"
    assert info.value.result["isError"] is True


def test_is_error_without_text_is_a_violation(fake: Any, via: Via) -> None:
    fake.tools["echo"] = lambda args: {"content": [], "isError": True}
    with pytest.raises(ProtocolViolation, match="isError"):
        client_for(fake, via).call_tool("echo", {})


def test_401_exposes_the_challenge_without_the_token(fake: Any, via: Via) -> None:
    fake.token = "the-right-one-123456"
    client = McpClient(via(fake), fake.url, "tok-WRONG-0123456789", protocol=LEGACY)
    with pytest.raises(HttpStatusError) as info:
        client.call_tool("echo", {})
    err = info.value
    assert err.status == 401
    assert err.www_authenticate is not None
    assert err.www_authenticate.startswith("Bearer resource_metadata=")
    assert "tok-WRONG-0123456789" not in str(err) + repr(err)
    assert "401" in str(err)


def test_call_tool_result_fallbacks(fake: Any, via: Via) -> None:
    fake.tools["text_json"] = lambda args: {"content": [{"type": "text", "text": '{"a": 1}'}]}
    fake.tools["text_plain"] = lambda args: {"content": [{"type": "text", "text": "hello"}]}
    fake.tools["bad_structured"] = lambda args: {"content": [], "structuredContent": [1]}
    client = client_for(fake, via)
    assert client.call_tool("text_json", {}) == {"a": 1}
    assert client.call_tool("text_plain", {}) == {"content": [{"type": "text", "text": "hello"}]}
    with pytest.raises(ProtocolViolation, match="structuredContent"):
        client.call_tool("bad_structured", {})


def test_call_tool_raw_returns_exact_bytes(fake: Any, via: Via) -> None:
    client = client_for(fake, via)
    reply = client.call_tool_raw("echo", {"k": "v"})
    assert reply.status == 200
    message = json.loads(reply.body)
    assert message["id"] == client.last_id
    assert message["result"]["structuredContent"] == {"echo": {"k": "v"}}


def test_convenience_methods_send_the_right_arguments(fake: Any, via: Via) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def recorder(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def tool(args: dict[str, Any]) -> dict[str, Any]:
            seen.append((name, args))
            result: dict[str, Any] = fake.ok({"tool": name})
            return result

        return tool

    for name in ("run_graph_session", "get_graph_run", "cancel_graph_run", "list_graph_sessions"):
        fake.tools[name] = recorder(name)
    client = client_for(fake, via)
    assert client.run_graph_session("gs_1", "key-12345678") == {"tool": "run_graph_session"}
    client.run_graph_session("gs_1", "key-12345678", {"n": 2})
    client.get_graph_run("c1")
    client.cancel_graph_run("c2")
    client.list_graph_sessions("p1")
    client.list_graph_sessions("p1", limit=5)
    assert seen == [
        ("run_graph_session", {"graph_session_id": "gs_1", "idempotency_key": "key-12345678"}),
        (
            "run_graph_session",
            {"graph_session_id": "gs_1", "idempotency_key": "key-12345678", "arguments": {"n": 2}},
        ),
        ("get_graph_run", {"command_id": "c1"}),
        ("cancel_graph_run", {"command_id": "c2"}),
        ("list_graph_sessions", {"project_id": "p1"}),
        ("list_graph_sessions", {"project_id": "p1", "limit": 5}),
    ]


def test_list_tools_follows_cursors(via: Via) -> None:
    def page(req_id: int, names: list[str], cursor: str | None) -> Response:
        result: dict[str, Any] = {"tools": [{"name": n} for n in names]}
        if cursor is not None:
            result["nextCursor"] = cursor
        return json_response(200, {"jsonrpc": "2.0", "id": req_id, "result": result})

    transport = via(scripted(page(2, ["a"], "c1"), page(3, ["b"], None)))
    assert [
        t["name"]
        for t in McpClient(transport, "https://osf.test/mcp", protocol=LEGACY).list_tools()
    ] == [
        "a",
        "b",
    ]


def test_list_tools_repeated_cursor_is_a_violation(via: Via) -> None:
    def page(req_id: int) -> Response:
        result = {"tools": [], "nextCursor": "same"}
        return json_response(200, {"jsonrpc": "2.0", "id": req_id, "result": result})

    client = McpClient(via(scripted(page(2), page(3))), "https://osf.test/mcp", protocol=LEGACY)
    with pytest.raises(ProtocolViolation, match="nextCursor"):
        client.list_tools()


# -- secrets -------------------------------------------------------------------------


def test_repr_and_errors_never_show_the_token(fake: Any, via: Via) -> None:
    def echoing(request: Request) -> Response:
        msg = json.loads(request.body)
        auth = request.header("authorization") or ""
        return json_response(
            200, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -1, "message": auth}}
        )

    client = McpClient(via(echoing), fake.url, fake.token, protocol=LEGACY, auto_initialize=False)
    assert fake.token not in repr(client)
    assert "***" in repr(client)
    with pytest.raises(JsonRpcError) as info:
        client.ping()
    assert fake.token not in str(info.value) + info.value.message
    assert "Bearer ***" in info.value.message


def test_http_error_body_echoing_the_token_is_masked(fake: Any, via: Via) -> None:
    def echoing(request: Request) -> Response:
        return Response(500, {}, (request.header("authorization") or "").encode())

    client = McpClient(via(echoing), fake.url, fake.token, protocol=LEGACY, auto_initialize=False)
    with pytest.raises(HttpStatusError) as info:
        client.ping()
    assert fake.token not in str(info.value)


# -- transport failures -----------------------------------------------------------------


def test_lost_reply_surfaces_as_reply_lost(fake: Any) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    with HttpTransport(timeout=5.0) as transport:
        client = McpClient(transport, url, fake.token, protocol=LEGACY)
        with pytest.raises(ReplyLost) as info:
            client.ping()
    assert url in str(info.value)
    assert fake.token not in str(info.value)
    assert not client.initialized
