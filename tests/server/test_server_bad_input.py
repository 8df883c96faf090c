"""Bad input never gets a 500, always a JSON (or empty 202/204) answer, and changes nothing.

Named cases first, then hypothesis over arbitrary methods, paths, headers and bodies,
arbitrary JSON for tool arguments and relay bodies.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pytest_osfoundry.http import Response
from pytest_osfoundry.server import _tools as tooldefs
from tests.server.osf_server_kit import GS1, INVENTED, MCP, RELAY, RUN_NOT_FOUND, Srv, session

MIB = 1024 * 1024


def assert_clean(reply: Response) -> Any:
    """A refusal or answer a client can read: below 500, and JSON unless empty by design."""
    assert reply.status < 500, (reply.status, reply.body[:200])
    if reply.status in (202, 204):
        assert reply.body == b""
        return None
    assert reply.headers.get("content-type", "").startswith(
        ("application/json", "text/event-stream")
    )
    return json.loads(reply.body)


def rpc_error(reply: Response, status: int, code: int) -> str:
    payload = assert_clean(reply)
    assert reply.status == status, (reply.status, payload)
    assert payload["jsonrpc"] == "2.0"
    assert payload["error"]["code"] == code
    message: str = payload["error"]["message"]
    return message


@pytest.fixture
def busy(srv: Srv) -> Srv:
    """A server with one run in each interesting state (so a stray change would show)."""
    queued = srv.queue(key="busy-queued")["command_id"]
    running = srv.queue(key="busy-running")["command_id"]
    done = srv.queue(key="busy-done")["command_id"]
    srv.start(running)
    srv.start(done)
    srv.complete(done, {"status": "completed", "result": [1, 2]})
    srv.ids = {"queued": queued, "running": running, "done": done}  # type: ignore[attr-defined]
    return srv


# ---------------------------------------------------------------------- MCP envelope
@pytest.mark.parametrize(
    ("body", "status", "code", "message"),
    [
        (b"{", 400, -32700, "Parse error: the body is not JSON"),
        (b"", 400, -32700, "Parse error: the body is not JSON"),
        (b"\xff\xfe\x00garbage", 400, -32700, "Parse error: the body is not JSON"),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"ping","x":NaN}',
            400,
            -32700,
            "Parse error: NaN is not JSON",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"ping","x":-Infinity}',
            400,
            -32700,
            "Parse error: -Infinity is not JSON",
        ),
        (b"[" * 200 + b"]" * 200, 400, -32700, "Parse error: JSON nested deeper than 128 levels"),
        (b"[" * 100_000, 400, -32700, "Parse error: JSON nested deeper than 128 levels"),
        (
            b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
            400,
            -32600,
            "Invalid Request: JSON-RPC batches are not supported",
        ),
        (b'"ping"', 400, -32600, "Invalid Request: expected a JSON-RPC 2.0 object"),
        (b"42", 400, -32600, "Invalid Request: expected a JSON-RPC 2.0 object"),
        (b"null", 400, -32600, "Invalid Request: expected a JSON-RPC 2.0 object"),
        (
            b'{"id":1,"method":"ping"}',
            400,
            -32600,
            "Invalid Request: expected a JSON-RPC 2.0 object",
        ),
        (
            b'{"jsonrpc":"1.0","id":1,"method":"ping"}',
            400,
            -32600,
            "Invalid Request: expected a JSON-RPC 2.0 object",
        ),
        (
            b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
            400,
            -32600,
            "Invalid Request: id must be a string or an integer",
        ),
        (
            b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
            400,
            -32600,
            "Invalid Request: id must be a string or an integer",
        ),
        (
            b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
            400,
            -32600,
            "Invalid Request: id must be a string or an integer",
        ),
        (
            b'{"jsonrpc":"2.0","id":{},"method":"ping"}',
            400,
            -32600,
            "Invalid Request: id must be a string or an integer",
        ),
        (b'{"jsonrpc":"2.0","id":1}', 400, -32600, "Invalid Request: no method"),
        (
            b'{"jsonrpc":"2.0","id":1,"method":7}',
            400,
            -32600,
            "Invalid Request: method must be a string",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}',
            200,
            -32602,
            "Invalid params: params must be an object",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}',
            200,
            -32602,
            "Invalid params: params must be an object",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}',
            200,
            -32602,
            "Invalid params: name must be a string",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["x"]}}',
            200,
            -32602,
            "Invalid params: name must be a string",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_graph_run",'
            b'"arguments":"x"}}',
            200,
            -32602,
            "Invalid params: arguments must be an object",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_graph_run",'
            b'"arguments":[1]}}',
            200,
            -32602,
            "Invalid params: arguments must be an object",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}',
            200,
            -32602,
            "Unknown tool: 'nope'",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"shutdown"}',
            200,
            -32601,
            "Method not found: shutdown",
        ),
        (b'{"jsonrpc":"2.0","id":1,"method":""}', 200, -32601, "Method not found: "),
    ],
)
def test_bad_mcp_envelopes(busy: Srv, body: bytes, status: int, code: int, message: str) -> None:
    before = busy.snapshot()
    reply = busy.rpc_raw(body, busy.agent)
    assert rpc_error(reply, status, code) == message
    assert busy.snapshot() == before


def test_bad_json_inside_tool_arguments_queues_nothing(busy: Srv) -> None:
    before = busy.snapshot()
    deep = "[" * 300 + "]" * 300
    for args in (
        f'{{"graph_session_id":"{GS1}","idempotency_key":"deep-key-1","arguments":{{"a":{deep}}}}}',
        f'{{"graph_session_id":"{GS1}","idempotency_key":"nan-key-01","arguments":{{"a":NaN}}}}',
    ):
        body = (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":'
            f'"run_graph_session","arguments":{args}}}}}'
        ).encode()
        rpc_error(busy.rpc_raw(body, busy.agent), 400, -32700)
    assert busy.snapshot() == before


def test_deep_but_allowed_arguments_round_trip(srv: Srv) -> None:
    deep: Any = "leaf"
    for _ in range(60):  # 120 levels, plus the JSON-RPC envelope's 5: within 128
        deep = {"d": [deep]}
    ticket = srv.queue(key="deep-ok-01", arguments={"x": deep})
    commands = srv.sync()["commands"]
    assert commands[0]["command_id"] == ticket["command_id"]
    assert commands[0]["arguments"] == {"x": deep}


@pytest.mark.parametrize(
    "tool", ["run_graph_session", "list_graph_sessions", "get_graph_run", "cancel_graph_run"]
)
@pytest.mark.parametrize(
    "args",
    [
        {},
        {"command_id": 1},
        {"project_id": None},
        {"graph_session_id": []},
        {"idempotency_key": {"a": 1}},
        {"limit": 1e9},
        {"": ""},
        {"command_id": INVENTED, "x": 1},
    ],
)
def test_wrong_argument_types_are_refused(busy: Srv, tool: str, args: dict[str, Any]) -> None:
    before = busy.snapshot()
    result = busy.result(tool, args)
    assert result.get("isError") is True
    assert result["content"][0]["text"].startswith(f"Invalid arguments for {tool}: ")
    assert busy.snapshot() == before


@pytest.mark.parametrize(
    "command_id",
    [
        "",
        " ",
        "../../etc/passwd",
        "0" * 10_000,
        "💥",
        INVENTED.upper(),
        INVENTED + "\n",
        "{" + INVENTED + "}",
        "%00",
        "null",
    ],
)
def test_odd_command_ids_on_mcp(busy: Srv, command_id: str) -> None:
    before = busy.snapshot()
    for tool in ("get_graph_run", "cancel_graph_run"):
        assert busy.err(tool, {"command_id": command_id}) == RUN_NOT_FOUND
    assert busy.snapshot() == before


@pytest.mark.parametrize(
    "segment",
    ["not-a-uuid", "%2F..%2F", "..", "%F0%9F%92%A5", "x" * 5000, INVENTED.upper(), "%00"],
)
@pytest.mark.parametrize("action", ["start", "control", "complete"])
def test_odd_command_ids_on_relay(busy: Srv, segment: str, action: str) -> None:
    before = busy.snapshot()
    method = "GET" if action == "control" else "POST"
    body = {"start": {"execution_id": "e"}, "complete": {"status": "failed"}}.get(action)
    reply = busy.relay(method, f"/commands/{segment}/{action}", body)
    assert reply.status == 404
    assert isinstance(assert_clean(reply)["error"], str)
    assert busy.snapshot() == before


# ---------------------------------------------------------------------- HTTP level
@pytest.mark.parametrize("path", [MCP, f"{RELAY}/sync", "/nowhere"])
def test_bodies_over_1_mib_are_413(busy: Srv, path: str) -> None:
    before = busy.snapshot()
    reply = busy.http("POST", path, b" " * (MIB + 1), {"authorization": f"Bearer {busy.agent}"})
    assert reply.status == 413
    assert assert_clean(reply) == {"error": "request body over 1048576 bytes"}
    assert busy.snapshot() == before


def test_a_body_of_exactly_1_mib_is_read(busy: Srv) -> None:
    message = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    reply = busy.rpc_raw(message + b" " * (MIB - len(message)))
    assert reply.status == 200


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/", 404),
        ("POST", "/mcp/extra", 404),
        ("GET", "/external-assistants", 404),
        ("GET", RELAY, 404),
        ("POST", f"{RELAY}/commands", 404),
        ("POST", f"{RELAY}/commands/{INVENTED}", 404),
        ("POST", f"{RELAY}/commands/{INVENTED}/explode", 404),
        ("POST", f"{RELAY}/commands/{INVENTED}/start/again", 404),
        ("GET", f"{RELAY}/sync", 405),
        ("PUT", f"{RELAY}/sync", 405),
        ("GET", f"{RELAY}/commands/{INVENTED}/start", 405),
        ("DELETE", f"{RELAY}/commands/{INVENTED}/complete", 405),
        ("POST", f"{RELAY}/commands/{INVENTED}/control", 405),
        ("BREW", MCP, 405),
        ("TRACE", "/.well-known/oauth-protected-resource", 405),
    ],
)
def test_unknown_paths_and_methods(busy: Srv, method: str, path: str, status: int) -> None:
    before = busy.snapshot()
    reply = busy.http(method, path, b"{}", {"authorization": f"Bearer {busy.desktop}"})
    assert reply.status == status
    assert isinstance(assert_clean(reply)["error"], str)
    if status == 405:
        assert reply.headers["allow"]
    assert busy.snapshot() == before


def test_query_token_is_refused_everywhere(busy: Srv) -> None:
    before = busy.snapshot()
    for path in (MCP, f"{RELAY}/sync", "/.well-known/oauth-protected-resource", "/x"):
        for query in (
            f"access_token={busy.agent}",
            f"a=1&access_token={busy.desktop}",
            "access_token",
        ):
            reply = busy.http("POST", path, b"{}", query=query)
            assert reply.status == 400
            assert "query string" in assert_clean(reply)["error"]
    assert busy.snapshot() == before


# ---------------------------------------------------------------------- relay bodies
@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"",
        b"[]",
        b'"x"',
        b"null",
        b'{"project_id": NaN, "sessions": []}',
        b"[" * 500 + b"]" * 500,
        {"sessions": []},
        {"project_id": 5, "sessions": []},
        {"project_id": None, "sessions": []},
        "PID-only",
        {"project_id": "PID", "sessions": "all"},
        {"project_id": "PID", "sessions": {}},
        {"project_id": "PID", "sessions": None},
        {"project_id": "PID", "sessions": [1]},
        {"project_id": "PID", "sessions": [{"slug": "s"}]},
        {"project_id": "PID", "sessions": [{"graph_session_id": "", "slug": "s"}]},
        {"project_id": "PID", "sessions": [{"graph_session_id": 5, "slug": "s"}]},
        {"project_id": "PID", "sessions": [{"graph_session_id": GS1}]},
        {"project_id": "PID", "sessions": [{"graph_session_id": GS1, "slug": 1}]},
        {"project_id": "PID", "sessions": [{"graph_session_id": GS1, "slug": "s", "name": 1}]},
        {
            "project_id": "PID",
            "sessions": [{"graph_session_id": GS1, "slug": "s", "version": True}],
        },
        {"project_id": "PID", "sessions": [{"graph_session_id": GS1, "slug": "s", "version": [1]}]},
        {"project_id": "PID", "sessions": [session(GS1), "x"]},
    ],
)
def test_bad_sync_bodies(busy: Srv, body: Any) -> None:
    if body == "PID-only":
        body = {"project_id": busy.pid}  # "sessions" is required: a missing list clears nothing
    elif isinstance(body, dict) and body.get("project_id") == "PID":
        body = {**body, "project_id": busy.pid}
    before = busy.snapshot()
    reply = busy.relay("POST", "/sync", body)
    assert reply.status == 400, reply.body
    assert isinstance(assert_clean(reply)["error"], str)
    assert busy.snapshot() == before


@pytest.mark.parametrize(
    "body",
    [
        b"nope",
        b"[]",
        b"1",
        b'{"execution_id": Infinity}',
        {"execution_id": None},
        {"execution_id": ["e"]},
    ],
)
def test_bad_start_bodies(busy: Srv, body: Any) -> None:
    before = busy.snapshot()
    reply = busy.relay("POST", f"/commands/{busy.ids['queued']}/start", body)  # type: ignore[attr-defined]
    assert reply.status == 400
    assert isinstance(assert_clean(reply)["error"], str)
    assert busy.snapshot() == before


@pytest.mark.parametrize(
    "body",
    [
        b"nope",
        b'{"status": "completed", "result": NaN}',
        b"[" * 129 + b"]" * 129,
        {"status": None},
        {"status": "completed", "result_truncated": 1},
        {"status": "completed", "reported_cost": "1"},
    ],
)
def test_bad_complete_bodies(busy: Srv, body: Any) -> None:
    before = busy.snapshot()
    reply = busy.relay("POST", f"/commands/{busy.ids['running']}/complete", body)  # type: ignore[attr-defined]
    assert reply.status == 400
    assert isinstance(assert_clean(reply)["error"], str)
    assert busy.snapshot() == before


# ---------------------------------------------------------------------- hypothesis
HYPO = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=10), children, max_size=4),
    ),
    max_leaves=12,
)
ARG_NAMES = [
    "graph_session_id",
    "idempotency_key",
    "arguments",
    "project_id",
    "limit",
    "command_id",
]
near_args = st.dictionaries(
    st.one_of(st.sampled_from(ARG_NAMES), st.text(max_size=8)),
    st.one_of(
        json_values,
        st.sampled_from([GS1, "k" * 8, "k" * 128, "k" * 129, 1, 50, 51, 5.0, True, {}, INVENTED]),
    ),
    max_size=4,
)
keys = st.one_of(
    st.sampled_from(["k" * 8, "hypo-queued", "k" * 128, "k" * 129, "short"]), st.text(max_size=130)
)
run_args = st.fixed_dictionaries(
    {"graph_session_id": st.one_of(st.just(GS1), st.text(max_size=5)), "idempotency_key": keys},
    optional={
        "arguments": st.one_of(
            st.dictionaries(st.text(max_size=5), json_values, max_size=3), json_values
        ),
        "extra": json_values,
    },
)
list_args = st.fixed_dictionaries(
    {"project_id": st.one_of(st.just("@pid"), json_values)},
    optional={"limit": st.one_of(st.integers(min_value=-2, max_value=60), json_values)},
)
cid_args = st.fixed_dictionaries(
    {"command_id": st.one_of(st.sampled_from(["@queued", "@running", INVENTED]), json_values)},
    optional={"x": json_values},
)
tool_calls = st.one_of(
    st.tuples(st.just("run_graph_session"), run_args),
    st.tuples(st.just("list_graph_sessions"), list_args),
    st.tuples(st.sampled_from(["get_graph_run", "cancel_graph_run"]), cid_args),
    st.tuples(
        st.sampled_from([*tooldefs.TOOL_NAMES, "nope", "", "Get_Graph_Run"]),
        st.one_of(near_args, json_values),
    ),
)
TOKEN_ROLES = ["agent", "other", "reader", "desktop", "stranger", None, "garbage"]


def fresh() -> tuple[Srv, dict[str, str]]:
    """A new server with one queued and one running run (ids by role)."""
    s = Srv()
    s.server.state.share(s.pid, [session(GS1)])
    cid = s.queue(key="hypo-queued")["command_id"]
    running = s.queue(key="hypo-running")["command_id"]
    s.start(running)
    return s, {"queued": cid, "running": running}


def token_for(s: Srv, role: str | None) -> str | None:
    if role is None:
        return None
    if role == "garbage":
        return "garbage-token"
    token: str = getattr(s, role)
    return token


def _placeholders(value: Any, s: Srv, ids: dict[str, str]) -> Any:
    """Swap the strategies' "@queued", "@running", "@pid" markers for real ids."""
    names = {"@queued": ids["queued"], "@running": ids["running"], "@pid": s.pid}
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, dict):
        return {k: _placeholders(v, s, ids) for k, v in value.items()}
    return value


@HYPO
@given(
    method=st.one_of(
        st.just("POST"),
        st.sampled_from(["GET", "PUT", "DELETE", "HEAD"]),
        st.text(min_size=1, max_size=10),
    ),
    path=st.one_of(
        st.sampled_from(
            [
                MCP,
                MCP + "/",
                f"{RELAY}/sync",
                "/.well-known/oauth-protected-resource",
                f"{RELAY}/commands/{INVENTED}/start",
                "/",
                "",
            ]
        ),
        st.text(max_size=40),
        st.builds(
            lambda seg, act: f"{RELAY}/commands/{seg}/{act}",
            st.text(max_size=20),
            st.sampled_from(["start", "control", "complete", "", "x"]),
        ),
    ),
    headers=st.dictionaries(
        st.one_of(
            st.sampled_from(
                [
                    "authorization",
                    "mcp-session-id",
                    "mcp-protocol-version",
                    "host",
                    "content-type",
                    "accept",
                ]
            ),
            st.text(max_size=15),
        ),
        st.text(max_size=40),
        max_size=5,
    ),
    body=st.one_of(
        json_values.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=200),
        st.builds(
            lambda m, p: json.dumps({"jsonrpc": "2.0", "id": 1, "method": m, "params": p}).encode(),
            st.sampled_from(["tools/call", "tools/list", "initialize", "ping"]),
            json_values,
        ),
    ),
    query=st.one_of(st.just(""), st.text(max_size=30)),
)
def test_hypothesis_arbitrary_requests(
    method: str, path: str, headers: dict[str, str], body: bytes, query: str
) -> None:
    s, _ = fresh()
    before = s.snapshot()
    reply = s.http(method, path, body, headers, query)
    event(f"status {reply.status}")
    assert_clean(reply)
    assert s.snapshot() == before  # nobody here holds a valid token


@HYPO
@given(
    call=tool_calls,
    role=st.one_of(st.just("agent"), st.sampled_from(TOKEN_ROLES)),
    msg_id=st.integers(),
)
def test_hypothesis_tool_calls(call: tuple[str, Any], role: str | None, msg_id: int) -> None:
    tool, args = call
    s, ids = fresh()
    args = _placeholders(args, s, ids)
    before = s.snapshot()
    message = {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": args},
    }
    reply = s.rpc_raw(message, token_for(s, role))
    event(f"status {reply.status}")
    payload = assert_clean(reply)
    assert payload["id"] == msg_id
    result = payload.get("result")
    if reply.status != 200 or result is None or result.get("isError"):
        event("refused" if result is None else "tool error")
        assert s.snapshot() == before
    else:
        event(f"success {tool}")
        # a success means the arguments were valid and the caller had the scope
        assert isinstance(args, dict)
        schema = next(t for t in tooldefs.TOOLS if t["name"] == tool)["inputSchema"]
        assert Draft202012Validator(schema).is_valid(args)
        assert role in ("agent", "other", "reader", "stranger")
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


completions = st.fixed_dictionaries(
    {"status": st.sampled_from(["completed", "failed", "cancelled"])},
    optional={
        "result": json_values,
        "error": st.text(max_size=5),
        "execution_id": st.text(max_size=5),
        "total_tokens": st.integers(min_value=-1, max_value=10**6),
    },
)
syncs = st.fixed_dictionaries(
    {
        "project_id": st.just("@pid"),
        "sessions": st.lists(st.builds(session, st.sampled_from([GS1, "gs_x"])), max_size=3),
    }
)
loose_relay_bodies = st.fixed_dictionaries(
    {},
    optional={
        "project_id": st.one_of(st.just("@pid"), json_values),
        "sessions": st.one_of(
            st.lists(
                st.one_of(
                    st.fixed_dictionaries(
                        {
                            "graph_session_id": st.sampled_from([GS1, "", 5]),
                            "slug": st.one_of(st.text(max_size=5), json_scalars),
                        },
                        optional={"version": json_values, "name": json_values},
                    ),
                    json_values,
                ),
                max_size=3,
            ),
            json_values,
        ),
        "execution_id": st.one_of(st.text(max_size=5), json_values),
        "status": st.one_of(st.sampled_from(["completed", "failed", "cancelled"]), json_values),
        "result": json_values,
        "result_truncated": json_values,
        "error": json_values,
        "total_tokens": json_values,
        "reported_cost": json_values,
    },
)


@HYPO
@given(
    action=st.sampled_from(["sync", "start", "control", "complete"]),
    target=st.one_of(st.sampled_from(["@queued", "@running", INVENTED]), st.text(max_size=20)),
    body=st.one_of(completions, syncs, loose_relay_bodies, json_values),
    role=st.one_of(st.just("desktop"), st.sampled_from(TOKEN_ROLES)),
)
def test_hypothesis_relay_bodies(action: str, target: str, body: Any, role: str | None) -> None:
    s, ids = fresh()
    body = _placeholders(body, s, ids)
    command_id = _placeholders(target, s, ids)
    path = "/sync" if action == "sync" else f"/commands/{command_id}/{action}"
    method = "GET" if action == "control" else "POST"
    before = s.snapshot()
    reply = s.relay(method, path, None if method == "GET" else body, token=token_for(s, role))
    event(f"{action} {reply.status}")
    assert_clean(reply)
    if reply.status != 200:
        assert s.snapshot() == before
    else:
        assert role == "desktop"


@settings(max_examples=300, deadline=None)
@given(call=tool_calls)
def test_fast_argument_check_agrees_with_jsonschema(call: tuple[str, Any]) -> None:
    tool, args = call
    if tool not in tooldefs.TOOL_NAMES or not isinstance(args, dict):
        return
    schema = next(t for t in tooldefs.TOOLS if t["name"] == tool)["inputSchema"]
    valid = Draft202012Validator(schema).is_valid(args)
    if tooldefs.surely_valid(tool, args):
        assert valid  # the fast path never accepts what jsonschema refuses
    assert (tooldefs.argument_error(tool, args) is None) == valid


@pytest.mark.parametrize("status", [["completed"], {"s": 1}, 3, None, True])
def test_completion_status_of_an_unhashable_or_wrong_type_is_a_400(status: Any) -> None:
    """Found by hypothesis: a list status once reached ``in frozenset`` and raised (500)."""
    from pytest_osfoundry.clock import VirtualClock
    from pytest_osfoundry.http import Request
    from pytest_osfoundry.server import ReferenceServer

    server = ReferenceServer(VirtualClock())
    creds = server.provision()
    server.state.share(creds.project_id, [{"graph_session_id": "gs_" + "a" * 32, "slug": "s"}])
    agent = next(a for a in server.state.agents.values() if a.project_ids)
    ticket = server.state.run_graph_session(agent, "gs_" + "a" * 32, "key-0000001")
    cid = ticket["command_id"]
    body = json.dumps({"status": status}).encode()
    headers = {"authorization": f"Bearer {creds.desktop_token}"}
    path = f"/external-assistants/graph-relays/commands/{cid}/complete"
    reply = server(Request.build("POST", path, headers, body))
    assert reply.status == 400
    assert server.state.runs[cid].status == "queued"


def test_a_lone_surrogate_in_arguments_reaches_the_relay_escaped(srv: Srv) -> None:
    # Regression: the relay's sync answered 500 on every pass once such a run was
    # queued (the text could not be UTF-8). Now it is written as JSON.stringify
    # writes it, "\ud800", and the run is handed out like any other.
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_graph_session",'
        f'"arguments":{{"graph_session_id":"{GS1}","idempotency_key":"surrogate-1",'
        '"arguments":{"x":"a\\ud800b"}}}}'
    ).encode()
    srv.sync()
    ticket = json.loads(assert_clean(srv.rpc_raw(body, srv.agent))["result"]["content"][0]["text"])
    reply = srv.relay("POST", "/sync", {"project_id": srv.pid, "sessions": [session(GS1)]})
    assert reply.status == 200
    assert b'"a\\ud800b"' in reply.body
    (command,) = json.loads(reply.body)["commands"]
    assert command["command_id"] == ticket["command_id"]
    assert command["arguments"] == {"x": "a\ud800b"}


def test_a_number_too_big_for_a_double_is_handed_on_as_null(srv: Srv) -> None:
    # JSON.parse reads 1e400 as Infinity and JSON.stringify writes it null; the
    # server writes null too, never the non-JSON "Infinity".
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_graph_session",'
        f'"arguments":{{"graph_session_id":"{GS1}","idempotency_key":"huge-number-1",'
        '"arguments":{"x":1e400,"n":123456789012345678901234567890}}}}'
    ).encode()
    srv.sync()
    assert_clean(srv.rpc_raw(body, srv.agent))
    reply = srv.relay("POST", "/sync", {"project_id": srv.pid, "sessions": [session(GS1)]})
    assert reply.status == 200
    assert b"Infinity" not in reply.body
    (command,) = json.loads(reply.body)["commands"]
    assert command["arguments"] == {"x": None, "n": 123456789012345678901234567890}
