"""D13 from the relay's side: consent re-checked just before a run.

While the server answers the sync that hands the relay its command, the suite
changes the owner's sharing in the driver (untick the session, disable the
project, rename the slug). The relay must complete the command ``cancelled`` with
the exact error, and never start it nor ask its engine to run it. A change that
leaves consent as it was (another session, a session's name or description) is no
reason to cancel: the command runs.

Two more changes prove *what* is re-checked and *when*: a session unticked while an
earlier command of the same sync runs (the re-check is before each command, not
once per sync), and a slug renamed after the command was queued but before the pass
that hands it out reads the sharing (the re-check compares the slug the command
carries, the one it was queued under, not the one the relay has just synced).

A session or a project may also vanish from the sharing list altogether (deleted, not
unticked or disabled): missing is not shared. The re-check reads the sharing as it is
at that moment, so a session removed and put back (same slug) before it is shared and
its command runs; one missing at the re-check has its command cancelled for good, and
a command queued after it is put back runs (nothing is remembered of the removal).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.relay import Fault, RelayConformance, RunPlan, RunRecord

NO_LONGER_SHARED = "Graph session is no longer shared with this project"
"""The suite's own copy of the re-check's error (conformance/spec.md#d13)."""


def _while_sync_answers(conf: RelayConformance, change: Callable[[], None]) -> None:
    """Make ``change`` while the server answers the next sync that hands out a command."""
    conf.fault(Fault("sync", "hook", hook=lambda answer: change(), only_with_commands=True))


def _after_next_sync(conf: RelayConformance, action: Callable[[], None]) -> None:
    """Run ``action`` while the server answers the relay's next sync (whose answer it
    does not change), and wait until it has run: the pass after that one is the first
    to see what ``action`` did."""
    done = threading.Event()

    def hook(answer: Any) -> None:
        try:
            action()
        finally:
            done.set()

    conf.fault(Fault("sync", "hook", hook=hook))
    wait = 10 * conf.timing.expected_interval + 5
    conf.expect(done.wait(wait), f"the relay sent no sync within {wait:g} s")


def _expect_recheck_cancel(conf: RelayConformance, command_id: str, what: str) -> None:
    delivered = conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + 5)
    body: Any = delivered.body if isinstance(delivered.body, dict) else {}
    conf.settle(0.3)
    conf.expect(
        not conf.requests("start", command_id),
        f"the relay started the command after {what} (it must re-check and not start it)",
    )
    conf.expect(
        not conf.runs_of(command_id),
        f"the relay asked its engine to run the command after {what}",
    )
    conf.expect(
        body.get("status") == "cancelled",
        f"after {what} the completion's status is {body.get('status')!r}, not 'cancelled'",
    )
    conf.expect(
        body.get("error") == NO_LONGER_SHARED,
        f"after {what} the completion's error is {body.get('error')!r}, not {NO_LONGER_SHARED!r}",
    )


@check(
    "D13-relay-untick",
    "A session unticked while the sync hands out its command: the command is completed "
    "cancelled with the exact error, never started, never run.",
    area="relay",
)
def check_untick(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(3)
    conf.start()
    gsid = sessions[0]["graph_session_id"]
    _while_sync_answers(conf, lambda: conf.edit_session(gsid, ticked=False))
    command_id = conf.queue(gsid)
    _expect_recheck_cancel(conf, command_id, "the session was unticked")


@check(
    "D13-relay-disable",
    "A project disabled while the sync hands out its command: the command is completed "
    "cancelled with the exact error, never started, never run.",
    area="relay",
)
def check_disable(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(3)
    conf.start()
    _while_sync_answers(conf, lambda: conf.set_enabled(False))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    _expect_recheck_cancel(conf, command_id, "the project was disabled")


@check(
    "D13-relay-rename",
    "A session's slug renamed while the sync hands out its command: the command is "
    "completed cancelled with the exact error, never started, never run.",
    area="relay",
)
def check_rename(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(3)
    conf.start()
    gsid = sessions[0]["graph_session_id"]
    slug = str(sessions[0]["slug"])
    _while_sync_answers(conf, lambda: conf.edit_session(gsid, slug=slug + "-renamed"))
    command_id = conf.queue(gsid)
    _expect_recheck_cancel(conf, command_id, "the session's slug was renamed")


@check(
    "D13-relay-unchanged",
    "A change that keeps consent (the session's name and description, another session "
    "unticked) while the sync hands out a command: the command runs and completes.",
    area="relay",
)
def check_unchanged(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(3)
    conf.start()
    gsid = sessions[0]["graph_session_id"]

    def change() -> None:
        conf.edit_session(gsid, name="Another name", description="another description")
        conf.edit_session(sessions[1]["graph_session_id"], ticked=False)

    _while_sync_answers(conf, change)
    command_id = conf.queue(gsid)
    delivered = conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + 5)
    body: Any = delivered.body if isinstance(delivered.body, dict) else {}
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the engine ran the command {len(conf.runs_of(command_id))} time(s) after a change "
        "that keeps consent (the slug is unchanged): it must run once",
    )
    conf.expect(
        body.get("status") == "completed",
        f"the completion's status is {body.get('status')!r} after a change that keeps consent; "
        f"the Graph completed (error {body.get('error')!r})",
    )


@check(
    "D13-relay-each-command",
    "Consent is re-checked before each command, not once per sync: a session unticked "
    "while an earlier command of the same sync runs gets its own command completed "
    "cancelled with the exact error, never started, never run.",
    area="relay",
)
def check_each_command(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(3)
    conf.start()
    first_gsid, later_gsid = sessions[0]["graph_session_id"], sessions[1]["graph_session_id"]
    queued: list[str] = []

    def plan(record: RunRecord) -> RunPlan:
        # The engine runs the first command: its sync has been answered (it carried both)
        # and the later command is not yet re-checked. Untick the later one's session now.
        if queued and record.command_id == queued[0]:
            conf.edit_session(later_gsid, ticked=False)
            return RunPlan(duration=4 * conf.timing.expected_control_poll)
        return RunPlan()

    conf.plan(plan)
    # Both queued while one sync is answered: the next sync hands out both, oldest first.
    _after_next_sync(conf, lambda: queued.extend([conf.queue(first_gsid), conf.queue(later_gsid)]))
    first, later = queued
    conf.wait_delivered(first, timeout=10 * conf.timing.expected_interval + 5)
    conf.expect(
        len(conf.runs_of(first)) == 1,
        f"the engine ran the first command {len(conf.runs_of(first))} time(s); its session "
        "stayed ticked, so it must run once (the check unticks the later command's session "
        "while the first runs)",
    )
    _expect_recheck_cancel(
        conf,
        later,
        "its session was unticked while an earlier command of the same sync ran (the "
        "re-check is made before each command, not once per sync)",
    )


@check(
    "D13-relay-rename-queued",
    "The re-check compares the slug a command was queued under: a slug renamed after "
    "queueing, before the pass that syncs the new slug and hands the command out: the "
    "command is completed cancelled with the exact error, never started, never run.",
    area="relay",
)
def check_rename_queued(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(3)
    conf.start()
    gsid, slug = sessions[0]["graph_session_id"], str(sessions[0]["slug"])
    queued: list[str] = []

    def queue_then_rename() -> None:
        queued.append(conf.queue(gsid))  # the command carries the slug at queueing
        conf.edit_session(gsid, slug=slug + "-renamed")

    _after_next_sync(conf, queue_then_rename)
    _expect_recheck_cancel(
        conf,
        queued[0],
        f"the session's slug was renamed from {slug!r} after the command was queued and "
        "before the sync that handed it out (the re-check compares the command's slug, the "
        "one it was queued under, with the sharing's; not the slug the relay just synced)",
    )


def _expect_runs(conf: RelayConformance, command_id: str, what: str) -> None:
    delivered = conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + 5)
    body: Any = delivered.body if isinstance(delivered.body, dict) else {}
    runs = len(conf.runs_of(command_id))
    conf.expect(
        runs == 1 and body.get("status") == "completed",
        f"{what}: the engine ran the command {runs} time(s) and its completion is "
        f"{body.get('status')!r} (error {body.get('error')!r}); it is shared at the "
        "re-check, so it must run once and complete",
    )


def _put_back(conf: RelayConformance, put_back: Callable[[], None], gsid: str) -> None:
    """Put what was removed back, and wait for the relay's first sync to carry the session
    again (the server lists, and so queues, only the sessions the last sync carried)."""
    since = time.time()
    put_back()

    def carried(r: Any) -> bool:
        sessions = r.body.get("sessions") if isinstance(r.body, dict) else None
        return (
            r.action == "sync"
            and r.at >= since
            and r.status == 200
            and isinstance(sessions, list)
            and any(isinstance(s, dict) and s.get("graph_session_id") == gsid for s in sessions)
        )

    conf.wait(
        lambda rs: any(carried(r) for r in rs),
        10 * conf.timing.expected_interval + 5,
        "a sync carrying the session again after it was put back in the sharing list",
    )


def _remove_session(conf: RelayConformance, graph_session_id: str) -> Callable[[], None]:
    """Delete one session from the driver's sharing list (not unticked: absent); the
    function returned puts it back where it was, as it was."""
    removed: list[tuple[dict[str, Any], int, dict[str, Any]]] = []

    def edit(projects: list[dict[str, Any]]) -> None:
        for project in projects:
            for index, session in enumerate(project["sessions"]):
                if session["graph_session_id"] == graph_session_id:
                    removed.append((project, index, project["sessions"].pop(index)))
                    return

    def put_back(projects: list[dict[str, Any]]) -> None:
        for project, index, session in removed:
            project["sessions"].insert(index, session)
        removed.clear()

    conf.scenario.change(edit)
    return lambda: conf.scenario.change(put_back)


def _remove_project(conf: RelayConformance, project: int = 0) -> Callable[[], None]:
    """Delete one project from the driver's sharing list (not disabled: absent); the
    function returned puts it back where it was, as it was."""
    pid = conf.project_ids[project]
    removed: list[tuple[int, dict[str, Any]]] = []

    def edit(projects: list[dict[str, Any]]) -> None:
        for index, entry in enumerate(projects):
            if entry["project_id"] == pid:
                removed.append((index, projects.pop(index)))
                return

    def put_back(projects: list[dict[str, Any]]) -> None:
        for index, entry in removed:
            projects.insert(index, entry)
        removed.clear()

    conf.scenario.change(edit)
    return lambda: conf.scenario.change(put_back)


@check(
    "D13-relay-session-removed",
    "A session removed from the sharing list (absent, not unticked) while the sync hands "
    "out its command: the command is completed cancelled with the exact error, never "
    "started, never run; removed and put back before the re-check, or put back before "
    "a later command is queued, it runs.",
    area="relay",
)
def check_session_removed(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(3)
    conf.start()
    gsid = sessions[0]["graph_session_id"]
    _while_sync_answers(conf, lambda: _remove_session(conf, gsid)())
    _expect_runs(
        conf,
        conf.queue(gsid),
        "the session was removed from the sharing list and put back, unchanged, while the "
        "sync handed out its command",
    )
    put_back: list[Callable[[], None]] = []
    _while_sync_answers(conf, lambda: put_back.append(_remove_session(conf, gsid)))
    _expect_recheck_cancel(
        conf, conf.queue(gsid), "the session was removed from the sharing list (missing)"
    )
    _put_back(conf, put_back[0], gsid)
    _expect_runs(conf, conf.queue(gsid), "the removed session was put back")


@check(
    "D13-relay-project-removed",
    "A project removed from the sharing list (absent, not disabled) while the sync hands "
    "out its command: the command is completed cancelled with the exact error, never "
    "started, never run; once the project is put back, a new command runs.",
    area="relay",
)
def check_project_removed(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(3)
    conf.start()
    gsid = sessions[0]["graph_session_id"]
    put_back: list[Callable[[], None]] = []
    _while_sync_answers(conf, lambda: put_back.append(_remove_project(conf)))
    _expect_recheck_cancel(
        conf, conf.queue(gsid), "the project was removed from the sharing list (missing)"
    )
    _put_back(conf, put_back[0], gsid)
    _expect_runs(conf, conf.queue(gsid), "the removed project was put back")
