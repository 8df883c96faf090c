"""A6 and R2 from the agent's side: refusals are final, and the token travels only in
the Authorization header.

The refusals are the server's own answers: a session nobody shares is `Graph session
not found or access removed` (R3), a token without the run scope is HTTP 403 and a
revoked one HTTP 401 (R2). The agent reports the failure (``error`` set, ``status``
null: no run), exits non-zero, with at most two starts and no run. In every one of
these checks and in a plain run, the token must appear only in the
``Authorization: Bearer`` header of every request the server saw with it (never in a
URL, another header or a body) and never in what the agent printed.
"""

from __future__ import annotations

import secrets

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.agent import AgentConformance, AgentOutcome
from pytest_osfoundry.conformance.expected import RUN_SCOPE

MAX_STARTS = 2
"""A6: at most two starts for a refused one."""


def _expect_refused(conf: AgentConformance, outcome: AgentOutcome, refusal: str) -> None:
    """Fail unless the agent took ``refusal`` (or what it saw first) as final: a tool
    called, at most two starts, no run, exit non-zero, the error reported with no
    status; and kept its token."""
    starts = conf.calls("run_graph_session")
    conf.measures["starts"] = len(starts)
    # A start is not required: an agent may look first (list_graph_sessions) and stop
    # there, on a 401 or on a listing without its session; it must have called a tool.
    conf.expect(any(c.tool is not None for c in conf.calls()), "the agent never called a tool")
    conf.expect(
        len(starts) <= MAX_STARTS,
        f"the agent sent {len(starts)} starts although each was refused with {refusal}: "
        f"the answer is final; report it (at most {MAX_STARTS} starts)",
    )
    conf.expect(not conf.runs(), f"{len(conf.runs())} run(s) queued although refused")
    conf.expect(not outcome.stopped, "the agent did not end within its deadline; it was stopped")
    conf.expect(
        outcome.exit_code != 0,
        f"the agent exited 0 after {refusal}: exit non-zero when no run can be queued",
    )
    report = outcome.report
    conf.expect(
        isinstance(report, dict) and bool(report.get("error")) and report.get("status") is None,
        f"the report should carry the error and status null (no run was queued): "
        f"{outcome.report_problem or report!r}",
    )
    conf.expect_token_kept()


def _too_many_starts(conf: AgentConformance) -> bool:
    return len(conf.calls("run_graph_session")) > MAX_STARTS


@check(
    "A6-unknown-session",
    "A run task naming a Graph session nobody shares (`Graph session not found or "
    "access removed`) is reported as a failure: at most two starts, no run, exit "
    "non-zero, the token only in the Authorization header.",
)
def check_unknown_session(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    task = {
        "kind": "run",
        "graph_session_id": "gs_" + secrets.token_hex(16),
        "arguments": {"topic": "nobody shares this session"},
    }
    outcome = conf.run(task, stop_when=lambda: _too_many_starts(conf))
    _expect_refused(conf, outcome, "`Graph session not found or access removed`")


@check(
    "A6-read-only-token",
    "With a token that lacks the run scope (HTTP 403 on run_graph_session) the agent "
    "reports the failure: at most two starts, no run, exit non-zero, the token only in "
    "the Authorization header.",
)
def check_read_only_token(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.without_scope(RUN_SCOPE)
    outcome = conf.run(conf.run_task(), stop_when=lambda: _too_many_starts(conf))
    _expect_refused(conf, outcome, "HTTP 403 (insufficient_scope)")


@check(
    "A6-revoked-token",
    "With a revoked token (HTTP 401 on every tool call) the agent reports the failure: "
    "at most two starts, no run, exit non-zero, the token only in the Authorization "
    "header.",
)
def check_revoked_token(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.revoke_token()
    outcome = conf.run(conf.run_task(), stop_when=lambda: _too_many_starts(conf))
    _expect_refused(conf, outcome, "HTTP 401 (invalid_token)")


@check(
    "R2-agent-token-in-header",
    "In a plain run the agent's token appears only in the Authorization: Bearer header "
    "of every request (never in a URL, another header or a body) and never in what "
    "the agent prints; the run is reported.",
    area="agent",
)
def check_token_in_header(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    outcome = conf.run(conf.run_task())
    conf.expect_token_kept()
    conf.expect_reported(outcome, conf.expect_one_run())
