"""Scopes and authentication: the MCP tools as an OAuth resource server (R2), the relay (R12).

R2 is checked twice. The security property — a caller without a usable token or
without the tool's scope is refused, and nothing is queued or cancelled — is checked
at the ``documented`` level (D3 documents the scopes), so it holds for every target;
the exact HTTP shape (401/403 and the ``WWW-Authenticate`` challenge) at the
``reconstructed`` level.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlsplit

from pytest_osfoundry.client import ToolReply
from pytest_osfoundry.conformance import (
    Conformance,
    challenge_params,
    check,
    decode_reply,
    fetch_metadata,
    origin_of,
    rpc_body,
    short,
)
from pytest_osfoundry.conformance.expected import (
    CANCELLED,
    INSUFFICIENT_SCOPE,
    QUEUED,
    READ_SCOPE,
    RUN_NOT_FOUND,
    RUN_SCOPE,
    WELL_KNOWN,
)


def _unknown_token() -> str:
    return f"osf-conformance-unknown-{uuid.uuid4().hex}"


def _with_headers(
    conf: Conformance, extra: dict[str, str], tool: str, args: dict[str, Any], url_suffix: str = ""
) -> ToolReply:
    """Call ``tool`` on an anonymous session with ``extra`` headers (and a URL suffix)."""
    __tracebackhide__ = True
    anon = conf.wire.initialized(conf.roles.mcp(None))
    headers = {**anon.request_headers("tools/call", tool), **extra}  # the era's envelope
    params = anon.envelope("tools/call", {"name": tool, "arguments": args})
    body = rpc_body(conf.target.next_rpc_id(), "tools/call", params)
    url = anon.url + url_suffix
    return decode_reply(conf.wire.http("POST", url, headers, body))


def _unauthenticated(conf: Conformance) -> list[tuple[str, ToolReply, dict[str, Any]]]:
    __tracebackhide__ = True
    conf.desktop.sync()
    out = []
    for label, extra in (
        ("no token", {}),
        ("an unknown token", {"Authorization": f"Bearer {_unknown_token()}"}),
        ("a malformed Authorization header", {"Authorization": "Basic b3NmOmNvbmZvcm1hbmNl"}),
    ):
        args = conf.agent.run_args()
        out.append((label, _with_headers(conf, extra, "run_graph_session", args), args))
        conf.wire.decisive()
    return out


def _expect_challenge(
    conf: Conformance, out: ToolReply, status: int, what: str, error: str | None = None
) -> None:
    __tracebackhide__ = True
    conf.expect.equal(out.status, status, f"HTTP status for {what}")
    header = out.headers.get("www-authenticate")
    params = challenge_params(header)
    conf.expect(
        params is not None,
        f"{what}: the {status} should carry a Bearer WWW-Authenticate challenge, got {header!r}",
    )
    assert params is not None
    metadata = params.get("resource_metadata", "")
    parts = urlsplit(metadata)
    conf.expect(
        bool(metadata)
        and origin_of(metadata, None) == conf.target.origin
        and parts.path.startswith(WELL_KNOWN),
        f"{what}: resource_metadata should be a URL under {conf.target.origin}{WELL_KNOWN}, got "
        f"{metadata or None!r}",
    )
    conf.expect(
        RUN_SCOPE in params.get("scope", "").split(),
        f"{what}: the challenge's scope should name {RUN_SCOPE}, got {params.get('scope')!r}",
    )
    if error is not None:
        conf.expect.equal(params.get("error"), error, f"{what}: the challenge's error")


# ---------------------------------------------------------------------- R2 security
@check(
    "R2-unauthenticated-refused",
    "run_graph_session with no token, an unknown token or a malformed Authorization "
    "header is refused and queues nothing.",
    level="documented",
)
def check_unauthenticated_refused(osf_conf: Conformance) -> None:
    c = osf_conf
    calls = _unauthenticated(c)
    for label, out, _ in calls:
        c.expect(out.refused, f"run_graph_session with {label} answered {out.describe()}")
    # one sync shows whether any of the three queued something (each has its own arguments)
    commands = c.desktop.sync()
    for label, _, args in calls:
        found = c.desktop.commands_with(commands, args["arguments"])
        for command in found:
            if isinstance(command.get("command_id"), str):
                c.runs.track(c.roles.agent, command["command_id"])
        c.expect(
            not found,
            f"the call with {label} was refused, yet a run was queued: the sync delivers "
            f"{short(found)}",
        )


@check(
    "R2-read-token-cannot-run",
    "An agent with osfoundry:read only is refused run_graph_session and queues nothing.",
    level="documented",
)
def check_read_token_cannot_run(osf_conf: Conformance) -> None:
    c = osf_conf
    reader = c.roles.read_agent
    c.desktop.sync()
    args = c.agent.run_args()
    out = c.agent.run(args, by=reader)
    c.wire.decisive()
    c.expect(out.refused, f"a read-only agent's run_graph_session answered {out.describe()}")
    c.desktop.expect_nothing_queued(args["arguments"], "the read-only agent was refused")


@check(
    "R2-read-token-cannot-cancel",
    "An agent with osfoundry:read only is refused cancel_graph_run, and the run is not cancelled.",
    level="documented",
)
def check_read_token_cannot_cancel(osf_conf: Conformance) -> None:
    c = osf_conf
    reader = c.roles.read_agent
    command_id = c.agent.queue()["command_id"]
    out = c.agent.call("cancel_graph_run", {"command_id": command_id}, by=reader)
    c.wire.decisive()
    c.expect(out.refused, f"a read-only agent's cancel_graph_run answered {out.describe()}")
    view = c.agent.view(command_id)
    c.expect(
        view.get("status") == QUEUED and view.get("cancel_requested") is False,
        f"the run changed: status {view.get('status')!r}, cancel_requested "
        f"{view.get('cancel_requested')!r}",
    )


@check(
    "R2-desktop-token-refused",
    "The desktop's relay token used as an agent token is refused run_graph_session and "
    "queues nothing.",
    level="documented",
)
def check_desktop_token_refused(osf_conf: Conformance) -> None:
    c = osf_conf
    client = c.roles.mcp(c.roles.need("desktop_token"))
    c.desktop.sync()
    args = c.agent.run_args()
    out = c.agent.run(args, by=client)
    c.wire.decisive()
    c.expect(out.refused, f"run_graph_session with the desktop token answered {out.describe()}")
    c.desktop.expect_nothing_queued(args["arguments"], "the desktop token was refused")


@check(
    "R2-query-token-refused",
    "An agent token sent in the query string (access_token) instead of the Authorization "
    "header is refused and queues nothing.",
    level="documented",
)
def check_query_token_refused(osf_conf: Conformance) -> None:
    c = osf_conf
    token = c.roles.need("agent_token")
    c.desktop.sync()
    args = c.agent.run_args()
    joiner = "&" if "?" in c.target.mcp_url else "?"
    out = _with_headers(c, {}, "run_graph_session", args, f"{joiner}access_token={token}")
    c.wire.decisive()
    c.expect(out.refused, f"a token in the query string was accepted: {out.describe()}")
    c.desktop.expect_nothing_queued(args["arguments"], "the query-string token was refused")


# ---------------------------------------------------------------------- R2 shapes
@check(
    "R2-unauthenticated-401",
    "run_graph_session with no token, an unknown or a malformed one gets HTTP 401 with a "
    "Bearer challenge naming resource_metadata and scope osfoundry:run.",
)
def check_unauthenticated_401(osf_conf: Conformance) -> None:
    for label, out, _ in _unauthenticated(osf_conf):
        _expect_challenge(osf_conf, out, 401, f"run_graph_session with {label}")


@check(
    "R2-insufficient-scope-403",
    "A read-only agent's run_graph_session and cancel_graph_run get HTTP 403 with "
    "error=insufficient_scope, scope osfoundry:run and resource_metadata.",
)
def check_insufficient_scope_403(osf_conf: Conformance) -> None:
    c = osf_conf
    reader = c.roles.read_agent
    command_id = c.agent.queue()["command_id"]
    out = c.agent.run(c.agent.run_args(), by=reader)
    c.wire.decisive()
    _expect_challenge(c, out, 403, "a read-only agent's run_graph_session", INSUFFICIENT_SCOPE)
    out = c.agent.call("cancel_graph_run", {"command_id": command_id}, by=reader)
    c.wire.decisive()
    _expect_challenge(c, out, 403, "a read-only agent's cancel_graph_run", INSUFFICIENT_SCOPE)


@check(
    "R2-read-token-reads",
    "An agent with osfoundry:read only can list the project's sessions and read runs "
    "(an unknown one is refused as a domain error, not with 401/403; its exact text is "
    "D5's check).",
)
def check_read_token_reads(osf_conf: Conformance) -> None:
    c = osf_conf
    reader = c.roles.read_agent
    c.desktop.sync()
    c.agent.ok(
        "list_graph_sessions",
        {"project_id": c.roles.project_id},
        "a read-only agent's list",
        by=reader,
    )
    out = c.agent.call("get_graph_run", {"command_id": str(uuid.uuid4())}, by=reader)
    c.expect(
        out.kind in ("tool_error", "rpc_error") and out.status not in (401, 403),
        f"a read-only agent's read of an unknown run should be refused as a domain error "
        f"(the scope allows it), got {out.describe()}",
    )
    if out.message != RUN_NOT_FOUND:
        c.expect.note(f"its text is {out.message!r} (D5's checks judge it)")


@check(
    "R2-desktop-token-status",
    "The desktop's relay token on tools/call gets HTTP 401 or 403.",
)
def check_desktop_token_status(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    out = c.agent.run(c.agent.run_args(), by=c.roles.mcp(c.roles.need("desktop_token")))
    c.wire.decisive()
    c.expect(
        out.status in (401, 403),
        f"the desktop token on tools/call got {out.describe()}; expected HTTP 401 or 403",
    )


@check(
    "R2-resource-metadata",
    "The protected-resource metadata, at the URL the 401 challenge names (else the "
    "path-inserted well-known URI, then the root form), names the MCP URL as resource, "
    "the authorization servers and scopes osfoundry:read and osfoundry:run.",
)
def check_resource_metadata(osf_conf: Conformance) -> None:
    c = osf_conf
    out = _with_headers(c, {}, "get_graph_run", {"command_id": str(uuid.uuid4())})
    url, reply = fetch_metadata(c.wire, c.target, out.headers.get("www-authenticate"))
    c.expect.equal(reply.status, 200, f"HTTP status of GET {url}")
    try:
        doc = reply.json()
    except ValueError:
        c.expect.fail(f"{url} is not JSON: {reply.body[:200]!r}")
    c.expect(isinstance(doc, dict), f"{url} is not a JSON object")
    c.expect.equal(
        str(doc.get("resource", "")).rstrip("/"), c.target.mcp_url.rstrip("/"), "resource"
    )
    servers = doc.get("authorization_servers")
    c.expect(
        isinstance(servers, list) and servers and all(isinstance(s, str) for s in servers),
        f"authorization_servers should be a non-empty list of URLs, got {servers!r}",
    )
    scopes = doc.get("scopes_supported")
    c.expect(
        isinstance(scopes, list) and {READ_SCOPE, RUN_SCOPE} <= set(scopes),
        f"scopes_supported should list {READ_SCOPE} and {RUN_SCOPE}, got {scopes!r}",
    )


# ---------------------------------------------------------------------- R12
@check(
    "R12-no-token-401",
    "The relay's sync and control poll without a token get HTTP 401.",
)
def check_relay_no_token(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    reply = c.desktop.raw(
        "sync", body={"project_id": c.roles.project_id, "sessions": c.roles.sessions}, token=None
    )
    c.expect.equal(reply.status, 401, "HTTP status of a sync without a token")
    reply = c.desktop.raw("control", command_id, token=None)
    c.expect.equal(reply.status, 401, "HTTP status of a control poll without a token")


@check(
    "R12-unknown-token-401",
    "The relay's sync and control poll with an unknown token get HTTP 401.",
)
def check_relay_unknown_token(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    token = _unknown_token()
    reply = c.desktop.raw(
        "sync", body={"project_id": c.roles.project_id, "sessions": c.roles.sessions}, token=token
    )
    c.expect.equal(reply.status, 401, "HTTP status of a sync with an unknown token")
    reply = c.desktop.raw("control", command_id, token=token)
    c.expect.equal(reply.status, 401, "HTTP status of a control poll with an unknown token")


@check(
    "R12-agent-token-403",
    "An agent's token on the relay's sync, start, control and complete gets HTTP 403, and "
    "nothing changes.",
    schedule="long-chain",
)
def check_relay_agent_token(osf_conf: Conformance) -> None:
    c = osf_conf
    token = c.roles.need("agent_token")
    command_id = c.agent.queue()["command_id"]
    try:
        for action, body in (
            # the fixed sessions: a server that takes the sync changes nothing others share
            ("sync", {"project_id": c.roles.project_id, "sessions": c.roles.sessions}),
            ("start", {"execution_id": "osf-conf-agent-as-desktop"}),
            ("control", None),
            ("complete", {"execution_id": "osf-conf-agent-as-desktop", "status": CANCELLED}),
        ):
            reply = c.desktop.raw(
                action, None if action == "sync" else command_id, body, token=token
            )
            c.wire.decisive()
            c.expect.equal(reply.status, 403, f"HTTP status of {action} with an agent's token")
        view = c.agent.view(command_id)
        c.expect.equal(view.get("status"), QUEUED, "the run's status afterwards")
    finally:
        c.desktop.sync()


@check(
    "R12-other-owner-sync",
    "Another account's desktop token cannot sync this project (refused with HTTP 401, 403 or 404).",
)
def check_relay_other_owner_sync(osf_conf: Conformance) -> None:
    c = osf_conf
    token = c.roles.need("stranger_desktop_token")
    try:
        # the fixed sessions: a server that takes the sync changes nothing others share
        body = {"project_id": c.roles.project_id, "sessions": c.roles.sessions}
        reply = c.desktop.raw("sync", body=body, token=token)
        c.wire.decisive()
        c.expect(
            reply.status in (401, 403, 404),
            f"another owner's sync of this project got HTTP {reply.status}; expected it "
            "refused (401, 403 or 404)",
        )
        c.expect.note(f"refused with HTTP {reply.status}")
    finally:
        if c.target.creds.desktop_token:
            c.desktop.sync()
