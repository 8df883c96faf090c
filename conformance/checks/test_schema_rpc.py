"""MCP Streamable HTTP's JSON-RPC basics (R1) and result shapes and refusals (R3).

The second half of the report's ``schema`` area (the tool listing, D3, is
``test_schema.py``; this module's name sorts after it, so the report keeps its order).
"""

import json
import uuid
from typing import Any

from pytest_osfoundry.client import OsfClientError
from pytest_osfoundry.conformance import (
    Conformance,
    check,
    decode_reply,
    legacy_headers,
    need_legacy,
    rpc_body,
)
from pytest_osfoundry.conformance.expected import (
    INVALID_PARAMS,
    LEGACY_REVISIONS,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION_HEADER,
    RUN_NOT_FOUND,
    SESSION_ID_HEADER,
)

GSID = "gs_" + "0" * 32
UUID = "00000000-0000-4000-8000-000000000000"


def _post(conf: Conformance, body: bytes, headers: dict[str, str]) -> Any:
    __tracebackhide__ = True
    return conf.wire.http("POST", conf.target.mcp_url, legacy_headers(**headers), body)


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
    init = rpc_body(
        1,
        "initialize",
        {
            "protocolVersion": LEGACY_REVISIONS[0],
            "capabilities": {},
            "clientInfo": {"name": "pytest-osfoundry-conformance", "version": "1"},
        },
    )
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
    ack = _post(c, rpc_body(None, "notifications/initialized"), headers)
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
    body = rpc_body(c.target.next_rpc_id(), "tools/list")
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
