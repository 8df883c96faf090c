"""D4, D5, A4 and A6 from the agent's side: finding a session by name, final answers,
several items for one desktop."""

from __future__ import annotations

import itertools
import secrets

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.agent import AgentConformance, AgentFault

MAX_LIMIT = 50
"""R8: list_graph_sessions takes a limit of 1-50."""


@check(
    "D4-agent-run-by-name",
    "A run-by-name task finds the session with list_graph_sessions (a valid limit, if "
    "any), queues that session once and reports its run.",
    area="agent",
)
def check_run_by_name(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    session = conf.session(1)
    task = {"kind": "run-by-name", "session_name": session["name"], "arguments": {"n": 1}}
    outcome = conf.run(task)
    listings = conf.calls("list_graph_sessions")
    conf.expect(bool(listings), "the agent never called list_graph_sessions to find the session")
    for call in listings:
        arguments = call.arguments or {}
        limit = arguments.get("limit")
        conf.expect(
            arguments.get("project_id") == conf.project_id,
            f"list_graph_sessions asked for project {arguments.get('project_id')!r}, not "
            "OSF_AGENT_PROJECT_ID",
        )
        conf.expect(
            limit is None or (type(limit) is int and 1 <= limit <= MAX_LIMIT),
            f"list_graph_sessions was sent the limit {limit!r}: R8 takes 1-{MAX_LIMIT}",
        )
    run = conf.expect_one_run()
    conf.expect(
        run.graph_session_id == session["graph_session_id"],
        f"the agent queued {run.graph_session_id}, not the session named {session['name']!r}",
    )
    conf.expect_reported(outcome, run)


@check(
    "D4-agent-unknown-name",
    "A run-by-name task naming no shared session queues nothing, reports no status and "
    "exits non-zero.",
    area="agent",
)
def check_unknown_name(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    name = f"No such session {secrets.token_hex(3)}"
    outcome = conf.run({"kind": "run-by-name", "session_name": name, "arguments": {}})
    starts = conf.calls("run_graph_session")
    conf.expect(
        not starts and not conf.runs(),
        f"the agent sent {len(starts)} start(s) for a session name nobody shares: it must "
        "find the session first and queue nothing when there is none",
    )
    conf.expect(not outcome.stopped, "the agent did not end within its deadline; it was stopped")
    conf.expect(
        outcome.exit_code != 0,
        "the agent exited 0 although no run was queued: exit non-zero when the task cannot "
        "reach a terminal status",
    )
    report = outcome.report
    conf.expect(
        isinstance(report, dict) and report.get("status") is None,
        f"the report should say status null (no run was queued): "
        f"{outcome.report_problem or report!r}",
    )


@check(
    "A6-not-found-is-final",
    "When every get_graph_run of its run answers `Graph run not found or access "
    "removed` (D5), the agent reports a failure and exits non-zero, with one start and "
    "at most one more read.",
)
def check_not_found_is_final(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.fault(AgentFault("get_graph_run", "not-found", times=None))
    outcome = conf.run(conf.run_task(), stop_when=lambda: len(conf.reads()) > 3)
    reads = conf.reads()
    conf.measures["reads"] = len(reads)
    conf.expect(
        len(reads) <= 2,
        f"the agent read its run {len(reads)} times although each answered D5 (`Graph run "
        "not found or access removed`): the answer is final, at most one more read",
    )
    starts = conf.calls("run_graph_session")
    conf.expect(
        len(starts) == 1 and len(conf.runs()) == 1,
        f"the agent sent {len(starts)} starts and queued {len(conf.runs())} runs after D5: "
        "no new run",
    )
    conf.expect(not outcome.stopped, "the agent did not end within its deadline; it was stopped")
    conf.expect(outcome.exit_code != 0, "the agent exited 0 after D5: report it as a failure")
    report = outcome.report
    conf.expect(
        isinstance(report, dict) and bool(report.get("error")),
        f"the report should carry the error: {outcome.report_problem or report!r}",
    )


@check(
    "A4-no-fan-out",
    "A run-items task of three items for one desktop queues one run at a time (or one "
    "run carrying them all): never two queued or running at once; each reported.",
)
def check_no_fan_out(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    items = [{"item": n} for n in (1, 2, 3)]
    session = conf.session()["graph_session_id"]
    outcome = conf.run({"kind": "run-items", "graph_session_id": session, "items": items})
    runs = conf.runs()
    conf.expect(bool(runs), "the agent queued no run for three items")
    overlaps = [
        (a.command_id, b.command_id)
        for a, b in itertools.pairwise(runs)
        if a.finished_at is None or b.queued_at < a.finished_at
    ]
    conf.measures["runs"] = len(runs)
    conf.expect(
        not overlaps,
        f"{len(runs)} runs for three items, {len(overlaps)} queued while the one before was "
        "not finished: one desktop runs one at a time, so fanning out is the slowest "
        "schedule; queue the next item when the previous one is terminal",
    )
    conf.expect(not outcome.stopped, "the agent did not end within its deadline; it was stopped")
    conf.expect(outcome.exit_code == 0, f"the agent exited {outcome.exit_code} after its items")
    report = outcome.report
    if len(runs) > 1:
        conf.expect(
            isinstance(report, list) and len(report) == len(runs),
            f"the report of run-items should list one entry per run: "
            f"{outcome.report_problem or report!r}",
        )
        assert isinstance(report, list)
        for entry, run in zip(report, runs, strict=True):
            conf.expect_entry(entry, run)
