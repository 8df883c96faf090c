"""Access: unknown runs (D5), runs only their agent can see (D6), not-found messages (R3).

D6 is checked byte for byte. One client, on one MCP session, sends the tool call for
another agent's real command id, for a fresh UUID and for malformed ids; the HTTP
status, the headers that could carry meaning and the whole JSON-RPC answer must be
identical (the answer's echo of the request's own JSON-RPC id aside: MCP forbids
reusing an id in a session, so it necessarily differs). Headers that legitimately
differ between any two replies (dates, request and trace ids, caching and connection
details) are left out.
"""

from __future__ import annotations

import random
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_osfoundry.client import McpClient
from pytest_osfoundry.conformance import (
    Conformance,
    check,
    decode_reply,
    mann_whitney_z,
    unshared_session_id,
)
from pytest_osfoundry.conformance.expected import (
    PROJECT_NOT_FOUND,
    QUEUED,
    RUN_NOT_FOUND,
    SESSION_NOT_FOUND,
)
from pytest_osfoundry.http import Response

MALFORMED = ("not-a-uuid", "' OR '1'='1", "00000000-0000-0000-0000-00000000000G")

#: Reply headers that differ between any two replies and are not compared (D6).
VOLATILE_HEADERS = frozenset(
    {
        "date",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "x-request-id",
        "request-id",
        "x-correlation-id",
        "traceparent",
        "tracestate",
        "server-timing",
        "set-cookie",
        "age",
        "via",
        "etag",
        "last-modified",
        "expires",
        "alt-svc",
        "nel",
        "report-to",
        "x-runtime",
        "x-response-time",
        "cf-ray",
        "x-amzn-requestid",
        "x-amzn-trace-id",
        "x-amz-cf-id",
        "x-amz-cf-pop",
        "x-cache",
        "x-served-by",
        "x-timer",
        "fly-request-id",
        "x-vercel-id",
    }
)


@dataclass(frozen=True)
class _Answer:
    reply: Response
    rpc_id: int


def _answer(conf: Conformance, client: McpClient, tool: str, command_id: str) -> _Answer:
    __tracebackhide__ = True
    rpc_id = conf.target.next_rpc_id()
    reply = conf.wire.rpc(
        client, "tools/call", {"name": tool, "arguments": {"command_id": command_id}}, rpc_id
    )
    return _Answer(reply, rpc_id)


def _fingerprint(answer: _Answer) -> tuple[int, dict[str, str], bytes]:
    """Status, compared headers and the JSON-RPC answer with its (necessarily
    different) echoed request id replaced by ``<id>``."""
    reply = answer.reply
    out = decode_reply(reply)
    headers = {
        k.lower(): v
        for k, v in reply.headers.items()
        if k.lower() not in VOLATILE_HEADERS and not k.lower().startswith("x-envoy-")
    }
    echoed = re.compile(rb'("id"\s*:\s*)' + str(answer.rpc_id).encode() + rb"(?![0-9])")
    return reply.status, headers, echoed.sub(rb"\1<id>", out.raw or reply.body, count=1)


def _same(conf: Conformance, label: str, reply: _Answer, fresh: _Answer) -> None:
    __tracebackhide__ = True
    status, headers, body = _fingerprint(reply)
    f_status, f_headers, f_body = _fingerprint(fresh)
    conf.expect(
        status == f_status,
        f"{label} got HTTP {status}, a fresh UUID got HTTP {f_status}",
    )
    if headers != f_headers:
        names = sorted(
            n for n in set(headers) | set(f_headers) if headers.get(n) != f_headers.get(n)
        )
        conf.expect.fail(
            f"{label} and a fresh UUID got different headers: "
            + "; ".join(f"{n}: {headers.get(n)!r} vs {f_headers.get(n)!r}" for n in names)
        )
    if body != f_body:
        mine = decode_reply(reply.reply).describe()
        theirs = decode_reply(fresh.reply).describe()
        if mine != theirs:
            conf.expect.fail(f"{label} got {mine}, a fresh UUID got {theirs}")
        at = next(
            (i for i, (a, b) in enumerate(zip(body, f_body, strict=False)) if a != b),
            min(len(body), len(f_body)),
        )
        conf.expect.fail(
            f"{label} and a fresh UUID got different bytes from byte {at}: "
            f"{body[max(0, at - 40) : at + 80].decode('utf-8', 'replace')!r} vs "
            f"{f_body[max(0, at - 40) : at + 80].decode('utf-8', 'replace')!r}"
        )


def _indistinguishable(
    conf: Conformance, client: McpClient, tool: str, ids: Sequence[tuple[str, str]]
) -> None:
    __tracebackhide__ = True
    fresh = _answer(conf, client, tool, str(uuid.uuid4()))
    out = decode_reply(fresh.reply)
    conf.expect(
        out.refused,
        f"{tool} of a fresh UUID should be refused (D5), got {out.describe()}",
    )
    for label, command_id in ids:
        reply = _answer(conf, client, tool, command_id)
        conf.wire.decisive()
        _same(conf, label, reply, fresh)


def _expect_untouched(conf: Conformance, command_id: str) -> None:
    __tracebackhide__ = True
    view = conf.agent.view(command_id)
    conf.expect(
        view.get("status") == QUEUED and view.get("cancel_requested") is False,
        f"the run changed: it is now status {view.get('status')!r}, cancel_requested "
        f"{view.get('cancel_requested')!r}",
    )
    conf.expect(
        conf.desktop.command(conf.desktop.sync(), command_id) is not None,
        "the desktop's sync no longer delivers the run: it was cancelled",
    )


# ---------------------------------------------------------------------- D5
@check(
    "D5-unknown-run",
    "get_graph_run of a command id nobody queued is refused with 'Graph run not found or "
    "access removed'.",
)
def check_unknown_run(osf_conf: Conformance) -> None:
    out = osf_conf.agent.call("get_graph_run", {"command_id": str(uuid.uuid4())})
    osf_conf.expect.error(out, RUN_NOT_FOUND, "get_graph_run of an unknown id")


# ---------------------------------------------------------------------- D6
@check(
    "D6-get-other-agent",
    "Another agent of the same account reading a real command id gets byte for byte the "
    "answer a fresh UUID gets.",
)
def check_get_other_agent(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    _indistinguishable(
        c, c.roles.other_agent, "get_graph_run", [("another agent's real command id", command_id)]
    )


@check(
    "D6-get-other-account",
    "An agent of another account reading a real command id gets byte for byte the answer "
    "a fresh UUID gets.",
)
def check_get_other_account(osf_conf: Conformance) -> None:
    c = osf_conf
    stranger = c.roles.stranger
    command_id = c.agent.queue()["command_id"]
    _indistinguishable(
        c, stranger, "get_graph_run", [("another account's real command id", command_id)]
    )


@check(
    "D6-get-malformed-id",
    "get_graph_run of malformed command ids gets byte for byte the answer a fresh UUID gets.",
)
def check_get_malformed_id(osf_conf: Conformance) -> None:
    _indistinguishable(
        osf_conf,
        osf_conf.roles.other_agent,
        "get_graph_run",
        [(f"malformed id {m!r}", m) for m in MALFORMED],
    )


@check(
    "D6-cancel-other-agent",
    "Another agent cancelling a real command id gets byte for byte the answer a fresh UUID "
    "gets, and the run is not cancelled.",
)
def check_cancel_other_agent(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    _indistinguishable(
        c,
        c.roles.other_agent,
        "cancel_graph_run",
        [("another agent's cancel of a real command id", command_id)],
    )
    _expect_untouched(c, command_id)


@check(
    "D6-cancel-other-account",
    "An agent of another account cancelling a real command id gets byte for byte the "
    "answer a fresh UUID gets, and the run is not cancelled.",
)
def check_cancel_other_account(osf_conf: Conformance) -> None:
    c = osf_conf
    stranger = c.roles.stranger
    command_id = c.agent.queue()["command_id"]
    _indistinguishable(
        c,
        stranger,
        "cancel_graph_run",
        [("another account's cancel of a real command id", command_id)],
    )
    _expect_untouched(c, command_id)


@check(
    "D6-cancel-malformed-id",
    "cancel_graph_run of malformed command ids gets byte for byte the answer a fresh UUID gets.",
)
def check_cancel_malformed_id(osf_conf: Conformance) -> None:
    _indistinguishable(
        osf_conf,
        osf_conf.roles.other_agent,
        "cancel_graph_run",
        [(f"malformed id {m!r}", m) for m in MALFORMED],
    )


def _median(values: Sequence[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


@check(
    "D6-timing",
    "Latencies of get_graph_run for another agent's real id and for a malformed id are "
    "not told apart from those for fresh UUIDs (Mann-Whitney z within ±4, or a median "
    "gap under 2 ms and 10 %).",
    opt_in="--osf-timing",
    schedule="alone",
)
def check_timing(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    other = c.wire.initialized(c.roles.other_agent)
    samples: dict[str, list[float]] = {"real": [], "fresh": [], "malformed": []}
    rng = random.Random()
    for _ in range(c.target.timing_samples):
        cases = list(samples)
        rng.shuffle(cases)
        for case in cases:
            cid = {"real": command_id, "malformed": MALFORMED[0]}.get(case, str(uuid.uuid4()))
            start = time.perf_counter()
            _answer(c, other, "get_graph_run", cid)
            samples[case].append(time.perf_counter() - start)
    fresh = samples["fresh"]
    notes = []
    labels = {"real": "another agent's real command id", "malformed": "a malformed id"}
    for case in ("real", "malformed"):
        z = mann_whitney_z(samples[case], fresh)
        gap = _median(samples[case]) - _median(fresh)
        notes.append(f"{case}: median {_median(samples[case]) * 1000:.2f} ms, z {z:+.1f}")
        leak = abs(z) > 4 and abs(gap) > 0.002 and abs(gap) > 0.1 * _median(fresh)
        c.expect(
            not leak,
            f"{labels[case]} is answered measurably {'slower' if gap > 0 else 'faster'} than "
            f"fresh UUIDs: median {_median(samples[case]) * 1000:.2f} ms against "
            f"{_median(fresh) * 1000:.2f} ms (z {z:+.1f}, {len(fresh)} samples each)",
        )
    c.expect.note(f"fresh: median {_median(fresh) * 1000:.2f} ms; " + "; ".join(notes))


# ---------------------------------------------------------------------- R3 messages
@check(
    "R3-session-not-found",
    "run_graph_session of a session id never shared is refused with 'Graph session not "
    "found or access removed' and queues nothing.",
    area="access",
)
def check_session_not_found(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    args = c.agent.run_args(session={"graph_session_id": unshared_session_id(c.roles.project_id)})
    out = c.agent.run(args)
    c.wire.decisive()
    c.expect.error(out, SESSION_NOT_FOUND, "run_graph_session of an unshared session")
    c.desktop.expect_nothing_queued(args["arguments"], "the unshared session was refused")


@check(
    "R3-session-other-account",
    "An agent of another account running a session shared in this project gets 'Graph "
    "session not found or access removed' and queues nothing.",
    area="access",
)
def check_session_other_account(osf_conf: Conformance) -> None:
    c = osf_conf
    stranger = c.roles.stranger
    c.desktop.sync()
    args = c.agent.run_args()
    out = c.agent.run(args, by=stranger)
    c.wire.decisive()
    c.expect.error(out, SESSION_NOT_FOUND, "another account running this project's session")
    c.desktop.expect_nothing_queued(args["arguments"], "another account's run was refused")


@check(
    "R3-project-not-found",
    "list_graph_sessions of a project that does not exist is refused with 'Project not "
    "found or access removed'.",
    area="access",
)
def check_project_not_found(osf_conf: Conformance) -> None:
    out = osf_conf.agent.call(
        "list_graph_sessions", {"project_id": f"osf-conformance-no-such-project-{uuid.uuid4().hex}"}
    )
    osf_conf.expect.error(out, PROJECT_NOT_FOUND, "list_graph_sessions of an unknown project")


@check(
    "R3-project-not-connected",
    "list_graph_sessions of another account's project is refused with 'Project not found "
    "or access removed'.",
    area="access",
)
def check_project_not_connected(osf_conf: Conformance) -> None:
    c = osf_conf
    project = c.roles.need("stranger_project_id")
    out = c.agent.call("list_graph_sessions", {"project_id": project})
    c.expect.error(out, PROJECT_NOT_FOUND, "list_graph_sessions of another account's project")
