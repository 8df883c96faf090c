"""The tool listing (D3): four tools, their schemas, scopes and hints.

MCP Streamable HTTP's JSON-RPC basics (R1) and the result shapes (R3) are in
``test_schema_rpc.py``, the same report area.

Input schemas are judged by behaviour, not by spelling: each documented constraint is
checked by validating instances that conformance/spec.md allows and forbids, so any schema that
means the same thing passes.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from pytest_osfoundry.client import DeadlineExceeded, OsfClientError
from pytest_osfoundry.conformance import Conformance, check
from pytest_osfoundry.conformance.expected import (
    KEY_MAX,
    KEY_MIN,
    LIST_MAX_LIMIT,
    READ_SCOPE,
    RUN_DESCRIPTION,
    RUN_SCOPE,
    STARTED_BY_THIS_AGENT,
    TOOLS,
)

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
    "D3-four-tools-without-token",
    "tools/list with no Authorization header lists exactly run_graph_session, "
    "list_graph_sessions, get_graph_run and cancel_graph_run, each once: the documented "
    "listing is the one an agent reads before it holds a token.",
)
def check_four_tools_without_token(osf_conf: Conformance) -> None:
    names = [t.get("name") for t in _listing(osf_conf, anonymous=True)]
    osf_conf.expect.equal(
        sorted(map(str, names)), sorted(TOOLS), "the tool names listed without a token"
    )


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


#: Who lists the tools in D3-same-tools-for-every-caller: the credential it needs (none
#: for the anonymous caller), its client in ``c.roles``, and how a report names it.
CALLERS = (
    (None, "anonymous", "without a token"),
    ("agent_token", "agent", "with the agent token"),
    ("other_agent_token", "other_agent", "with the other agent's token"),
    ("read_token", "read_agent", "with the read-only token"),
    ("stranger_token", "stranger", "with the stranger's token"),
)


def _and(items: list[str]) -> str:
    return " and ".join(filter(None, [", ".join(items[:-1]), items[-1]]))


@check(
    "D3-same-tools-for-every-caller",
    "tools/list lists the same tools whoever asks: without a token and with each agent "
    "token given (the agent, the other agent, the read-only one, the stranger); a listing "
    "that changes with the caller's scopes goes beyond D3.",
    level="reconstructed",
)
def check_same_tools_for_every_caller(osf_conf: Conformance) -> None:
    c = osf_conf
    seen: dict[tuple[str, ...], list[str]] = {}
    for credential, role, who in CALLERS:
        if credential is not None and not getattr(c.target.creds, credential):
            continue  # not given: that caller cannot be asked
        # Without a token, a client of its own: a server refusing it is D3-tools-list-
        # without-token's finding, noted here (the role's session would fail this check).
        client = getattr(c.roles, role) if credential is not None else c.roles.mcp(None)
        try:
            if not client.ready:
                client.connect()
            listed = client.list_tools()
        except DeadlineExceeded:
            raise  # no answer at all: this check's finding (and maybe the target is gone)
        except OsfClientError as err:  # a refused listing is another check's finding
            c.expect.note(f"tools/list {who} failed: {err}")
            continue
        seen.setdefault(tuple(sorted(str(t.get("name")) for t in listed)), []).append(who)
    c.expect(
        len(seen) < 2,
        "tools/list changes with the caller: "
        + "; ".join(
            f"{', '.join(names) or 'no tool'} {_and(callers)}"
            for names, callers in sorted(seen.items(), key=lambda kv: -len(kv[0]))
        ),
    )
    c.expect.note(f"{len(next(iter(seen), ()))} tools for every caller")


# ---------------------------------------------------------------------- R1 transport
