"""R5 from the agent's side (opt-in, ``--osf-agent-restart``): a key outlives its agent.

The reply to the agent's first start is lost (the server applied it, then dropped the
connection unanswered); as soon as the server has recorded that start, the suite kills
the agent with SIGKILL (its whole process group, no warning: a crash, a power cut),
then starts it again with the same task and the same ``OSF_AGENT_STATE_DIR``. The
restarted agent resumes: a start with the key and arguments of before (the server
answers the same ticket), or a read of the command id of before. Exactly one run is
queued, and the second start reports it (exit 0).
"""

from __future__ import annotations

from typing import Any

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.agent import AgentConformance, AgentFault, McpCall


def _asked(call: McpCall) -> tuple[Any, Any, Any]:
    arguments = call.arguments or {}
    return (
        arguments.get("graph_session_id"),
        arguments.get("idempotency_key"),
        arguments.get("arguments"),
    )


@check(
    "R5-agent-resumes-after-restart",
    "Killed (SIGKILL) after a start whose reply was lost, and started again with the same "
    "task and OSF_AGENT_STATE_DIR, the agent resumes with the same key and arguments or "
    "the same command id: exactly one run, reported by the second start.",
    area="agent",
    opt_in="--osf-agent-restart",
)
def check_resumes_after_restart(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.fault(AgentFault("run_graph_session", "drop-after"))
    task = conf.run_task()

    def start_recorded() -> bool:
        return any(c.status == 0 for c in conf.calls("run_graph_session"))

    killed = conf.run_killed(task, start_recorded, within=conf.deadline())
    before = conf.calls()
    starts_before = [c for c in before if c.tool == "run_graph_session"]
    conf.expect(
        bool(starts_before),
        f"the agent sent no run_graph_session within {conf.deadline():g} s"
        if killed.killed
        else f"the agent ended (exit {killed.exit_code}) before its first start reached the "
        "server; the suite kills it once the server has recorded that start",
    )
    runs_before = conf.runs()
    outcome = conf.run(task)
    after = conf.calls()[len(before) :]
    starts_after = [c for c in after if c.tool == "run_graph_session"]
    asked_before = [_asked(c) for c in starts_before]
    known_ids = {r.command_id for r in runs_before}
    same_key = [c for c in starts_after if _asked(c) in asked_before]
    same_id = [c for c in after if c.tool == "get_graph_run" and _ids(c) & known_ids]
    conf.measures["starts_before_kill"] = len(starts_before)
    conf.measures["starts_after_restart"] = len(starts_after)
    conf.measures["resumed_by"] = "key" if same_key else "command id" if same_id else None
    runs = conf.runs()
    conf.expect(
        len(runs) == 1,
        f"the agent queued {len(runs)} runs across its restart for one intended run: the "
        "restarted agent must resume from OSF_AGENT_STATE_DIR (the key saved before the "
        "start, the command id saved when the ticket came), not start afresh",
    )
    conf.expect(
        bool(same_key or same_id),
        "the restarted agent neither asked again with the key and arguments of before nor "
        "read the command id of before: it did not resume from OSF_AGENT_STATE_DIR",
    )
    conf.expect_reported(outcome, runs[0])


def _ids(call: McpCall) -> set[str]:
    command_id = (call.arguments or {}).get("command_id")
    return {command_id} if isinstance(command_id, str) else set()
