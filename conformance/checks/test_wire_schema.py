"""MCP's schema on the wire (R1): every JSON-RPC answer the suite receives matches it.

Every check's transport validates each answer against the definition of its method in
the revision the request spoke (:func:`~pytest_osfoundry.conformance.ledger_of`).
One check per message family judges what the process received: it sends a request
of its family itself in every revision the target serves (so it has evidence when run
alone, and a revision the domain checks do not speak is judged too), then fails on any
answer of the family that broke the schema -- that answer's exchange attached, the
method, the JSON pointer and the schema path named. The checks are ``last``: under
``--osf-concurrency`` they judge after every other check has ended (they send their
own requests from the start, alongside the others: they change nothing another
check reads, and the ledger counts every answer whenever it came), and this module
is collected last, so a serial run judges every earlier answer too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from pytest_osfoundry.client import McpClient
from pytest_osfoundry.conformance import (
    NOT_SERVED,
    Conformance,
    check,
    ledger_of,
    modern_body,
    modern_headers,
    need_revision,
    served_revisions,
)
from pytest_osfoundry.conformance.expected import MODERN_REVISION

UNKNOWN_METHOD = "osf/no-such-method"


def _on_each(c: Conformance, revisions: Sequence[str], send: Callable[[McpClient], object]) -> None:
    """A ready client with the agent's token for each of ``revisions``, then ``send`` on
    it: the revisions at once (their requests are independent, and these checks run
    last, so their chains are the tail of a concurrent run); the first failure raised."""
    # The agent's token, as every probe whose rule is not about its absence (R2).
    token = c.roles.need("agent_token")

    def one(revision: str) -> None:
        send(c.wire.initialized(c.roles.mcp(token, protocol=revision)))

    if len(revisions) < 2:
        for revision in revisions:
            one(revision)
        return
    with ThreadPoolExecutor(len(revisions), thread_name_prefix="osf-wire-schema") as pool:
        for future in [pool.submit(one, revision) for revision in revisions]:
            future.result()


def _judge(c: Conformance, family: str) -> None:
    """Once every other check has ended, fail on the first answer of ``family`` that
    broke the schema (all counted)."""
    c.after_the_rest()
    ledger = ledger_of(c.target)
    judged = ledger.judged.get(family, 0)
    findings = ledger.findings.get(family, [])
    if findings:
        first = findings[0]
        c.wire.show(first.exchange)
        broken = ledger.broken.get(family, 0)
        c.expect.fail(
            f"{broken} of {judged} {family} answers break MCP's schema: {first.describe()}"
        )
    if judged == 0:  # no answer of the family at all: the checks of its method say so
        c.expect.note(f"no {family} answer came back to judge")
        return
    c.expect.note(f"{judged} {family} answers judged")


@check(
    "R1-wire-schema-discover",
    "Every server/discover answer matches MCP 2026-07-28's DiscoverResultResponse.",
    schedule="last-within",
)
def check_wire_schema_discover(osf_conf: Conformance) -> None:
    c = osf_conf
    need_revision(c.target, MODERN_REVISION)
    rpc_id = c.target.next_rpc_id()
    headers = modern_headers("server/discover")
    token = c.target.creds.agent_token  # as every probe whose rule is not about its absence
    if token:
        headers["Authorization"] = f"Bearer {token}"
    c.wire.http("POST", c.target.mcp_url, headers, modern_body(rpc_id, "server/discover"))
    _judge(c, "discover")


@check(
    "R1-wire-schema-initialize",
    "Every initialize answer matches the InitializeResult of the revision it answers.",
    schedule="last-within",
)
def check_wire_schema_initialize(osf_conf: Conformance) -> None:
    c = osf_conf
    legacy = served_revisions(c.target).legacy
    if not legacy:
        import pytest

        pytest.skip(f"{NOT_SERVED}the target serves no revision with initialize")
    _on_each(c, legacy, lambda client: None)  # connecting runs initialize
    _judge(c, "initialize")


@check(
    "R1-wire-schema-tools-list",
    "Every tools/list answer matches the revision's ListToolsResult (each inputSchema "
    "an object schema).",
    schedule="last-within",
)
def check_wire_schema_tools_list(osf_conf: Conformance) -> None:
    c = osf_conf
    _on_each(c, served_revisions(c.target).served, lambda client: c.wire.rpc(client, "tools/list"))
    _judge(c, "tools-list")


@check(
    "R1-wire-schema-tools-call",
    "Every tools/call result matches the revision's CallToolResult (content items typed) "
    "in a JSON-RPC 2.0 response.",
    schedule="last-within",
)
def check_wire_schema_tools_call(osf_conf: Conformance) -> None:
    c = osf_conf
    project = c.roles.project_id
    _on_each(
        c,
        served_revisions(c.target).served,
        lambda client: c.wire.call(client, "list_graph_sessions", {"project_id": project}),
    )
    _judge(c, "tools-call")


@check(
    "R1-wire-schema-error",
    "Every JSON-RPC error answer matches the revision's error response (integer code, "
    "string message).",
    schedule="last-within",
)
def check_wire_schema_error(osf_conf: Conformance) -> None:
    c = osf_conf
    _on_each(
        c, served_revisions(c.target).served, lambda client: c.wire.rpc(client, UNKNOWN_METHOD)
    )
    _judge(c, "error")
