"""The exception hierarchy and what each exception promises to expose."""

from __future__ import annotations

import pytest

from pytest_osfoundry.client import (
    HttpStatusError,
    JsonRpcError,
    OsfClientError,
    ProtocolViolation,
    ReplyLost,
    ToolError,
)


@pytest.mark.parametrize(
    "error",
    [
        ReplyLost("no reply"),
        HttpStatusError(500, {}, b""),
        JsonRpcError(-32601, "Method not found"),
        ToolError("Graph run not found or access removed"),
        ProtocolViolation("bad"),
    ],
)
def test_every_error_is_an_osf_client_error(error: Exception) -> None:
    assert isinstance(error, OsfClientError)


def test_http_status_error_exposes_status_headers_body_and_challenge() -> None:
    challenge = 'Bearer error="insufficient_scope", scope="osfoundry:run"'
    err = HttpStatusError(
        403,
        {"WWW-Authenticate": challenge, "Authorization": "Bearer secret-xyz"},
        b'{"error": "insufficient_scope"}',
        url="https://osf.test/mcp",
    )
    assert err.status == 403
    assert err.www_authenticate == challenge
    assert err.json() == {"error": "insufficient_scope"}
    assert str(err) == 'HTTP 403 from https://osf.test/mcp: {"error": "insufficient_scope"}'
    assert "secret-xyz" not in str(err) + repr(err)


def test_http_status_error_without_challenge_and_long_body() -> None:
    err = HttpStatusError(500, {}, b"y" * 1000, body_text="z" * 1000)
    assert err.www_authenticate is None
    assert str(err) == "HTTP 500: " + "z" * 200 + "..."


def test_json_rpc_and_tool_errors() -> None:
    rpc = JsonRpcError(-32602, "Unknown tool", {"tool": "x"})
    assert (rpc.code, rpc.message, rpc.data) == (-32602, "Unknown tool", {"tool": "x"})
    assert str(rpc) == "JSON-RPC error -32602: Unknown tool"
    tool = ToolError("Project not found or access removed", {"isError": True})
    assert str(tool) == tool.message == "Project not found or access removed"
    assert tool.result == {"isError": True}
