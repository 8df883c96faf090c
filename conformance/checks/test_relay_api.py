"""The desktop relay API: sync (D10), start (R9), control (R10), complete (R11), 404s (R13).

The suite is the desktop here, with the desktop token. It only ever starts or
completes commands it queued itself, so checks running in parallel never touch
each other's runs.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pytest_osfoundry.conformance._harness import (
    Conformance,
    extra_sessions,
    is_utc_timestamp,
    overflow_sessions,
)
from pytest_osfoundry.conformance._registry import check
from pytest_osfoundry.relay._desktop import NO_LONGER_SHARED

ATTEMPTS = 6


def _sync_answer(conf: Conformance, sessions: list[dict[str, Any]]) -> tuple[int, Any]:
    __tracebackhide__ = True
    reply = conf.relay_raw("sync", body={"project_id": conf.project_id, "sessions": sessions})
    try:
        return reply.status, reply.json()
    except ValueError:
        return reply.status, None


def _status_of(body: bytes) -> Any:
    try:
        data = json.loads(body or b"null")
    except ValueError:
        return f"<not JSON: {body[:80]!r}>"
    return data.get("status") if isinstance(data, dict) else data


def _listed_ids(conf: Conformance) -> set[str]:
    __tracebackhide__ = True
    answer = conf.ok(
        conf.agent,
        "list_graph_sessions",
        {"project_id": conf.project_id},
        "listing the shared sessions",
    )
    sessions = answer.get("sessions")
    return {str(s.get("graph_session_id")) for s in sessions or [] if isinstance(s, dict)}


def _completed(conf: Conformance, result: Any = "done") -> tuple[str, dict[str, Any]]:
    __tracebackhide__ = True
    command_id = conf.queue()["command_id"]
    conf.start(command_id)
    body = {
        "execution_id": conf.execution_id(command_id),
        "status": "completed",
        "result": result,
        "total_tokens": 10,
        "reported_cost": 0.5,
    }
    conf.complete(command_id, body)
    return command_id, body


# ---------------------------------------------------------------------- D10
@check(
    "D10-sync-commands",
    "The sync answers {project_id, commands} and delivers a queued run as {command_id, "
    "graph_session_id, slug, arguments, queued_at}, with the session's slug and the "
    "run's exact arguments.",
)
def check_sync_commands(osf_conf: Conformance) -> None:
    c = osf_conf
    probe = c.probe()
    ticket = c.queue(arguments=probe)
    status, answer = _sync_answer(c, c.sessions)
    c.decisive()
    c.expect_equal(status, 200, "HTTP status of the sync")
    c.expect(isinstance(answer, dict), f"the sync answer is not a JSON object: {answer!r}")
    c.expect_equal(answer.get("project_id"), c.project_id, "the sync answer's project_id")
    commands = answer.get("commands")
    c.expect(isinstance(commands, list), f"the sync answer has no commands list: {answer!r}")
    command = c.command(commands, ticket["command_id"])
    c.expect(command is not None, "the queued run is not among the sync's commands")
    assert command is not None
    c.expect_equal(
        command.get("graph_session_id"),
        c.sessions[0]["graph_session_id"],
        "the command's graph_session_id",
    )
    c.expect_equal(command.get("slug"), c.sessions[0]["slug"], "the command's slug")
    c.expect_equal(command.get("arguments"), probe, "the command's arguments")
    c.expect(
        is_utc_timestamp(command.get("queued_at")),
        f"the command's queued_at should be RFC 3339 UTC, got {command.get('queued_at')!r}",
    )


@check(
    "D10-sync-oldest-first",
    "The sync lists queued commands oldest first.",
)
def check_sync_oldest_first(osf_conf: Conformance) -> None:
    c = osf_conf
    first = c.queue()
    time.sleep(0.003)  # distinct millisecond timestamps
    second = c.queue()
    commands = c.sync()
    c.decisive()
    ids = [x.get("command_id") for x in commands]
    c.expect(
        first["command_id"] in ids and second["command_id"] in ids,
        "the sync does not deliver both queued runs",
    )
    if first.get("queued_at") == second.get("queued_at"):
        c.note("both runs carry the same queued_at, so either order is oldest first")
        return
    c.expect(
        ids.index(first["command_id"]) < ids.index(second["command_id"]),
        "the run queued second comes before the run queued first",
    )


@check(
    "D10-sync-replaces",
    "A sync replaces the project's shared sessions: sessions left out of the next sync "
    "disappear from list_graph_sessions.",
)
def check_sync_replaces(osf_conf: Conformance) -> None:
    c = osf_conf
    extra = {s["graph_session_id"] for s in extra_sessions(c.project_id)}
    everything = c.sessions + extra_sessions(c.project_id)
    for _ in range(ATTEMPTS):
        c.sync(everything)
        if _listed_ids(c) & extra:
            break
    else:
        c.fail("sessions of a 100-session sync never appear in list_graph_sessions")
    for _ in range(ATTEMPTS):
        c.sync()
        left = _listed_ids(c) & extra
        c.decisive()
        if not left:
            return
    c.fail(
        f"after a sync without them, {len(left)} sessions of the earlier sync are still "
        "listed: the sync added to the list instead of replacing it"
    )


@check(
    "D10-sync-max-100",
    "A sync of 100 sessions is accepted; one of 101 gets HTTP 400 and changes nothing.",
    level="reconstructed",
)
def check_sync_max_100(osf_conf: Conformance) -> None:
    c = osf_conf
    hundred = c.sessions + extra_sessions(c.project_id)
    try:
        status, _ = _sync_answer(c, hundred)
        c.expect_equal(status, 200, "HTTP status of a 100-session sync")
        over = overflow_sessions(c.project_id, 101)
        status, _ = _sync_answer(c, over)
        c.decisive()
        c.expect_equal(status, 400, "HTTP status of a 101-session sync")
        shown = _listed_ids(c) & {s["graph_session_id"] for s in over}
        c.expect(not shown, "the refused 101-session sync changed the shared list")
    finally:
        c.sync()


@check(
    "D10-redelivered-until-started",
    "A queued command is delivered by every sync until the desktop starts it, and not after.",
    level="reconstructed",
)
def check_redelivered_until_started(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.queue()["command_id"]
    for attempt in ("first", "second"):
        c.expect(
            c.command(c.sync(), command_id) is not None,
            f"the {attempt} sync does not deliver the queued command",
        )
    c.expect_equal(c.start(command_id), "running", "the desktop's start")
    c.expect(
        c.command(c.sync(), command_id) is None, "a sync after the start still delivers the command"
    )
    c.decisive()


# ---------------------------------------------------------------------- R9, R10
@check(
    "R9-start-running",
    "Starting a queued command answers {status: running} and the run reads running.",
)
def check_start_running(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.queue()["command_id"]
    reply = c.relay_raw("start", command_id, {"execution_id": c.execution_id(command_id)})
    c.decisive()
    c.expect_equal(reply.status, 200, "HTTP status of the start")
    c.expect_equal(_status_of(reply.body), "running", "the start answer's status")
    c.expect_equal(c.view(command_id).get("status"), "running", "the run's status")


@check(
    "R9-start-cancelled",
    "Starting a command the agent cancelled meanwhile answers {status: cancelled}.",
)
def check_start_cancelled(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.queue()["command_id"]
    c.ok(c.agent, "cancel_graph_run", {"command_id": command_id}, "cancelling the queued run")
    reply = c.relay_raw("start", command_id, {"execution_id": c.execution_id(command_id)})
    c.decisive()
    c.expect_equal(reply.status, 200, "HTTP status of the start")
    c.expect_equal(_status_of(reply.body), "cancelled", "the start answer's status")
    c.expect_equal(c.view(command_id).get("status"), "cancelled", "the run's status")


@check(
    "R9-start-twice",
    "Starting a running command again answers {status: running} again.",
)
def check_start_twice(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.queue()["command_id"]
    c.expect_equal(c.start(command_id), "running", "the first start")
    reply = c.relay_raw("start", command_id, {"execution_id": c.execution_id(command_id)})
    c.decisive()
    c.expect_equal(reply.status, 200, "HTTP status of the second start")
    c.expect_equal(_status_of(reply.body), "running", "the second start's status")


@check(
    "R9-start-terminal-409",
    "Starting a completed or a failed command gets HTTP 409.",
)
def check_start_terminal_409(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, body = _completed(c)
    reply = c.relay_raw("start", command_id, {"execution_id": body["execution_id"]})
    c.decisive()
    c.expect_equal(reply.status, 409, "HTTP status of starting a completed command")
    command_id = c.queue()["command_id"]
    c.start(command_id)
    c.complete(
        command_id,
        {"execution_id": c.execution_id(command_id), "status": "failed", "error": "boom"},
    )
    reply = c.relay_raw("start", command_id, {"execution_id": c.execution_id(command_id)})
    c.decisive()
    c.expect_equal(reply.status, 409, "HTTP status of starting a failed command")


@check(
    "R10-control",
    "The control poll reads {status, cancel_requested}: queued/false, then running/false "
    "after the start, then running/true after the agent's cancel.",
)
def check_control(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.queue()["command_id"]

    def control() -> dict[str, Any]:
        reply = c.relay_raw("control", command_id)
        c.decisive()
        c.expect_equal(reply.status, 200, "HTTP status of the control poll")
        data = json.loads(reply.body or b"null")
        c.expect(isinstance(data, dict), f"the control answer is not an object: {data!r}")
        return {k: data.get(k) for k in ("status", "cancel_requested")}

    c.expect_equal(control(), {"status": "queued", "cancel_requested": False}, "control (queued)")
    c.start(command_id)
    c.expect_equal(control(), {"status": "running", "cancel_requested": False}, "control (running)")
    c.ok(c.agent, "cancel_graph_run", {"command_id": command_id}, "cancelling the running run")
    c.expect_equal(
        control(),
        {"status": "running", "cancel_requested": True},
        "control (running, cancel requested)",
    )


# ---------------------------------------------------------------------- R11
@check(
    "R11-complete-answer",
    "A completion answers {status: <final>} for completed and for failed runs.",
)
def check_complete_answer(osf_conf: Conformance) -> None:
    c = osf_conf
    for final in ("completed", "failed"):
        command_id = c.queue()["command_id"]
        c.start(command_id)
        body: dict[str, Any] = {"execution_id": c.execution_id(command_id), "status": final}
        if final == "failed":
            body["error"] = "boom"
        answer = c.complete(command_id, body)
        c.decisive()
        c.expect_equal(answer.get("status"), final, f"the status answered to a {final} completion")


@check(
    "R11-redelivery-200",
    "The same completion posted again (outbox redelivery) gets HTTP 200 and changes nothing.",
)
def check_redelivery_200(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, body = _completed(c, {"rows": [1, 2, 3]})
    before = c.view(command_id)
    reply = c.relay_raw("complete", command_id, body)
    c.decisive()
    c.expect_equal(reply.status, 200, "HTTP status of the redelivered completion")
    c.expect_equal(c.view(command_id), before, "the run after the redelivery")


@check(
    "R11-conflict-409",
    "A different completion for a run already terminal gets HTTP 409 and changes nothing.",
)
def check_conflict_409(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, body = _completed(c, "the first result")
    before = c.view(command_id)
    for other in (
        {**body, "result": "a second result"},
        {"execution_id": body["execution_id"], "status": "failed", "error": "late"},
    ):
        reply = c.relay_raw("complete", command_id, other)
        c.decisive()
        c.expect_equal(reply.status, 409, "HTTP status of a different completion")
        c.expect_equal(c.view(command_id), before, "the run after the refused completion")


@check(
    "R11-never-started-completed-refused",
    "A completed completion for a queued, never-started command is refused and the "
    "command stays queued.",
)
def check_never_started_completed_refused(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.queue()["command_id"]
    reply = c.relay_raw(
        "complete",
        command_id,
        {
            "execution_id": c.execution_id(command_id),
            "status": "completed",
            "result": "never ran",
        },
    )
    c.decisive()
    c.expect(
        400 <= reply.status < 500,
        f"a completed completion for a never-started command got HTTP {reply.status}",
    )
    c.expect_equal(c.view(command_id).get("status"), "queued", "the command's status")


@check(
    "R11-never-started-failed-accepted",
    "A failed completion for a queued, never-started command is accepted and the run reads failed.",
)
def check_never_started_failed_accepted(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.queue()["command_id"]
    answer = c.complete(
        command_id,
        {
            "execution_id": c.execution_id(command_id),
            "status": "failed",
            "error": "could not bind",
        },
    )
    c.decisive()
    c.expect_equal(answer.get("status"), "failed", "the status the completion answers")
    c.expect_equal(c.view(command_id).get("status"), "failed", "the run's status")


@check(
    "R11-cancelled-after-agent-cancel",
    "A cancelled completion for a run the agent already cancelled gets HTTP 200 and "
    "changes nothing.",
)
def check_cancelled_after_agent_cancel(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.queue()["command_id"]
    c.sync()  # the desktop holds the command ...
    c.ok(c.agent, "cancel_graph_run", {"command_id": command_id}, "cancelling the queued run")
    before = c.view(command_id)
    reply = c.relay_raw(
        "complete",
        command_id,
        {  # ... and its re-check cancels it too
            "execution_id": c.execution_id(command_id),
            "status": "cancelled",
            "result": None,
            "error": NO_LONGER_SHARED,
        },
    )
    c.decisive()
    c.expect_equal(reply.status, 200, "HTTP status of the cancelled completion")
    c.expect_equal(c.view(command_id), before, "the run after the completion")


# ---------------------------------------------------------------------- R13
@check(
    "R13-unknown-command-404",
    "start, control and complete of a command id nobody queued get HTTP 404.",
)
def check_unknown_command_404(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = str(uuid.uuid4())
    for action, body in (
        ("start", {"execution_id": "osf-conf-exec-x"}),
        ("control", None),
        ("complete", {"execution_id": "osf-conf-exec-x", "status": "failed"}),
    ):
        reply = c.relay_raw(action, command_id, body)
        c.decisive()
        c.expect_equal(reply.status, 404, f"HTTP status of {action} for an unknown command")


@check(
    "R13-other-owner-404",
    "Another owner's desktop gets HTTP 404 (never 403) on start, control and complete of "
    "this project's command, and the command is unchanged.",
)
def check_other_owner_404(osf_conf: Conformance) -> None:
    c = osf_conf
    token = c.need("stranger_desktop_token")
    command_id = c.queue()["command_id"]
    for action, body in (
        ("start", {"execution_id": "osf-conf-exec-x"}),
        ("control", None),
        ("complete", {"execution_id": "osf-conf-exec-x", "status": "failed"}),
    ):
        reply = c.relay_raw(action, command_id, body, token=token)
        c.decisive()
        c.expect_equal(reply.status, 404, f"HTTP status of another owner's {action}")
    c.expect_equal(c.view(command_id).get("status"), "queued", "the command's status")
