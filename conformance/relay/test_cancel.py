"""D16 and R14 from the relay's side: cancels and starts.

The agent cancels a running command: the relay's control poll sees the flag, its
engine cancels once, and the completion is ``cancelled`` — also when the Graph
finished between the flag and the stop. A start answered ``cancelled`` (the agent
cancelled while the sync was being answered) is never run. A start whose answer is
lost after the server applied it is asked again; the Graph runs once and completes.
A start whose answers stay lost for longer than any run of tries within one pass is
asked again on a later pass: the relay never gives the command up.
"""

from __future__ import annotations

import time
from typing import Any

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.relay import Fault, RelayConformance, RunPlan


def _cancel_while_running(conf: RelayConformance, duration: float, stop_after: float) -> str:
    sessions = conf.share(2)
    conf.start()
    conf.plan(lambda record: RunPlan(duration=duration))
    conf.scenario.stop_after = stop_after
    command_id = conf.queue(sessions[0]["graph_session_id"])
    interval = conf.timing.expected_interval
    conf.wait_request(
        "start", "the command's start", timeout=10 * interval + 5, command_id=command_id
    )
    conf.wait_run(command_id, timeout=5.0)
    conf.settle(2 * conf.timing.expected_control_poll)
    conf.cancel(command_id)
    return command_id


def _body(conf: RelayConformance, command_id: str) -> dict[str, Any]:
    delivered = conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + 10)
    return delivered.body if isinstance(delivered.body, dict) else {}


@check(
    "D16-relay-cancel-once",
    "The cancel flag seen by a control poll makes the engine cancel the run exactly "
    "once, and the completion is cancelled.",
    area="relay",
)
def check_cancel_once(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    period = conf.timing.expected_control_poll
    command_id = _cancel_while_running(conf, duration=60.0, stop_after=8 * period)
    body = _body(conf, command_id)
    conf.settle(4 * period)
    cancels = conf.cancels_of(command_id)
    conf.expect(
        len(cancels) == 1,
        f"the engine was asked to cancel the run {len(cancels)} times; once is the rule "
        "(the control polls go on seeing the flag while the Graph stops)",
    )
    conf.expect(
        body.get("status") == "cancelled",
        f"the cancelled run was completed {body.get('status')!r}, not 'cancelled'",
    )


@check(
    "D16-relay-cancel-finished",
    "A Graph that finishes on its own between the cancel flag and the stop is still "
    "completed cancelled.",
    area="relay",
)
def check_cancel_finished(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    period = conf.timing.expected_control_poll
    # The run ends by itself ~12 control periods after the cancel (room for a poll on a
    # loaded machine); stopping takes longer, so the Graph finishes mid-stop. The stop is
    # kept within the wait for the completion, so an engine adapter that reads the
    # contract as "a cancel replaces the planned end" still completes in time (and the
    # relay must then post cancelled all the same).
    command_id = _cancel_while_running(conf, duration=14 * period, stop_after=30 * period)
    body = _body(conf, command_id)
    conf.expect(
        len(conf.cancels_of(command_id)) >= 1,
        "the engine was never asked to cancel the run after the agent cancelled it",
    )
    conf.expect(
        body.get("status") == "cancelled",
        f"the run was completed {body.get('status')!r} after the cancel flag was seen; the "
        "outcome is 'cancelled' even when the Graph finished between the flag and the stop",
    )


@check(
    "D16-relay-start-cancelled",
    "A start answered cancelled (the agent cancelled while the sync was answered) is never run.",
    area="relay",
)
def check_start_cancelled(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    holder: list[str] = []

    def cancel_now(answer: Any) -> None:
        for command in answer.get("commands", []) if isinstance(answer, dict) else []:
            if command.get("command_id") in holder:
                conf.cancel(command["command_id"])

    conf.fault(Fault("sync", "hook", hook=cancel_now, only_with_commands=True))
    holder.append(conf.queue(sessions[0]["graph_session_id"]))
    command_id = holder[0]
    start = conf.wait_request(
        "start",
        "the start of a command cancelled while its sync was answered",
        timeout=10 * conf.timing.expected_interval + 5,
        command_id=command_id,
    )
    conf.settle(2 * conf.timing.expected_interval)
    answered = start.answer.get("status") if isinstance(start.answer, dict) else None
    conf.expect(answered == "cancelled", f"the server answered the start {answered!r}")
    conf.expect(
        not conf.runs_of(command_id),
        "the engine ran a command whose start was answered 'cancelled'",
    )


@check(
    "R14-relay-lost-start",
    "A start whose answer is lost after the server applied it is asked again; the Graph "
    "runs once and the run completes.",
    area="relay",
)
def check_lost_start(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    conf.fault(Fault("start", "drop-after"))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    body = _body(conf, command_id)
    starts = conf.requests("start", command_id)
    conf.expect(
        len(starts) >= 2,
        f"the relay sent {len(starts)} start(s) of the command: the server applied the first "
        "and its answer was lost, and the start was never asked again (R14: no sync hands "
        "out a started command, so the run would stay 'running' for ever)",
    )
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the engine ran the command {len(conf.runs_of(command_id))} times, not once",
    )
    conf.expect(
        body.get("status") == "completed",
        f"the run was completed {body.get('status')!r}; its Graph completed",
    )


LOST_INTERVALS = 1.5
"""How long (in intervals, from the first start) every start answer is lost in
``R14-relay-lost-start-next-pass``; and at least until the relay's next pass has
synced, so that no run of tries within one pass outlasts it."""


@check(
    "R14-relay-lost-start-next-pass",
    "A start whose every answer is lost for 1.5 intervals and past the relay's next pass "
    "(dropped after the server applied it, then answered 503) is asked again on a later "
    "pass; the Graph runs once and the run completes.",
    area="relay",
)
def check_lost_start_next_pass(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    interval = conf.timing.expected_interval
    sessions = conf.share(2)
    conf.start()
    dropping = conf.fault(Fault("start", "drop-after", times=None))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    first = conf.wait_request(
        "start", "the command's start", timeout=10 * interval + 5, command_id=command_id
    )
    # The server applied the first start: the run is `running` and no sync hands the
    # command out again. Half the time the answers are dropped, then refused with 503.
    conf.settle(LOST_INTERVALS / 2 * interval)
    refusing = conf.fault(Fault("start", "status", status=503, times=None))
    dropping.times = 0
    conf.wait_request(
        "sync",
        "the relay's next pass (a sync after its start's answer was lost)",
        timeout=10 * interval + 5,
        after=first.at + 1e-6,
    )
    conf.settle(max(0.0, first.at + LOST_INTERVALS * interval - time.time()))
    lifted = time.time()
    refusing.times = 0
    lost = [r for r in conf.requests("start", command_id) if r.at < lifted]
    dropped = sum(1 for r in lost if r.status == 0)
    passes = sum(1 for r in conf.requests("sync") if first.at <= r.at < lifted)
    conf.notes.append(
        f"{len(lost)} start(s) lost over {lifted - first.at:.2f} s ({dropped} dropped, "
        f"{len(lost) - dropped} answered 503), {passes} sync(s) in that time"
    )
    conf.wait_request(
        "start",
        f"the start to be asked again after {len(lost)} tries lost over "
        f"{lifted - first.at:.2f} s and {passes} later pass(es) (R14: a start with no answer "
        "is asked again on the following passes until one comes; given up, the run stays "
        "'running' on the server for ever)",
        timeout=5 * interval + 5,
        after=lifted,
        command_id=command_id,
    )
    body = _body(conf, command_id)
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the engine ran the command {len(conf.runs_of(command_id))} times, not once",
    )
    conf.expect(
        body.get("status") == "completed",
        f"the run was completed {body.get('status')!r}; its Graph completed",
    )
