"""Cancel: the two cases (D8) and the cancel answer (R7).

The running case needs no waiting: the suite, as the desktop, starts the run, reads
the control poll after the agent's cancel and completes the run as ``cancelled``, as
the relay does when its 3 s poll sees the flag.
"""

from __future__ import annotations

import uuid

from pytest_osfoundry.conformance import Conformance, check, finished_run, started_run
from pytest_osfoundry.conformance.expected import (
    CANCEL_FIELDS,
    CANCELLED,
    COMPLETED,
    RUN_NOT_FOUND,
    RUNNING,
)


@check(
    "D8-cancel-queued",
    "Cancelling a queued run makes it cancelled at once, and the desktop's sync never "
    "delivers it again.",
)
def check_cancel_queued(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    c.agent.cancel(command_id, "cancelling the queued run")
    c.expect.equal(
        c.agent.view(command_id).get("status"), CANCELLED, "status right after the cancel"
    )
    c.expect(
        c.desktop.command(c.desktop.sync(), command_id) is None,
        "the desktop's sync still delivers the cancelled run",
    )
    c.wire.decisive()


@check(
    "D8-cancel-running",
    "Cancelling a running run sets the flag the desktop's control poll reads, and the "
    "relay's cancelled completion ends it.",
    schedule="long-chain",
)
def check_cancel_running(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = started_run(c)
    c.agent.cancel(command_id, "cancelling the running run")
    control = c.desktop.control(command_id)
    c.wire.decisive()
    c.expect(
        control.get("cancel_requested") is True,
        f"the control poll should read cancel_requested true, got {control}",
    )
    c.desktop.complete(command_id, c.desktop.completion(command_id, CANCELLED))
    c.expect.equal(
        c.agent.view(command_id).get("status"), CANCELLED, "status after the relay stops"
    )


@check(
    "R7-cancel-queued-answer",
    "Cancelling a queued run answers {command_id, status: cancelled, cancel_requested: true}.",
)
def check_cancel_queued_answer(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    answer = c.agent.cancel(command_id, "cancelling")
    c.runs.done(command_id)
    c.expect.equal(
        {k: answer.get(k) for k in CANCEL_FIELDS},
        {"command_id": command_id, "status": CANCELLED, "cancel_requested": True},
        "the cancel answer",
    )


@check(
    "R7-cancel-running-answer",
    "Cancelling a running run answers {command_id, status: running, cancel_requested: true}.",
)
def check_cancel_running_answer(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = c.agent.queue()["command_id"]
    c.desktop.start(command_id)
    answer = c.agent.cancel(command_id, "cancelling")
    c.expect.equal(
        {k: answer.get(k) for k in CANCEL_FIELDS},
        {"command_id": command_id, "status": RUNNING, "cancel_requested": True},
        "the cancel answer",
    )


@check(
    "R7-cancel-terminal-unchanged",
    "Cancelling a completed run answers its unchanged status and changes nothing.",
    schedule="long-chain",
)
def check_cancel_terminal_unchanged(osf_conf: Conformance) -> None:
    c = osf_conf
    command_id = finished_run(
        c, COMPLETED, result="done", total_tokens=7, reported_cost=0
    ).command_id
    before = c.agent.view(command_id)
    answer = c.agent.cancel(command_id, "cancelling")
    c.wire.decisive()
    c.expect.equal(answer.get("status"), COMPLETED, "the cancel answer's status")
    c.expect.equal(c.agent.view(command_id), before, "the run after the cancel")


@check(
    "R7-cancel-unknown",
    "cancel_graph_run of an unknown or malformed command id is refused with 'Graph run not "
    "found or access removed'.",
)
def check_cancel_unknown(osf_conf: Conformance) -> None:
    c = osf_conf
    for command_id in (str(uuid.uuid4()), "not-a-uuid"):
        out = c.agent.call("cancel_graph_run", {"command_id": command_id})
        c.expect.error(out, RUN_NOT_FOUND, f"cancel_graph_run of {command_id!r}")
