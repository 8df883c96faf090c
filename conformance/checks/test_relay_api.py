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

from pytest_osfoundry.conformance import (
    FIXED,
    HUNDRED,
    Conformance,
    check,
    extra_sessions,
    finished_run,
    is_utc_timestamp,
    overflow_sessions,
)
from pytest_osfoundry.conformance.expected import (
    CANCELLED,
    COMPLETED,
    CONTROL_FIELDS,
    FAILED,
    NO_LONGER_SHARED,
    QUEUED,
    RUNNING,
    SYNC_MAX_SESSIONS,
)
from pytest_osfoundry.http import Response

ATTEMPTS = 10
"""Tries of a sync and the read after it: checks of other processes (xdist workers,
other CI jobs against one server) may sync the fixed list back in between."""


def _sync_answer(conf: Conformance, sessions: list[dict[str, Any]]) -> tuple[int, Any]:
    __tracebackhide__ = True
    reply = conf.desktop.raw(
        "sync", body={"project_id": conf.roles.project_id, "sessions": sessions}
    )
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
    answer = conf.agent.ok(
        "list_graph_sessions", {"project_id": conf.roles.project_id}, "listing the shared sessions"
    )
    sessions = answer.get("sessions")
    return {str(s.get("graph_session_id")) for s in sessions or [] if isinstance(s, dict)}


def _completed(conf: Conformance, result: Any = "done") -> tuple[str, dict[str, Any]]:
    __tracebackhide__ = True
    run = finished_run(conf, COMPLETED, result=result, total_tokens=10, reported_cost=0.5)
    return run.command_id, run.completion


def _start(conf: Conformance, command_id: str) -> Response:
    """The desktop's start of ``command_id`` sent raw (the decisive exchange)."""
    __tracebackhide__ = True
    reply = conf.desktop.raw(
        "start", command_id, {"execution_id": conf.desktop.execution_id(command_id)}
    )
    conf.wire.decisive()
    return reply


# ---------------------------------------------------------------------- D10
@check(
    "D10-sync-commands",
    "The sync answers {project_id, commands} and delivers a queued run as {command_id, "
    "graph_session_id, slug, arguments, queued_at}, with the session's slug and the "
    "run's exact arguments.",
)
def check_sync_commands(osf_conf: Conformance) -> None:
    c = osf_conf
    probe = c.agent.probe()
    ticket = c.agent.queue(arguments=probe)
    status, answer = _sync_answer(c, c.roles.sessions)
    c.wire.decisive()
    c.expect.equal(status, 200, "HTTP status of the sync")
    c.expect(isinstance(answer, dict), f"the sync answer is not a JSON object: {answer!r}")
    c.expect.equal(answer.get("project_id"), c.roles.project_id, "the sync answer's project_id")
    commands = answer.get("commands")
    c.expect(isinstance(commands, list), f"the sync answer has no commands list: {answer!r}")
    command = c.desktop.command(commands, ticket["command_id"])
    c.expect(command is not None, "the queued run is not among the sync's commands")
    assert command is not None
    c.expect.equal(
        command.get("graph_session_id"),
        c.roles.sessions[0]["graph_session_id"],
        "the command's graph_session_id",
    )
    c.expect.equal(command.get("slug"), c.roles.sessions[0]["slug"], "the command's slug")
    c.expect.equal(command.get("arguments"), probe, "the command's arguments")
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
    first = c.agent.queue()
    time.sleep(0.003)  # distinct millisecond timestamps
    second = c.agent.queue()
    commands = c.desktop.sync()
    c.wire.decisive()
    ids = [x.get("command_id") for x in commands]
    c.expect(
        first["command_id"] in ids and second["command_id"] in ids,
        "the sync does not deliver both queued runs",
    )
    if first.get("queued_at") == second.get("queued_at"):
        c.expect.note("both runs carry the same queued_at, so either order is oldest first")
        return
    c.expect(
        ids.index(first["command_id"]) < ids.index(second["command_id"]),
        "the run queued second comes before the run queued first",
    )


@check(
    "D10-sync-replaces",
    "A sync replaces the project's shared sessions: sessions left out of the next sync "
    "disappear from list_graph_sessions.",
    schedule="shares-list",
)
def check_sync_replaces(osf_conf: Conformance) -> None:
    c = osf_conf
    extra = {s["graph_session_id"] for s in extra_sessions(c.roles.project_id)}
    everything = c.roles.sessions + extra_sessions(c.roles.project_id)
    with c.desktop.changing_list(sharing=HUNDRED):  # with the other hundred-session syncs
        for _ in range(ATTEMPTS):
            c.desktop.sync(everything)
            if _listed_ids(c) & extra:
                break
        else:
            c.expect.fail(
                f"sessions of a {SYNC_MAX_SESSIONS}-session sync never appear in "
                "list_graph_sessions"
            )
    # No hundred-session sync may come between the sync leaving the extra sessions out
    # and the read (a replacing server drops them; one that adds keeps them whatever came
    # before); the other checks' syncs share the fixed list, so they may.
    with c.desktop.changing_list(sharing=FIXED):
        for _ in range(ATTEMPTS):
            c.desktop.sync()
            left = _listed_ids(c) & extra
            c.wire.decisive()
            if not left:
                return
    c.expect.fail(
        f"after a sync without them, {len(left)} sessions of the earlier sync are still "
        "listed: the sync added to the list instead of replacing it"
    )


@check(
    "D10-sync-max-100",
    "A sync of 100 sessions is accepted; one of 101 gets HTTP 400 and changes nothing.",
    level="reconstructed",
    schedule="shares-list",
)
def check_sync_max_100(osf_conf: Conformance) -> None:
    c = osf_conf
    hundred = c.roles.sessions + extra_sessions(c.roles.project_id)
    with c.desktop.changing_list(sharing=HUNDRED):
        status, _ = _sync_answer(c, hundred)
    c.expect.equal(status, 200, f"HTTP status of a {SYNC_MAX_SESSIONS}-session sync")
    over = overflow_sessions(c.roles.project_id, SYNC_MAX_SESSIONS + 1)
    # A server that takes the overflow unshares the fixed sessions until the sync after:
    # no other check's request that depends on them goes meanwhile.
    with c.desktop.changing_list(everything=True):
        try:
            status, _ = _sync_answer(c, over)
            c.wire.decisive()
            c.expect.equal(status, 400, f"HTTP status of a {SYNC_MAX_SESSIONS + 1}-session sync")
            shown = _listed_ids(c) & {s["graph_session_id"] for s in over}
            c.expect(
                not shown,
                f"the refused {SYNC_MAX_SESSIONS + 1}-session sync changed the shared list",
            )
        finally:
            c.desktop.sync()


@check(
    "D10-redelivered-until-started",
    "A queued command is delivered by every sync until the desktop starts it, and not after.",
    level="reconstructed",
)
def check_redelivered_until_started(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    for attempt in ("first", "second"):
        c.expect(
            c.desktop.command(c.desktop.sync(), command_id) is not None,
            f"the {attempt} sync does not deliver the queued command",
        )
    c.expect.equal(c.desktop.start(command_id), RUNNING, "the desktop's start")
    c.expect(
        c.desktop.command(c.desktop.sync(), command_id) is None,
        "a sync after the start still delivers the command",
    )
    c.wire.decisive()


# ---------------------------------------------------------------------- R9, R10
@check(
    "R9-start-running",
    "Starting a queued command answers {status: running} and the run reads running.",
)
def check_start_running(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    reply = _start(c, command_id)
    c.expect.equal(reply.status, 200, "HTTP status of the start")
    c.expect.equal(_status_of(reply.body), RUNNING, "the start answer's status")
    c.expect.equal(c.agent.view(command_id).get("status"), RUNNING, "the run's status")


@check(
    "R9-start-cancelled",
    "Starting a command the agent cancelled meanwhile answers {status: cancelled}.",
)
def check_start_cancelled(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    c.agent.cancel(command_id, "cancelling the queued run")
    reply = _start(c, command_id)
    c.expect.equal(reply.status, 200, "HTTP status of the start")
    c.expect.equal(_status_of(reply.body), CANCELLED, "the start answer's status")
    c.expect.equal(c.agent.view(command_id).get("status"), CANCELLED, "the run's status")


@check(
    "R9-start-twice",
    "Starting a running command again answers {status: running} again.",
)
def check_start_twice(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    c.expect.equal(c.desktop.start(command_id), RUNNING, "the first start")
    reply = _start(c, command_id)
    c.expect.equal(reply.status, 200, "HTTP status of the second start")
    c.expect.equal(_status_of(reply.body), RUNNING, "the second start's status")


@check(
    "R9-start-terminal-409",
    "Starting a completed or a failed command gets HTTP 409.",
    schedule="long-chain",
)
def check_start_terminal_409(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, body = _completed(c)
    reply = c.desktop.raw("start", command_id, {"execution_id": body["execution_id"]})
    c.wire.decisive()
    c.expect.equal(reply.status, 409, "HTTP status of starting a completed command")
    command_id = finished_run(c, FAILED, error="boom").command_id
    reply = _start(c, command_id)
    c.expect.equal(reply.status, 409, "HTTP status of starting a failed command")


@check(
    "R10-control",
    "The control poll reads {status, cancel_requested}: queued/false, then running/false "
    "after the start, then running/true after the agent's cancel.",
    schedule="long-chain",
)
def check_control(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]

    def control() -> dict[str, Any]:
        reply = c.desktop.raw("control", command_id)
        c.wire.decisive()
        c.expect.equal(reply.status, 200, "HTTP status of the control poll")
        data = json.loads(reply.body or b"null")
        c.expect(isinstance(data, dict), f"the control answer is not an object: {data!r}")
        return {k: data.get(k) for k in CONTROL_FIELDS}

    c.expect.equal(control(), {"status": QUEUED, "cancel_requested": False}, "control (queued)")
    c.desktop.start(command_id)
    c.expect.equal(control(), {"status": RUNNING, "cancel_requested": False}, "control (running)")
    c.agent.cancel(command_id, "cancelling the running run")
    c.expect.equal(
        control(),
        {"status": RUNNING, "cancel_requested": True},
        "control (running, cancel requested)",
    )


# ---------------------------------------------------------------------- R11
@check(
    "R11-complete-answer",
    "A completion answers {status: <final>} for completed and for failed runs.",
    schedule="long-chain",
)
def check_complete_answer(osf_conf: Conformance) -> None:
    c = osf_conf
    for final in (COMPLETED, FAILED):
        fields = {"error": "boom"} if final == FAILED else {}
        answer = finished_run(c, final, **fields).answer
        c.wire.decisive()
        c.expect.equal(answer.get("status"), final, f"the status answered to a {final} completion")


@check(
    "R11-redelivery-200",
    "The same completion posted again (outbox redelivery) gets HTTP 200 and changes nothing.",
    schedule="long-chain",
)
def check_redelivery_200(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, body = _completed(c, {"rows": [1, 2, 3]})
    before = c.agent.view(command_id)
    reply = c.desktop.raw("complete", command_id, body)
    c.wire.decisive()
    c.expect.equal(reply.status, 200, "HTTP status of the redelivered completion")
    c.expect.equal(c.agent.view(command_id), before, "the run after the redelivery")


@check(
    "R11-conflict-409",
    "A different completion for a run already terminal gets HTTP 409 and changes nothing.",
    schedule="long-chain",
)
def check_conflict_409(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id, body = _completed(c, "the first result")
    before = c.agent.view(command_id)
    for other in (
        {**body, "result": "a second result"},
        {"execution_id": body["execution_id"], "status": FAILED, "error": "late"},
    ):
        reply = c.desktop.raw("complete", command_id, other)
        c.wire.decisive()
        c.expect.equal(reply.status, 409, "HTTP status of a different completion")
        c.expect.equal(c.agent.view(command_id), before, "the run after the refused completion")


@check(
    "R11-never-started-completed-refused",
    "A completed completion for a queued, never-started command is refused and the "
    "command stays queued.",
)
def check_never_started_completed_refused(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    reply = c.desktop.raw(
        "complete", command_id, c.desktop.completion(command_id, COMPLETED, result="never ran")
    )
    c.wire.decisive()
    c.expect(
        400 <= reply.status < 500,
        f"a completed completion for a never-started command got HTTP {reply.status}",
    )
    c.expect.equal(c.agent.view(command_id).get("status"), QUEUED, "the command's status")


@check(
    "R11-never-started-failed-accepted",
    "A failed completion for a queued, never-started command is accepted and the run reads failed.",
)
def check_never_started_failed_accepted(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    answer = c.desktop.complete(
        command_id, c.desktop.completion(command_id, FAILED, error="could not bind")
    )
    c.wire.decisive()
    c.expect.equal(answer.get("status"), FAILED, "the status the completion answers")
    c.expect.equal(c.agent.view(command_id).get("status"), FAILED, "the run's status")


@check(
    "R11-cancelled-after-agent-cancel",
    "A cancelled completion for a run the agent already cancelled gets HTTP 200 and "
    "changes nothing.",
    schedule="long-chain",
)
def check_cancelled_after_agent_cancel(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    c.desktop.sync()  # the desktop holds the command ...
    c.agent.cancel(command_id, "cancelling the queued run")
    before = c.agent.view(command_id)
    reply = c.desktop.raw(  # ... and its re-check cancels it too
        "complete",
        command_id,
        c.desktop.completion(command_id, CANCELLED, result=None, error=NO_LONGER_SHARED),
    )
    c.wire.decisive()
    c.expect.equal(reply.status, 200, "HTTP status of the cancelled completion")
    c.expect.equal(c.agent.view(command_id), before, "the run after the completion")


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
        ("complete", {"execution_id": "osf-conf-exec-x", "status": FAILED}),
    ):
        reply = c.desktop.raw(action, command_id, body)
        c.wire.decisive()
        c.expect.equal(reply.status, 404, f"HTTP status of {action} for an unknown command")


@check(
    "R13-other-owner-404",
    "Another owner's desktop gets HTTP 404 (never 403) on start, control and complete of "
    "this project's command, and the command is unchanged.",
)
def check_other_owner_404(osf_conf: Conformance) -> None:
    c = osf_conf
    token = c.roles.need("stranger_desktop_token")
    command_id = c.agent.queue()["command_id"]
    for action, body in (
        ("start", {"execution_id": "osf-conf-exec-x"}),
        ("control", None),
        ("complete", {"execution_id": "osf-conf-exec-x", "status": FAILED}),
    ):
        reply = c.desktop.raw(action, command_id, body, token=token)
        c.wire.decisive()
        c.expect.equal(reply.status, 404, f"HTTP status of another owner's {action}")
    c.expect.equal(c.agent.view(command_id).get("status"), QUEUED, "the command's status")
