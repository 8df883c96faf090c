"""Queueing and reading: D1, D4, D9, the ticket (R4), the run view (R6), the session list (R8).

The suite plays the desktop itself (sync, start, complete), so a run can be put in
any status without waiting for anything.
"""

from __future__ import annotations

from typing import Any

from pytest_osfoundry.conformance import (
    HUNDRED,
    RENAMED,
    Conformance,
    check,
    extra_sessions,
    finished_run,
    fixed_sessions,
    is_utc_timestamp,
    is_uuid,
    started_run,
)
from pytest_osfoundry.conformance.expected import (
    CANCELLED,
    COMPLETED,
    ERROR_LIMIT,
    FAILED,
    LIST_DEFAULT_LIMIT,
    POLL_AFTER_SECONDS,
    QUEUED,
    RELAY_FIELDS,
    RUNNING,
    SESSION_FIELDS,
    SYNC_MAX_SESSIONS,
    TICKET_FIELDS,
    VIEW_FIELDS,
)

ATTEMPTS = 10
"""Tries of a sync and the read after it: checks of other processes (xdist workers,
other CI jobs against one server) may sync the fixed list back in between."""


def _unset(view: dict[str, Any], name: str) -> bool:
    """A timestamp not reached yet: ``null`` (or left out)."""
    return view.get(name) is None


def _expect_view(conf: Conformance, view: dict[str, Any], command_id: str, status: str) -> None:
    __tracebackhide__ = True
    missing = [f for f in VIEW_FIELDS if f not in view and f not in ("started_at", "finished_at")]
    conf.expect(not missing, f"get_graph_run lacks {', '.join(missing)}: {view}")
    conf.expect.equal(view.get("command_id"), command_id, "get_graph_run's command_id")
    conf.expect.equal(view.get("status"), status, "get_graph_run's status")
    conf.expect(
        is_utc_timestamp(view.get("queued_at")),
        f"queued_at should be an RFC 3339 UTC timestamp, got {view.get('queued_at')!r}",
    )


def _allowed_sessions(project_id: str) -> dict[str, list[dict[str, Any]]]:
    """Every version of every session the suite may have shared, by id."""
    out: dict[str, list[dict[str, Any]]] = {}
    for session in fixed_sessions(project_id) + extra_sessions(project_id):
        out[session["graph_session_id"]] = [session]
    rename = fixed_sessions(project_id)[1]
    out[rename["graph_session_id"]].append({**rename, "slug": rename["slug"] + RENAMED})
    return out


def _listed(conf: Conformance, limit: int | None = None) -> list[dict[str, Any]]:
    __tracebackhide__ = True
    args: dict[str, Any] = {"project_id": conf.roles.project_id}
    if limit is not None:
        args["limit"] = limit
    answer = conf.agent.ok("list_graph_sessions", args, "listing the shared sessions")
    sessions = answer.get("sessions")
    if not isinstance(sessions, list) or not all(isinstance(s, dict) for s in sessions):
        conf.expect.fail(f"list_graph_sessions' sessions should be a list of objects: {answer}")
    return list(sessions)


def _expect_known(conf: Conformance, sessions: list[dict[str, Any]]) -> None:
    __tracebackhide__ = True
    allowed = _allowed_sessions(conf.roles.project_id)
    ids = [s.get("graph_session_id") for s in sessions]
    conf.expect(len(ids) == len(set(ids)), f"a session is listed twice: {ids}")
    strangers = [i for i in ids if i not in allowed]
    conf.expect(not strangers, f"listed sessions that were never shared: {strangers}")


# ---------------------------------------------------------------------- D1, D9, R4
@check(
    "D1-run-only-queues",
    "run_graph_session answers with status queued, and the run stays queued, not started, "
    "until the desktop starts it.",
)
def check_run_only_queues(osf_conf: Conformance) -> None:
    c = osf_conf
    ticket = c.agent.queue()
    c.expect.equal(ticket.get("status"), QUEUED, "the ticket's status")
    view = c.agent.view(ticket["command_id"])
    c.expect.equal(view.get("status"), QUEUED, "the run's status before the desktop acts")
    c.expect(
        _unset(view, "started_at"),
        f"a run the desktop never started has started_at {view.get('started_at')!r}",
    )
    c.expect(
        c.desktop.command(c.desktop.sync(), ticket["command_id"]) is not None,
        "the desktop's sync does not deliver the queued run",
    )


@check("D9-command-id-uuid", "The command id of a queued run is a UUID.")
def check_command_id_uuid(osf_conf: Conformance) -> None:
    command_id = osf_conf.agent.queue()["command_id"]
    osf_conf.expect(is_uuid(command_id), f"command_id {command_id!r} is not a UUID")


@check(
    "R4-ticket-fields",
    "The ticket is {command_id (UUID), graph_session_id, status queued, queued_at (RFC 3339 "
    "UTC), poll_after_seconds 20}.",
)
def check_ticket_fields(osf_conf: Conformance) -> None:
    c = osf_conf
    ticket = c.agent.queue()
    missing = [f for f in TICKET_FIELDS if f not in ticket]
    c.expect(not missing, f"the ticket lacks {', '.join(missing)}: {ticket}")
    c.expect(is_uuid(ticket["command_id"]), f"command_id {ticket['command_id']!r} is not a UUID")
    c.expect.equal(
        ticket["graph_session_id"],
        c.roles.sessions[0]["graph_session_id"],
        "the ticket's graph_session_id",
    )
    c.expect.equal(ticket["status"], QUEUED, "the ticket's status")
    c.expect(
        is_utc_timestamp(ticket["queued_at"]),
        f"queued_at should be an RFC 3339 UTC timestamp, got {ticket['queued_at']!r}",
    )
    c.expect.equal(ticket["poll_after_seconds"], POLL_AFTER_SECONDS, "poll_after_seconds")


@check(
    "R4-replay-current-status",
    "Replaying run_graph_session with the same key and arguments returns the same "
    "command id with the run's current status.",
)
def check_replay_current_status(osf_conf: Conformance) -> None:
    c = osf_conf
    key, probe = c.agent.new_key(), c.agent.probe()
    first = c.agent.queue(key=key, arguments=probe)
    c.expect.equal(c.desktop.start(first["command_id"]), RUNNING, "the desktop's start")
    again = c.agent.queue(key=key, arguments=probe)
    c.wire.decisive()
    c.expect.equal(again.get("command_id"), first["command_id"], "the replay's command_id")
    c.expect.equal(again.get("status"), RUNNING, "the replay's status after the start")


# ---------------------------------------------------------------------- R6
@check(
    "R6-queued-view",
    "A queued run reads status queued, queued_at set, started_at and finished_at null, "
    "cancel_requested false and no relay-reported field.",
)
def check_queued_view(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    view = c.agent.view(command_id)
    _expect_view(c, view, command_id, QUEUED)
    c.expect.equal(
        view.get("graph_session_id"), c.roles.sessions[0]["graph_session_id"], "graph_session_id"
    )
    c.expect(
        _unset(view, "started_at") and _unset(view, "finished_at"),
        f"started_at/finished_at should be null: {view}",
    )
    c.expect(
        view.get("cancel_requested") is False,
        f"cancel_requested should be false, got {view.get('cancel_requested')!r}",
    )
    present = [f for f in RELAY_FIELDS if f in view]
    c.expect(not present, f"relay-reported fields present before any report: {present}")


@check(
    "R6-running-view",
    "A started run reads status running with started_at set and finished_at null.",
)
def check_running_view(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = started_run(c)
    view = c.agent.view(command_id)
    _expect_view(c, view, command_id, RUNNING)
    c.expect(
        is_utc_timestamp(view.get("started_at")),
        f"started_at should be an RFC 3339 UTC timestamp, got {view.get('started_at')!r}",
    )
    c.expect(
        _unset(view, "finished_at"), f"finished_at should be null: {view.get('finished_at')!r}"
    )
    c.expect(
        view.get("cancel_requested") is False,
        f"cancel_requested should be false, got {view.get('cancel_requested')!r}",
    )


@check(
    "R6-completed-view",
    "A completed run reads status completed, finished_at set, and exactly the execution_id, "
    "result, total_tokens and reported_cost the relay reported.",
)
def check_completed_view(osf_conf: Conformance) -> None:
    c = osf_conf
    result = {"answer": 42, "text": "héllo 日本 🎉", "items": [1, 2.5, None, True]}
    command_id, completion, _ = finished_run(
        c, COMPLETED, result=result, total_tokens=1234, reported_cost=0.0125
    )
    execution_id = completion["execution_id"]
    view = c.agent.view(command_id)
    _expect_view(c, view, command_id, COMPLETED)
    c.expect(
        is_utc_timestamp(view.get("finished_at")),
        f"finished_at should be an RFC 3339 UTC timestamp, got {view.get('finished_at')!r}",
    )
    c.expect.equal(view.get("execution_id"), execution_id, "execution_id")
    c.expect.equal(view.get("result"), result, "result")
    c.expect.equal(view.get("total_tokens"), 1234, "total_tokens")
    c.expect.equal(view.get("reported_cost"), 0.0125, "reported_cost")
    extra = [f for f in ("error", "result_truncated") if f in view]
    c.expect(not extra, f"fields the relay never reported are present: {extra}")


@check(
    "R6-failed-view",
    "A failed run reads status failed with the error the relay reported.",
)
def check_failed_view(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = finished_run(
        c, FAILED, result=None, error="Graph step 3 failed: quota exceeded"
    ).command_id
    view = c.agent.view(command_id)
    _expect_view(c, view, command_id, FAILED)
    c.expect.equal(view.get("error"), "Graph step 3 failed: quota exceeded", "error")


@check(
    "R6-error-at-most-2000",
    "An error longer than 2,000 characters is either refused or served cut to at most "
    "2,000 characters.",
)
def check_error_at_most_2000(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    c.desktop.start(command_id)
    error = ("E" * 99 + "\n") * 25  # 2,500 characters
    reply = c.desktop.raw(
        "complete",
        command_id,
        c.desktop.completion(command_id, FAILED, error=error),
    )
    c.wire.decisive()
    if 400 <= reply.status < 500:
        c.expect.note(f"refused with HTTP {reply.status}")
        return
    c.expect(200 <= reply.status < 300, f"the completion got HTTP {reply.status}")
    c.runs.done(command_id)
    served = c.agent.view(command_id).get("error")
    c.expect(
        isinstance(served, str) and len(served) <= ERROR_LIMIT,
        f"the error is served with {len(served) if isinstance(served, str) else served!r}"
        " characters; at most 2,000 allowed",
    )
    assert isinstance(served, str)
    c.expect(error.startswith(served), "the served error is not a cut of the reported one")


@check(
    "R6-cancelled-queued-view",
    "A run cancelled while queued reads status cancelled, finished_at set, "
    "cancel_requested true and no relay-reported field.",
)
def check_cancelled_queued_view(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    c.agent.cancel(command_id, "cancelling the queued run")
    view = c.agent.view(command_id)
    _expect_view(c, view, command_id, CANCELLED)
    c.expect(
        is_utc_timestamp(view.get("finished_at")),
        f"finished_at should be an RFC 3339 UTC timestamp, got {view.get('finished_at')!r}",
    )
    c.expect(
        view.get("cancel_requested") is True,
        f"cancel_requested should be true, got {view.get('cancel_requested')!r}",
    )
    present = [f for f in RELAY_FIELDS if f in view]
    c.expect(not present, f"relay-reported fields on a run the desktop never saw: {present}")


# ---------------------------------------------------------------------- D4, R8
@check(
    "D4-empty-before-share",
    "list_graph_sessions of a connected project with nothing shared answers "
    "{project_id, sessions: []}.",
)
def check_empty_before_share(osf_conf: Conformance) -> None:
    c = osf_conf
    project = c.roles.need("stranger_project_id")
    answer = c.agent.ok(
        "list_graph_sessions",
        {"project_id": project},
        "listing a project with nothing shared",
        by=c.roles.stranger,
    )
    c.expect.equal(answer.get("project_id"), project, "project_id")
    c.expect.equal(answer.get("sessions"), [], "sessions")


@check(
    "D4-lists-last-sync",
    "After the desktop's sync, list_graph_sessions shows the sessions it uploaded.",
)
def check_lists_last_sync(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    answer = c.agent.ok("list_graph_sessions", {"project_id": c.roles.project_id}, "listing")
    c.expect.equal(answer.get("project_id"), c.roles.project_id, "project_id")
    sessions = answer.get("sessions")
    c.expect(isinstance(sessions, list), f"sessions should be a list: {answer}")
    assert isinstance(sessions, list)
    listed = {s.get("graph_session_id") for s in sessions if isinstance(s, dict)}
    missing = [
        s["graph_session_id"] for s in c.roles.sessions if s["graph_session_id"] not in listed
    ]
    c.expect(not missing, f"synced sessions missing from the list: {missing}")
    _expect_known(c, sessions)


@check(
    "R8-session-fields",
    "Each listed session carries graph_session_id, name, description, slug, version and "
    "status exactly as synced.",
)
def check_session_fields(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    sessions = _listed(c)
    _expect_known(c, sessions)
    allowed = _allowed_sessions(c.roles.project_id)
    for session in sessions:
        picked = {f: session.get(f) for f in SESSION_FIELDS}
        c.expect(
            all(f in session for f in SESSION_FIELDS), f"a listed session lacks fields: {session}"
        )
        c.expect(
            picked in allowed[str(session.get("graph_session_id"))],
            f"a listed session differs from what was synced: {picked}",
        )


@check(
    "R8-limit",
    "list_graph_sessions with limit 1 and limit 2 lists exactly that many of the shared sessions.",
)
def check_limit(osf_conf: Conformance) -> None:
    c = osf_conf
    c.desktop.sync()
    for limit in (1, 2):
        sessions = _listed(c, limit)
        c.expect.equal(len(sessions), limit, f"sessions listed with limit {limit}")
        _expect_known(c, sessions)


@check(
    "R8-default-limit",
    "With 100 sessions shared, list_graph_sessions without limit lists exactly 50.",
    schedule="shares-list",
)
def check_default_limit(osf_conf: Conformance) -> None:
    c = osf_conf
    many = c.roles.sessions + extra_sessions(c.roles.project_id)
    fixed_ids = {s["graph_session_id"] for s in c.roles.sessions}
    try:
        # No other check syncs the fixed list back meanwhile; those syncing the same
        # hundred sessions may.
        with c.desktop.changing_list(sharing=HUNDRED):
            for _ in range(ATTEMPTS):
                c.desktop.sync(many)
                sessions = _listed(c)
                c.wire.decisive()
                if {s.get("graph_session_id") for s in sessions} <= fixed_ids:
                    continue  # another process re-synced the fixed list meanwhile: try again
                c.expect.equal(
                    len(sessions),
                    LIST_DEFAULT_LIMIT,
                    f"sessions listed without limit, {SYNC_MAX_SESSIONS} shared",
                )
                _expect_known(c, sessions)
                return
        c.expect.fail(
            f"the {SYNC_MAX_SESSIONS} synced sessions never showed in list_graph_sessions"
        )
    finally:
        c.desktop.sync()
