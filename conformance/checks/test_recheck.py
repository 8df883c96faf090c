"""Re-check before run (D13), as the server sees it.

The suite acts as the desktop: it syncs, takes its command from the answer, then —
between the sync and the run — the owner un-ticks the session, disables the project
or renames the session's slug. The relay's re-check fails, so it completes the
command as ``cancelled`` with ``Graph session is no longer shared with this project``
without starting it, exactly as the kit's relay port does. The server must accept
that completion for a command it never started, and the agent must then read
``cancelled`` with that exact message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_osfoundry.conformance import RENAMED, Conformance, check
from pytest_osfoundry.conformance.expected import CANCELLED, NO_LONGER_SHARED
from pytest_osfoundry.relay import bounded_completion


def _delivered(
    conf: Conformance, commands: list[dict[str, Any]], command_id: str
) -> Mapping[str, Any]:
    __tracebackhide__ = True
    command = conf.desktop.command(commands, command_id)
    if command is None:
        conf.expect.fail("the desktop's sync does not deliver the queued run")
    return command


def _recheck_cancels(conf: Conformance, command_id: str) -> None:
    __tracebackhide__ = True
    body = bounded_completion(
        execution_id=conf.desktop.execution_id(command_id),
        status=CANCELLED,
        error=NO_LONGER_SHARED,
    )
    reply = conf.desktop.raw("complete", command_id, body)
    conf.wire.decisive()
    conf.expect(
        200 <= reply.status < 300,
        f"the relay's re-check cancellation of a never-started command got HTTP "
        f"{reply.status}: {reply.body[:200].decode('utf-8', 'replace')}",
    )
    conf.runs.done(command_id)
    view = conf.agent.view(command_id)
    conf.expect.equal(view.get("status"), CANCELLED, "the agent's view of the run's status")
    conf.expect.equal(view.get("error"), NO_LONGER_SHARED, "the agent's view of the run's error")
    conf.expect(
        conf.desktop.command(conf.desktop.sync(), command_id) is None,
        "the desktop's sync still delivers the cancelled command",
    )


@check(
    "D13-unticked",
    "When the owner un-ticks the session between sync and run, the relay's cancelled "
    "completion is accepted and the agent reads cancelled with 'Graph session is no "
    "longer shared with this project'.",
)
def check_unticked(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    _delivered(c, c.desktop.sync(), command_id)
    # The owner un-ticks sessions[0] on the desktop now; the re-check fails.
    _recheck_cancels(c, command_id)


@check(
    "D13-project-disabled",
    "When the owner disables the project between sync and run, the relay's cancelled "
    "completion is accepted and the agent reads cancelled with the exact message.",
)
def check_project_disabled(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    _delivered(c, c.desktop.sync(), command_id)
    # The owner disables the project on the desktop now: it is not synced again.
    _recheck_cancels(c, command_id)


@check(
    "D13-slug-changed",
    "When the session's slug changes between queueing and run, the sync still delivers "
    "the command with its queued-time slug, and the relay's cancelled completion is "
    "accepted with the exact message.",
    schedule="long-chain",
)
def check_slug_changed(osf_conf: Conformance) -> None:
    c = osf_conf
    session = c.roles.sessions[1]
    command_id = c.agent.queue(session=session)["command_id"]
    first = _delivered(c, c.desktop.sync(), command_id)
    c.expect.equal(first.get("slug"), session["slug"], "the command's slug")
    renamed = [dict(s) for s in c.roles.sessions]
    renamed[1]["slug"] = session["slug"] + RENAMED
    try:
        command = _delivered(c, c.desktop.sync(renamed), command_id)
        c.wire.decisive()
        c.expect.equal(
            command.get("slug"),
            session["slug"],
            "the slug a sync after the rename delivers the command with (it must stay the "
            "queued-time slug, or the relay's re-check cannot see the rename)",
        )
        # The relay compares the command's slug with the session's slug now: they differ.
        _recheck_cancels(c, command_id)
    finally:
        c.desktop.sync()
