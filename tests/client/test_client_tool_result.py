"""The one decoder of tool results, shared by McpClient and the conformance suite."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_osfoundry.client._tool_result import ToolResult, decode_answer, read_tool_result


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (
            {"structuredContent": {"a": 1}, "content": _text('{"b":2}')},
            ToolResult(False, '{"b":2}', {"a": 1}, {"a": 1}),
        ),
        ({"content": _text('{"b":2}')}, ToolResult(False, '{"b":2}', None, {"b": 2})),
        ({"content": _text("[1, 2]")}, ToolResult(False, "[1, 2]", None, None)),
        ({"content": _text("not json")}, ToolResult(False, "not json", None, None)),
        (
            {"structuredContent": [1], "content": _text('{"b":2}')},
            ToolResult(False, '{"b":2}', [1], {"b": 2}),
        ),
        (
            {"isError": True, "content": _text('{"b":2}')},
            ToolResult(True, '{"b":2}', None, None),
        ),
        ({"isError": "yes", "content": []}, ToolResult(False, None, None, None)),
        ({"content": [{"type": "text", "text": 5}]}, ToolResult(False, None, None, None)),
        ("a string", ToolResult(False, None, None, None)),
        (None, ToolResult(False, None, None, None)),
    ],
)
def test_read_tool_result(result: object, expected: ToolResult) -> None:
    assert read_tool_result(result) == expected


def test_decode_answer_kinds() -> None:
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"content": _text('{"a":1}')}}
    reply = decode_answer(200, {}, ok, b"raw")
    assert (reply.kind, reply.structured, reply.raw, reply.refused) == (
        "result",
        {"a": 1},
        b"raw",
        False,
    )
    error = {"jsonrpc": "2.0", "id": 1, "result": {"isError": True, "content": _text("nope")}}
    reply = decode_answer(200, {}, error)
    assert (reply.kind, reply.message, reply.refused) == ("tool_error", "nope", True)
    assert reply.describe() == "an isError result 'nope'"
    rpc = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no such method"}}
    reply = decode_answer(200, {}, rpc)
    assert (reply.kind, reply.code, reply.message) == ("rpc_error", -32601, "no such method")
    reply = decode_answer(403, {"www-authenticate": "Bearer"}, rpc)
    assert (reply.kind, reply.code, reply.headers) == (
        "http_error",
        -32601,
        {"www-authenticate": "Bearer"},
    )
    assert decode_answer(401, {}, None).describe() == "HTTP 401"
    junk: object
    for junk in (None, [], {"jsonrpc": "2.0", "id": 1}, "text"):
        assert decode_answer(200, {}, junk).kind == "malformed"
    odd = {"error": {"code": "x", "message": 7}}
    assert (decode_answer(200, {}, odd).code, decode_answer(200, {}, odd).message) == (None, None)
