"""MCP transport per revision (R1): the modern era's envelope, the eras a target serves, Origin.

Each check names the revision it is about (``R1-2026-07-28-...``,
``R1-2025-11-25-...``) and is skipped, with a reason, on a target that does not serve
it; the era-neutral checks (``R1-eras-consistent``, ``R1-origin``, ``R1-public-url``)
run on every target. ``R1-session-bound-to-agent`` is about the legacy revisions'
sessions: not applicable to a target that serves none or issues no session id.
Modern requests are built by hand here, so a server is judged on exactly what it
receives.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_osfoundry.client import McpClient
from pytest_osfoundry.conformance import (
    NOT_SERVED,
    Conformance,
    answer_of,
    check,
    decode_reply,
    fetch_metadata,
    modern_body,
    modern_headers,
    need_legacy,
    need_revision,
    rpc_body,
    served_revisions,
)
from pytest_osfoundry.conformance.expected import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    LEGACY_REVISIONS,
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    META_CAPABILITIES,
    META_SERVER_INFO,
    META_VERSION,
    MODERN_REVISION,
    PROTOCOL_VERSION_HEADER,
    UNSUPPORTED_VERSION,
)
from pytest_osfoundry.http import Response

UNKNOWN_VERSION = "v999.0.0"
FOREIGN_ORIGIN = "https://evil.example"
FOREIGN_HOST = "evil.example"
INVENTED = "00000000-0000-4000-8000-000000000000"


def _modern(
    c: Conformance,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    headers: dict[str, str | None] | None = None,
    meta: Any = ...,
    token: str | None = None,
    rpc_id: int | None = None,
) -> tuple[Response, Any, int]:
    """POST one modern request (headers as given: ``None`` drops one); its answer to the
    request's id (JSON or event stream, ``None`` when it holds none).

    It carries ``token``, else the agent token when one is given: a server may ask
    for one on everything but D3's open methods, and no check here is about its absence.
    """
    __tracebackhide__ = True
    token = token or c.target.creds.agent_token
    rid = c.target.next_rpc_id() if rpc_id is None else rpc_id
    name = (params or {}).get("name") if method == "tools/call" else None
    sent = modern_headers(method, name if isinstance(name, str) else None)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    for key, value in (headers or {}).items():
        for existing in [k for k in sent if k.lower() == key.lower()]:
            del sent[existing]
        if value is not None:
            sent[key] = value
    reply = c.wire.http("POST", c.target.mcp_url, sent, modern_body(rid, method, params, meta))
    return reply, answer_of(reply, rid), rid


def _error(message: Any) -> dict[str, Any]:
    error = message.get("error") if isinstance(message, dict) else None
    return error if isinstance(error, dict) else {}


def _result(message: Any) -> dict[str, Any] | None:
    result = message.get("result") if isinstance(message, dict) else None
    return result if isinstance(result, dict) else None


def _expect_refusal(
    c: Conformance, reply: Response, message: Any, rid: int, code: int, what: str
) -> None:
    __tracebackhide__ = True
    c.wire.decisive()
    got = _error(message).get("code")
    c.expect(
        reply.status == 400 and got == code,
        f"{what}: expected HTTP 400 with JSON-RPC error {code}, got HTTP {reply.status} "
        f"with {json.dumps(message)[:300] if message is not None else 'no JSON body'}",
    )
    c.expect.equal(message.get("id"), rid, f"{what}: the error's id")


# ---------------------------------------------------------------------- modern era
@check(
    "R1-2026-07-28-discover",
    "server/discover answers supportedVersions (with 2026-07-28), capabilities with tools, "
    "and _meta io.modelcontextprotocol/serverInfo.",
)
def check_modern_discover(osf_conf: Conformance) -> None:
    c = osf_conf
    need_revision(c.target, MODERN_REVISION)
    reply, message, _ = _modern(c, "server/discover")
    result = _result(message)
    c.expect(
        reply.status == 200 and result is not None,
        f"server/discover answered HTTP {reply.status}: {reply.body[:300]!r}",
    )
    assert result is not None
    versions = result.get("supportedVersions")
    c.expect(
        isinstance(versions, list) and MODERN_REVISION in versions,
        f"supportedVersions should list {MODERN_REVISION}, got {versions!r}",
    )
    caps = result.get("capabilities")
    c.expect(
        isinstance(caps, dict) and isinstance(caps.get("tools"), dict),
        f"capabilities should declare tools, got {caps!r}",
    )
    info = (result.get("_meta") or {}).get(META_SERVER_INFO)
    c.expect(
        isinstance(info, dict) and isinstance(info.get("name"), str),
        f"_meta should carry {META_SERVER_INFO} with a name, got {info!r}",
    )
    c.expect.note(f"supportedVersions {versions}")


@check(
    "R1-2026-07-28-meta-required",
    "A modern request without _meta, or whose _meta lacks the protocol version or the "
    "client capabilities, gets HTTP 400 and JSON-RPC -32602 carrying the request's id; "
    "clientInfo is optional.",
)
def check_modern_meta_required(osf_conf: Conformance) -> None:
    c = osf_conf
    need_revision(c.target, MODERN_REVISION)
    caps: dict[str, Any] = {META_CAPABILITIES: {}}
    version: dict[str, Any] = {META_VERSION: MODERN_REVISION}
    for meta, what in ((None, "no _meta"), (caps, "no protocol version"), (version, "no caps")):
        reply, message, rid = _modern(c, "tools/list", meta=meta)
        _expect_refusal(c, reply, message, rid, INVALID_PARAMS, f"tools/list with {what}")
    reply, message, _ = _modern(c, "tools/list", meta={**caps, **version})
    c.expect(
        reply.status == 200 and _result(message) is not None,
        f"a request whose _meta has no clientInfo should be served, got HTTP {reply.status}",
    )


@check(
    "R1-2026-07-28-unsupported-version",
    "A modern request naming a version the server does not serve gets HTTP 400 and "
    "-32022 whose data.supported lists what it serves and data.requested echoes the version.",
)
def check_modern_unsupported_version(osf_conf: Conformance) -> None:
    c = osf_conf
    found = need_revision(c.target, MODERN_REVISION)
    meta = {
        META_VERSION: UNKNOWN_VERSION,
        META_CAPABILITIES: {},
    }
    reply, message, rid = _modern(
        c, "tools/list", meta=meta, headers={PROTOCOL_VERSION_HEADER: UNKNOWN_VERSION}
    )
    _expect_refusal(c, reply, message, rid, UNSUPPORTED_VERSION, f"version {UNKNOWN_VERSION}")
    data = _error(message).get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    c.expect(
        isinstance(supported, list) and MODERN_REVISION in supported,
        f"error.data.supported should list the served versions, got {supported!r}",
    )
    assert isinstance(supported, list) and isinstance(data, dict)
    c.expect(
        set(supported) <= set(found.served) | {MODERN_REVISION},
        f"error.data.supported lists {supported}, but the server serves {list(found.served)}",
    )
    c.expect.equal(data.get("requested"), UNKNOWN_VERSION, "error.data.requested")


@check(
    "R1-2026-07-28-mcp-method-header",
    "A modern request without Mcp-Method, or whose Mcp-Method differs from the body's "
    "method, gets HTTP 400 and -32020 (HeaderMismatch).",
)
def check_modern_method_header(osf_conf: Conformance) -> None:
    c = osf_conf
    need_revision(c.target, MODERN_REVISION)
    for value, what in ((None, "no Mcp-Method"), ("prompts/list", "Mcp-Method prompts/list")):
        reply, message, rid = _modern(c, "tools/list", headers={MCP_METHOD_HEADER: value})
        _expect_refusal(c, reply, message, rid, HEADER_MISMATCH, f"tools/list with {what}")


@check(
    "R1-2026-07-28-mcp-name-header",
    "A modern tools/call without Mcp-Name, or whose Mcp-Name differs from the tool "
    "called, gets HTTP 400 and -32020 (HeaderMismatch) before anything runs.",
)
def check_modern_name_header(osf_conf: Conformance) -> None:
    c = osf_conf
    need_revision(c.target, MODERN_REVISION)
    token = c.roles.need("agent_token")
    params = {"name": "get_graph_run", "arguments": {"command_id": INVENTED}}
    for value, what in ((None, "no Mcp-Name"), ("cancel_graph_run", "Mcp-Name cancel_graph_run")):
        reply, message, rid = _modern(
            c, "tools/call", params, headers={MCP_NAME_HEADER: value}, token=token
        )
        _expect_refusal(
            c, reply, message, rid, HEADER_MISMATCH, f"tools/call get_graph_run with {what}"
        )


@check(
    "R1-2026-07-28-result-type",
    'Every modern result (tools/list, tools/call, server/discover) carries resultType "complete".',
)
def check_modern_result_type(osf_conf: Conformance) -> None:
    c = osf_conf
    need_revision(c.target, MODERN_REVISION)
    token = c.roles.need("agent_token")
    calls: list[tuple[str, dict[str, Any] | None]] = [
        ("tools/list", None),
        (
            "tools/call",
            {"name": "list_graph_sessions", "arguments": {"project_id": c.roles.project_id}},
        ),
        ("server/discover", None),
    ]
    for method, params in calls:
        reply, message, _ = _modern(c, method, params, token=token)
        result = _result(message)
        if result is None and method == "server/discover":
            continue  # its absence is R1-2026-07-28-discover's finding
        c.expect(result is not None, f"{method} answered HTTP {reply.status} without a result")
        assert result is not None
        c.expect.equal(result.get("resultType"), "complete", f"{method} result's resultType")


@check(
    "R1-2026-07-28-caching-hints",
    "A modern tools/list result carries ttlMs (a non-negative integer) and cacheScope "
    '("public" or "private").',
)
def check_modern_caching_hints(osf_conf: Conformance) -> None:
    c = osf_conf
    need_revision(c.target, MODERN_REVISION)
    reply, message, _ = _modern(c, "tools/list")
    result = _result(message)
    c.expect(result is not None, f"tools/list answered HTTP {reply.status} without a result")
    assert result is not None
    ttl = result.get("ttlMs")
    c.expect(
        isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0,
        f"ttlMs should be a non-negative integer, got {ttl!r}",
    )
    c.expect(
        result.get("cacheScope") in ("public", "private"),
        f'cacheScope should be "public" or "private", got {result.get("cacheScope")!r}',
    )


@check(
    "R1-2026-07-28-get-405",
    "A GET on the MCP endpoint gets HTTP 405 (no GET stream) from a server serving only "
    "2026-07-28; a dual-era server may instead keep the legacy GET stream "
    "(200 text/event-stream) or, requiring a session, answer a GET without one with 400.",
)
def check_modern_get_405(osf_conf: Conformance) -> None:
    c = osf_conf
    found = need_revision(c.target, MODERN_REVISION)
    headers = {"Accept": "text/event-stream"}
    token = c.target.creds.agent_token  # the rule is not about a token's absence
    if token:
        headers["Authorization"] = f"Bearer {token}"
    reply = c.wire.http("GET", c.target.mcp_url, headers)
    if not found.legacy:
        c.expect.equal(reply.status, 405, "HTTP status of GET on the MCP endpoint")
        return
    ctype = {k.lower(): v for k, v in reply.headers.items()}.get("content-type", "")
    stream = reply.status == 200 and ctype.partition(";")[0].strip() == "text/event-stream"
    # 400: the legacy transport's answer to a request lacking the session it requires.
    c.expect(
        reply.status in (400, 405) or stream,
        f"a GET on the MCP endpoint of a server also serving {', '.join(found.legacy)} "
        f"should get 405, an event stream, or 400 (no session), got HTTP {reply.status} "
        f"({ctype or 'no type'})",
    )


# ---------------------------------------------------------------------- legacy revisions
def _legacy_initialize(revision: str) -> Any:
    def check_legacy_initialize(osf_conf: Conformance) -> None:
        c = osf_conf
        need_revision(c.target, revision)
        answered = served_revisions(c.target).initialize_answers.get(revision)
        c.expect.equal(
            answered, revision, f"the revision initialize answers when {revision} is offered"
        )
        token = c.target.creds.agent_token  # D3's checks are about a token's absence
        client = c.wire.initialized(c.roles.mcp(token, protocol=revision))
        try:
            tools = client.list_tools()
        except Exception as err:
            c.expect.fail(f"tools/list in a {revision} session failed: {err}")
        c.expect.equal(len(tools), 4, f"tools listed in a {revision} session")

    check_legacy_initialize.__name__ = "check_initialize_" + revision.replace("-", "_")
    return check(
        f"R1-{revision}-initialize",
        f"initialize offering {revision} is answered with {revision}, and that session "
        "lists the four tools.",
    )(check_legacy_initialize)


check_initialize_2025_11_25 = _legacy_initialize(LEGACY_REVISIONS[0])
check_initialize_2025_06_18 = _legacy_initialize(LEGACY_REVISIONS[1])


def _on_session(
    c: Conformance, owner: McpClient, token: str | None, method: str, params: Any = None
) -> Response:
    """POST one legacy request carrying ``owner``'s session, as ``token`` (``None``: no
    Authorization header) instead of the owner's."""
    headers = {k: v for k, v in owner.request_headers().items() if k.lower() != "authorization"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return c.wire.http("POST", owner.url, headers, rpc_body(c.target.next_rpc_id(), method, params))


def _delete_session(c: Conformance, owner: McpClient, token: str | None) -> Response:
    """``DELETE`` of ``owner``'s session, as ``token`` (``None``: no Authorization)."""
    headers = {k: v for k, v in owner.request_headers().items() if k.lower() != "authorization"}
    headers.pop("Content-Type", None)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return c.wire.http("DELETE", owner.url, headers)


@check(
    "R1-session-bound-to-agent",
    "A legacy session an agent opened with its token is no credential for anyone else: "
    "carrying it, a tools/call without a token gets 401 (or 404, the session bound to "
    "its agent) and another agent never reads the first agent's run; a DELETE of it "
    "without a token, or with another agent's token, leaves it serving its agent. Not "
    "applicable when initialize issues no Mcp-Session-Id.",
    schedule="long-chain",
)
def check_session_bound_to_agent(osf_conf: Conformance) -> None:
    c = osf_conf
    revision = need_legacy(c.target).legacy[0]
    other = c.roles.need("other_agent_token")
    owner = c.wire.initialized(c.roles.mcp(c.roles.need("agent_token"), protocol=revision))
    if not owner.session_id:
        pytest.skip(
            f"{NOT_SERVED}the target issues no Mcp-Session-Id at initialize (it serves "
            f"{revision} without sessions): there is no session to bind"
        )
    command_id = c.agent.queue(by=owner)["command_id"]
    read = {"name": "get_graph_run", "arguments": {"command_id": command_id}}

    def still_served(after: str) -> None:
        __tracebackhide__ = True
        mine = c.wire.call(owner, "get_graph_run", {"command_id": command_id})
        c.expect(
            mine.kind == "result",
            f"after {after}, the agent's own get_graph_run on its session answered "
            f"{mine.describe()}: the session was ended or taken from its agent",
        )

    theirs = decode_reply(_on_session(c, owner, other, "tools/call", read))
    shown = isinstance(theirs.structured, dict) and theirs.structured.get("command_id")
    c.expect(
        not (theirs.kind == "result" and shown == command_id),
        "another agent's get_graph_run carrying the agent's Mcp-Session-Id read the "
        "agent's run: the session served as the agent's credential",
    )
    anonymous = _on_session(c, owner, None, "tools/call", read)
    c.expect(
        anonymous.status in (401, 404),
        f"a tools/call without a token carrying the agent's Mcp-Session-Id answered HTTP "
        f"{anonymous.status}, expected 401 (R2) or 404 (the session bound to its agent)",
    )
    for who, token in (("without a token", None), ("with another agent's token", other)):
        ended = _delete_session(c, owner, token)
        c.wire.decisive()
        c.expect.note(f"DELETE {who}: HTTP {ended.status}")
        still_served(f"a DELETE of its session {who} (HTTP {ended.status})")
    c.expect.note(
        "binds sessions to their agent (another agent's request with one: HTTP 404)"
        if theirs.status == 404
        else f"another agent's request with the session: {theirs.describe()} (MCP: a "
        "server should bind a session to its user)"
    )


# ---------------------------------------------------------------------- every revision
@check(
    "R1-eras-consistent",
    "Every legacy revision server/discover lists is served through initialize (a "
    "dual-era server need not list its legacy revisions: discover names the ones for "
    "modern requests).",
    schedule="shared-evidence",  # judges served_revisions(), found once per process
)
def check_eras_consistent(osf_conf: Conformance) -> None:
    c = osf_conf
    found = served_revisions(c.target)
    if found.discover is None:
        c.expect.note("no server/discover: eras found through initialize only")
        return
    listed = found.discover.get("supportedVersions")
    listed = listed if isinstance(listed, list) else []
    for revision, answered in found.initialize_answers.items():
        if revision in listed:
            c.expect.equal(answered, revision, f"initialize offering {revision} (listed)")
    unlisted = [v for v in found.legacy if v not in listed]
    if unlisted:
        c.expect.note(f"initialize also serves {', '.join(unlisted)} (not listed by discover)")
    c.expect.note(f"serves {', '.join(found.served)}")


@check(
    "R1-origin",
    "A tools/call carrying a foreign Origin header gets HTTP 403 and queues nothing; the "
    "same call without Origin is served.",
)
def check_origin(osf_conf: Conformance) -> None:
    c = osf_conf
    client = c.wire.initialized(c.roles.agent)
    args = c.agent.run_args()
    params = client.envelope("tools/call", {"name": "run_graph_session", "arguments": args})
    assert params is not None
    headers = {**client.request_headers("tools/call", "run_graph_session")}
    headers["Origin"] = FOREIGN_ORIGIN
    body = rpc_body(c.target.next_rpc_id(), "tools/call", params)
    reply = c.wire.http("POST", client.url, headers, body)
    c.wire.decisive()
    out = decode_reply(reply)
    if out.kind == "result" and isinstance(out.structured, dict):
        command_id = out.structured.get("command_id")
        if isinstance(command_id, str):
            c.runs.track(client, command_id)
    c.expect.equal(reply.status, 403, f"HTTP status of tools/call with Origin {FOREIGN_ORIGIN}")
    c.desktop.expect_nothing_queued(
        args["arguments"], f"tools/call with Origin {FOREIGN_ORIGIN} got 403"
    )
    served = c.agent.run(c.agent.run_args(), by=client)
    c.expect(served.kind == "result", f"the call without Origin answered {served.describe()}")


@check(
    "R1-public-url",
    "The protected-resource metadata and the 401 challenge name the server's own URL, "
    "never one taken from the request's Host header.",
)
def check_public_url(osf_conf: Conformance) -> None:
    c = osf_conf
    client = c.wire.initialized(c.roles.anonymous)
    params = client.envelope(
        "tools/call", {"name": "get_graph_run", "arguments": {"command_id": INVENTED}}
    )
    body = rpc_body(c.target.next_rpc_id(), "tools/call", params)
    headers = client.request_headers("tools/call", "get_graph_run")
    challenge = c.wire.http("POST", client.url, {**headers, "Host": FOREIGN_HOST}, body)
    value = {k.lower(): v for k, v in challenge.headers.items()}.get("www-authenticate", "")
    c.expect(
        FOREIGN_HOST not in value,
        f"the challenge names {FOREIGN_HOST!r} after a request with Host: {FOREIGN_HOST}: {value}",
    )
    # The challenge names the server's own metadata URL: fetch it with the foreign Host.
    url, reply = fetch_metadata(c.wire, c.target, value or None, {"Host": FOREIGN_HOST})
    c.wire.decisive()
    text = reply.body.decode("utf-8", "replace")
    if 200 <= reply.status < 300:
        c.expect(
            FOREIGN_HOST not in text,
            f"the metadata at {url} names {FOREIGN_HOST!r} after a request with Host: "
            f"{FOREIGN_HOST}: {text[:300]}",
        )
    else:  # a refusal names nothing, even when it echoes the bad Host
        c.expect.note(f"GET {url} with Host: {FOREIGN_HOST} was refused (HTTP {reply.status})")
