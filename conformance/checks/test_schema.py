"""Schema and transport: the tool listing (D3), MCP Streamable HTTP (R1), result shapes (R3).

Input schemas are judged by behaviour, not by spelling: each documented constraint is
checked by validating instances that conformance/spec.md allows and forbids, so any schema that
means the same thing passes.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from pytest_osfoundry.client import OsfClientError
from pytest_osfoundry.conformance._eras import need_legacy
from pytest_osfoundry.conformance._expected import (
    INVALID_PARAMS,
    KEY_MAX,
    KEY_MIN,
    LEGACY_REVISIONS,
    LIST_MAX_LIMIT,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION_HEADER,
    READ_SCOPE,
    RUN_DESCRIPTION,
    RUN_NOT_FOUND,
    RUN_SCOPE,
    SESSION_ID_HEADER,
    STARTED_BY_THIS_AGENT,
    TOOLS,
)
from pytest_osfoundry.conformance._harness import Conformance
from pytest_osfoundry.conformance._registry import check
from pytest_osfoundry.conformance._wire import decode_reply

GSID = "gs_" + "0" * 32
UUID = "00000000-0000-4000-8000-000000000000"


def _listing(conf: Conformance, *, anonymous: bool = False) -> list[dict[str, Any]]:
    """The listed tools, asked with the agent token when one is given (only
    ``D3-tools-list-without-token`` is about its absence), so a listing behind auth
    fails that check alone."""
    __tracebackhide__ = True
    as_agent = bool(not anonymous and conf.target.creds.agent_token)
    client = conf.roles.agent if as_agent else conf.roles.anonymous
    try:
        return client.list_tools()
    except OsfClientError as err:
        who = "as the agent" if as_agent else "without a token"
        conf.expect.fail(f"tools/list {who} failed: {err}")


def _tools(conf: Conformance, *, anonymous: bool = False) -> dict[str, dict[str, Any]]:
    __tracebackhide__ = True
    return {str(t.get("name")): t for t in _listing(conf, anonymous=anonymous)}


def _tool(conf: Conformance, name: str) -> dict[str, Any]:
    __tracebackhide__ = True
    tool = _tools(conf).get(name)
    if tool is None:
        conf.expect.fail(f"tools/list does not list {name}")
    return tool


def _validator(conf: Conformance, tool: dict[str, Any]) -> Any:
    __tracebackhide__ = True
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        conf.expect.fail(f"{tool.get('name')} has no inputSchema object")
    try:
        cls = validator_for(schema, default=Draft202012Validator)
        cls.check_schema(schema)
        return cls(schema)
    except SchemaError as err:
        conf.expect.fail(
            f"{tool.get('name')}'s inputSchema is not a valid JSON Schema: {err.message}"
        )


def _judge(
    conf: Conformance, tool: dict[str, Any], allowed: list[Any], forbidden: list[Any]
) -> None:
    __tracebackhide__ = True
    name = tool.get("name")
    validator = _validator(conf, tool)
    for instance in allowed:
        conf.expect(
            validator.is_valid(instance),
            f"{name}'s inputSchema refuses {json.dumps(instance)}, which SPEC D3 allows",
        )
    for instance in forbidden:
        conf.expect(
            not validator.is_valid(instance),
            f"{name}'s inputSchema accepts {json.dumps(instance)}, which SPEC D3 forbids",
        )


def _expect_scope(conf: Conformance, tool: dict[str, Any], scope: str) -> None:
    __tracebackhide__ = True
    schemes = tool.get("securitySchemes")
    ok = isinstance(schemes, list) and any(
        isinstance(s, dict)
        and s.get("type") == "oauth2"
        and isinstance(s.get("scopes"), list)
        and scope in s["scopes"]
        for s in schemes
    )
    conf.expect(
        ok,
        f"{tool.get('name')}'s securitySchemes should hold an oauth2 scheme with scope "
        f"{scope!r}, got {json.dumps(schemes)}",
    )


def _expect_hint(conf: Conformance, tool: dict[str, Any], hint: str, value: bool) -> None:
    __tracebackhide__ = True
    annotations = tool.get("annotations")
    got = annotations.get(hint) if isinstance(annotations, dict) else None
    conf.expect(
        got is value,
        f"{tool.get('name')}'s annotations.{hint} should be {json.dumps(value)}, "
        f"got {json.dumps(got)}",
    )


def _props(conf: Conformance, tool: dict[str, Any], names: set[str], required: set[str]) -> None:
    __tracebackhide__ = True
    schema = tool.get("inputSchema") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    got = set(props) if isinstance(props, dict) else set()
    conf.expect.equal(sorted(got), sorted(names), f"{tool.get('name')}'s input properties")
    req = schema.get("required") if isinstance(schema, dict) else None
    conf.expect.equal(
        sorted(req) if isinstance(req, list) else req,
        sorted(required),
        f"{tool.get('name')}'s required properties",
    )


# ---------------------------------------------------------------------- D3 documented
@check(
    "D3-tools-list-without-token",
    "initialize and tools/list succeed with no Authorization header.",
)
def check_tools_list_without_token(osf_conf: Conformance) -> None:
    _tools(osf_conf, anonymous=True)


@check(
    "D3-exactly-four-tools",
    "tools/list lists exactly run_graph_session, list_graph_sessions, get_graph_run and "
    "cancel_graph_run, each once.",
)
def check_exactly_four_tools(osf_conf: Conformance) -> None:
    listed = _listing(osf_conf)
    names = [t.get("name") for t in listed]
    osf_conf.expect.equal(sorted(map(str, names)), sorted(TOOLS), "the listed tool names")


@check(
    "D3-run-graph-session",
    "run_graph_session is listed as documented: its description, graph_session_id and "
    "arguments and an 8-128 character idempotency_key (the first and last required, "
    "nothing else accepted), readOnlyHint false, destructiveHint true, scope osfoundry:run.",
)
def check_run_graph_session(osf_conf: Conformance) -> None:
    c = osf_conf
    tool = _tool(c, "run_graph_session")
    description = " ".join(str(tool.get("description", "")).split())
    c.expect.equal(description, RUN_DESCRIPTION, "run_graph_session's description")
    _props(
        c,
        tool,
        {"graph_session_id", "arguments", "idempotency_key"},
        {"graph_session_id", "idempotency_key"},
    )
    key8, key128 = "k" * KEY_MIN, "k" * KEY_MAX
    _judge(
        c,
        tool,
        allowed=[
            {"graph_session_id": GSID, "idempotency_key": key8},
            {"graph_session_id": GSID, "idempotency_key": key128, "arguments": {"a": 1}},
            {"graph_session_id": GSID, "idempotency_key": key8, "arguments": {}},
        ],
        forbidden=[
            {"graph_session_id": GSID},
            {"idempotency_key": key8},
            {"graph_session_id": GSID, "idempotency_key": "k" * (KEY_MIN - 1)},
            {"graph_session_id": GSID, "idempotency_key": "k" * (KEY_MAX + 1)},
            {"graph_session_id": 7, "idempotency_key": key8},
            {"graph_session_id": GSID, "idempotency_key": 12345678},
            {"graph_session_id": GSID, "idempotency_key": key8, "arguments": "x"},
            {"graph_session_id": GSID, "idempotency_key": key8, "other": 1},
        ],
    )
    _expect_hint(c, tool, "readOnlyHint", False)
    _expect_hint(c, tool, "destructiveHint", True)
    _expect_scope(c, tool, RUN_SCOPE)


@check(
    "D3-list-graph-sessions",
    "list_graph_sessions takes a required string project_id and an integer limit of 1 to "
    "50, is read-only and needs osfoundry:read.",
)
def check_list_graph_sessions(osf_conf: Conformance) -> None:
    c = osf_conf
    tool = _tool(c, "list_graph_sessions")
    _props(c, tool, {"project_id", "limit"}, {"project_id"})
    _judge(
        c,
        tool,
        allowed=[
            {"project_id": "p"},
            {"project_id": "p", "limit": 1},
            {"project_id": "p", "limit": LIST_MAX_LIMIT},
        ],
        forbidden=[
            {},
            {"limit": 5},
            {"project_id": 5},
            {"project_id": "p", "limit": 0},
            {"project_id": "p", "limit": LIST_MAX_LIMIT + 1},
            {"project_id": "p", "limit": "5"},
            {"project_id": "p", "limit": 2.5},
        ],
    )
    _expect_hint(c, tool, "readOnlyHint", True)
    _expect_scope(c, tool, READ_SCOPE)


@check(
    "D3-get-graph-run",
    "get_graph_run takes a required string command_id, is read-only and needs osfoundry:read.",
)
def check_get_graph_run(osf_conf: Conformance) -> None:
    c = osf_conf
    tool = _tool(c, "get_graph_run")
    _props(c, tool, {"command_id"}, {"command_id"})
    _judge(c, tool, allowed=[{"command_id": UUID}], forbidden=[{}, {"command_id": 5}])
    _expect_hint(c, tool, "readOnlyHint", True)
    _expect_scope(c, tool, READ_SCOPE)


@check(
    "D3-cancel-graph-run",
    "cancel_graph_run takes a required string command_id and needs osfoundry:run, like "
    "the start call.",
)
def check_cancel_graph_run(osf_conf: Conformance) -> None:
    c = osf_conf
    tool = _tool(c, "cancel_graph_run")
    _props(c, tool, {"command_id"}, {"command_id"})
    _judge(c, tool, allowed=[{"command_id": UUID}], forbidden=[{}, {"command_id": 5}])
    _expect_scope(c, tool, RUN_SCOPE)


# ---------------------------------------------------------------------- D3 reconstructed
@check(
    "D3-schemas-closed",
    "Every tool's inputSchema has type object and additionalProperties false.",
    level="reconstructed",
)
def check_schemas_closed(osf_conf: Conformance) -> None:
    for name, tool in sorted(_tools(osf_conf).items()):
        schema = tool.get("inputSchema")
        osf_conf.expect(isinstance(schema, dict), f"{name} has no inputSchema object")
        assert isinstance(schema, dict)
        osf_conf.expect.equal(schema.get("type"), "object", f"{name}'s inputSchema type")
        osf_conf.expect(
            schema.get("additionalProperties") is False,
            f"{name}'s inputSchema should say additionalProperties: false, got "
            f"{json.dumps(schema.get('additionalProperties'))}",
        )


@check(
    "D3-schemas-valid",
    "Every tool's inputSchema is a valid JSON Schema (2020-12).",
    level="reconstructed",
)
def check_schemas_valid(osf_conf: Conformance) -> None:
    for name, tool in sorted(_tools(osf_conf).items()):
        try:
            Draft202012Validator.check_schema(tool.get("inputSchema"))
        except SchemaError as err:
            osf_conf.expect.fail(
                f"{name}'s inputSchema is not valid JSON Schema 2020-12: {err.message}"
            )


@check(
    "D3-started-by-this-agent",
    "The descriptions of get_graph_run and cancel_graph_run say they work on runs "
    "'started by this Connected agent'.",
    level="reconstructed",
)
def check_started_by_this_agent(osf_conf: Conformance) -> None:
    tools = _tools(osf_conf)
    for name in ("get_graph_run", "cancel_graph_run"):
        description = " ".join(str(tools.get(name, {}).get("description", "")).split())
        osf_conf.expect(
            STARTED_BY_THIS_AGENT in description,
            f"{name}'s description should contain {STARTED_BY_THIS_AGENT!r}: {description!r}",
        )


# ---------------------------------------------------------------------- R1 transport
def _post(conf: Conformance, payload: Any, headers: dict[str, str]) -> Any:
    __tracebackhide__ = True
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    return conf.wire.http("POST", conf.target.mcp_url, {**base, **headers}, body)


@check(
    "R1-initialize",
    "initialize offering 2025-11-25 is answered with protocol version 2025-11-25 or "
    "2025-06-18 and a tools capability.",
)
def check_initialize(osf_conf: Conformance) -> None:
    need_legacy(osf_conf.target)  # a legacy-era check: skipped on a modern-only target
    try:
        # The agent token: D3-tools-list-without-token is the check about its absence.
        result = osf_conf.roles.mcp(osf_conf.target.creds.agent_token).initialize()
    except OsfClientError as err:
        osf_conf.expect.fail(f"initialize failed: {err}")
    caps = result.get("capabilities")
    osf_conf.expect(
        isinstance(caps, dict) and isinstance(caps.get("tools"), dict),
        f"initialize's capabilities should declare tools, got {json.dumps(caps)}",
    )
    osf_conf.expect.note(f"negotiated {result.get('protocolVersion')}")


@check(
    "R1-notification-202",
    "notifications/initialized after initialize is answered 202 with no body.",
)
def check_notification_202(osf_conf: Conformance) -> None:
    need_legacy(osf_conf.target)  # a legacy-era check: skipped on a modern-only target
    c = osf_conf
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY_REVISIONS[0],
            "capabilities": {},
            "clientInfo": {"name": "pytest-osfoundry-conformance", "version": "1"},
        },
    }
    token = c.target.creds.agent_token  # no check here is about a token's absence
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    reply = _post(c, init, auth)
    c.expect(200 <= reply.status < 300, f"initialize answered HTTP {reply.status}")
    out = decode_reply(reply)
    version = (out.result or {}).get("protocolVersion") if out.kind == "result" else None
    headers = {PROTOCOL_VERSION_HEADER: str(version or LEGACY_REVISIONS[0]), **auth}
    session = {k.lower(): v for k, v in reply.headers.items()}.get(SESSION_ID_HEADER.lower())
    if session:
        headers[SESSION_ID_HEADER] = session
    ack = _post(c, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    c.wire.decisive()
    c.expect.equal(ack.status, 202, "HTTP status of notifications/initialized")
    c.expect(not ack.body, f"the 202 should have no body, got {ack.body[:200]!r}")


@check("R1-ping", "ping with no token is answered with an empty result.")
def check_ping(osf_conf: Conformance) -> None:
    legacy = need_legacy(osf_conf.target).legacy[0]  # ping is legacy-only
    client = osf_conf.wire.initialized(osf_conf.roles.mcp(None, protocol=legacy))
    try:
        result = client.rpc("ping")
    except OsfClientError as err:
        osf_conf.expect.fail(f"ping failed: {err}")
    osf_conf.expect.equal(result, {}, "ping's result")


@check("R1-unknown-method", "An unknown JSON-RPC method gets error -32601.")
def check_unknown_method(osf_conf: Conformance) -> None:
    # As the agent: a server may ask for a token on all but D3's open methods (R2).
    out = decode_reply(osf_conf.wire.rpc(osf_conf.roles.agent, "osf/no-such-method", {}))
    osf_conf.expect(
        out.kind in ("rpc_error", "http_error") and out.code == METHOD_NOT_FOUND,
        f"an unknown method should get JSON-RPC error -32601, got {out.describe()}",
    )


@check("R1-parse-error", "A body that is not JSON gets JSON-RPC error -32700.")
def check_parse_error(osf_conf: Conformance) -> None:
    c = osf_conf
    client = c.wire.initialized(c.roles.agent)  # a token: see R1-unknown-method
    reply = c.wire.http(
        "POST", client.url, client.request_headers(), b'{"jsonrpc": "2.0", "id": 1,'
    )
    out = decode_reply(reply)
    c.expect(
        out.code == PARSE_ERROR,
        f"an unparsable body should get JSON-RPC error -32700, got {out.describe()}",
    )


@check("R1-unknown-tool", "tools/call of a tool that does not exist gets JSON-RPC error -32602.")
def check_unknown_tool(osf_conf: Conformance) -> None:
    out = osf_conf.agent.call("osf_no_such_tool", {})
    osf_conf.expect(
        out.kind in ("rpc_error", "http_error") and out.code == INVALID_PARAMS,
        f"an unknown tool should get JSON-RPC error -32602, got {out.describe()}",
    )


@check(
    "R1-bad-protocol-version",
    "A request with an unsupported MCP-Protocol-Version header gets HTTP 400.",
)
def check_bad_protocol_version(osf_conf: Conformance) -> None:
    legacy = need_legacy(osf_conf.target).legacy[0]  # a legacy-era check
    c = osf_conf
    client = c.wire.initialized(c.roles.mcp(c.target.creds.agent_token, protocol=legacy))
    headers = {**client.request_headers(), PROTOCOL_VERSION_HEADER: "1999-01-01"}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": c.target.next_rpc_id(), "method": "tools/list"}
    ).encode()
    reply = c.wire.http("POST", client.url, headers, body)
    c.expect.equal(reply.status, 400, "HTTP status for MCP-Protocol-Version 1999-01-01")


# ---------------------------------------------------------------------- R3 shapes
@check(
    "R3-success-shape",
    "A successful tool call has structuredContent and a content[0] text that is the same "
    "object as JSON.",
)
def check_success_shape(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    out = c.agent.call("list_graph_sessions", {"project_id": c.roles.project_id})
    c.expect(out.kind == "result", f"list_graph_sessions answered {out.describe()}")
    result = out.result
    structured = result.get("structuredContent") if isinstance(result, dict) else None
    c.expect(isinstance(structured, dict), "the result has no structuredContent object")
    content = result.get("content") if isinstance(result, dict) else None
    first = content[0] if isinstance(content, list) and content else None
    c.expect(
        isinstance(first, dict)
        and first.get("type") == "text"
        and isinstance(first.get("text"), str),
        f"content[0] should be a text item, got {json.dumps(first)[:300]}",
    )
    assert isinstance(first, dict)
    try:
        parsed = json.loads(first["text"])
    except ValueError:
        c.expect.fail(f"content[0].text is not JSON: {first['text'][:200]!r}")
    c.expect.equal(parsed, structured, "content[0].text parsed, against structuredContent")


@check(
    "R3-error-shape",
    "A domain error is a result with isError true whose content[0].text is the message alone.",
)
def check_error_shape(osf_conf: Conformance) -> None:
    out = osf_conf.agent.call("get_graph_run", {"command_id": str(uuid.uuid4())})
    osf_conf.expect(
        out.kind == "tool_error",
        f"get_graph_run of an unknown id should be an isError result, got {out.describe()}",
    )
    content = (out.result or {}).get("content")
    first = content[0] if isinstance(content, list) and content else {}
    osf_conf.expect.equal(first.get("type"), "text", "content[0].type")
    osf_conf.expect.equal(first.get("text"), RUN_NOT_FOUND, "content[0].text")


@check(
    "R3-missing-property",
    "get_graph_run without command_id is refused as an isError result or JSON-RPC -32602.",
)
def check_missing_property(osf_conf: Conformance) -> None:
    out = osf_conf.agent.call("get_graph_run", {})
    osf_conf.expect.schema_refusal(out, "get_graph_run without command_id")


@check(
    "R3-extra-property",
    "run_graph_session with a property the schema does not have is refused and queues nothing.",
)
def check_extra_property(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    args = {**c.agent.run_args(), "priority": "high"}
    out = c.agent.run(args)
    c.wire.decisive()
    c.expect.schema_refusal(out, "an extra property")
    c.desktop.expect_nothing_queued(
        args["arguments"], "run_graph_session with an extra property was refused"
    )


@check(
    "R3-wrong-type",
    "run_graph_session with a number as idempotency_key is refused and queues nothing.",
)
def check_wrong_type(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    args = c.agent.run_args(key=1234567890)
    out = c.agent.run(args)
    c.wire.decisive()
    c.expect.schema_refusal(out, "a number as idempotency_key")
    c.desktop.expect_nothing_queued(
        args["arguments"], "run_graph_session with a numeric key was refused"
    )
