"""D13 from the relay's side: consent re-checked just before a run.

While the server answers the sync that hands the relay its command, the suite
changes the owner's sharing in the driver (untick the session, disable the
project, rename the slug). The relay must complete the command ``cancelled`` with
the exact error, and never start it nor ask its engine to run it. A change that
leaves consent as it was (another session, a session's name or description) is no
reason to cancel: the command runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_osfoundry.conformance._registry import check
from pytest_osfoundry.conformance.relay import RelayConformance
from pytest_osfoundry.conformance.relay._instrumented import Fault

NO_LONGER_SHARED = "Graph session is no longer shared with this project"
"""The suite's own copy of the re-check's error (conformance/spec.md#d13)."""


def _while_sync_answers(conf: RelayConformance, change: Callable[[], None]) -> None:
    """Make ``change`` while the server answers the next sync that hands out a command."""
    conf.fault(Fault("sync", "hook", hook=lambda answer: change(), only_with_commands=True))


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
