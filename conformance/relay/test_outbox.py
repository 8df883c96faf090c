"""D17 from the relay's side: the outbox, and a relay that survives faults.

A completion refused (5xx) or whose connection drops is re-sent, same body, on a
later pass; a relay killed (SIGKILL) while its completion is in flight and restarted
with the same state directory delivers it on its first pass and never runs the
Graph again; a delivered completion is never re-sent; SIGTERM ends the relay
promptly with its outbox intact. Server 5xx, dropped connections and slow answers
on every relay path, and a driver answering 5xx, lose nothing.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.relay import Fault, RelayConformance, RunPlan


def _resent_same(conf: RelayConformance, fault: Fault, what: str) -> None:
    sessions = conf.share(2)
    conf.start()
    conf.fault(fault)
    command_id = conf.queue(sessions[0]["graph_session_id"])
    interval = conf.timing.expected_interval
    first = conf.wait_request(
        "complete", f"the {what} completion", timeout=10 * interval + 5, command_id=command_id
    )
    delivered = conf.wait_delivered(command_id, timeout=6 * interval + 5)
    conf.expect(
        delivered.body == first.body,
        f"the completion re-sent after a {what} differs from the first: "
        f"{str(first.body)[:150]} then {str(delivered.body)[:150]}",
    )
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the Graph ran {len(conf.runs_of(command_id))} times; re-sending must not run it again",
    )


@check(
    "D17-relay-resend-refused",
    "A completion refused with 503 is re-sent, same body, and delivered; the Graph ran once.",
    area="relay",
)
def check_resend_refused(osf_relay_conf: RelayConformance) -> None:
    _resent_same(osf_relay_conf, Fault("complete", "status", status=503), "refused (503)")


@check(
    "D17-relay-resend-dropped",
    "A completion whose connection is dropped unanswered is re-sent, same body, and "
    "delivered; the Graph ran once.",
    area="relay",
)
def check_resend_dropped(osf_relay_conf: RelayConformance) -> None:
    _resent_same(osf_relay_conf, Fault("complete", "drop"), "dropped")


@check(
    "D17-relay-no-resend",
    "A completion answered 2xx is never sent again.",
    area="relay",
)
def check_no_resend(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    command_id = conf.queue(sessions[0]["graph_session_id"])
    conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + 5)
    conf.settle(3.2 * conf.timing.expected_interval)
    posts = conf.requests("complete", command_id)
    conf.expect(
        len(posts) == 1,
        f"the completion was posted {len(posts)} times although the first was answered "
        f"{posts[0].status}",
    )


@check(
    "D17-relay-kill-restart",
    "A relay killed (SIGKILL) while its completion is in flight, restarted with the same "
    "state directory, delivers it on its first pass and never runs the Graph again.",
    area="relay",
)
def check_kill_restart(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    killed = threading.Event()
    in_flight: list[Any] = []

    def kill(body: Any) -> None:
        in_flight.append(body)
        conf.kill()
        killed.set()

    conf.fault(Fault("complete", "hook-drop", hook=kill))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    interval = conf.timing.expected_interval
    conf.expect(killed.wait(10 * interval + 10), "the relay never posted the command's completion")
    restarted = time.time()
    conf.start()
    delivered = conf.wait_delivered(command_id, timeout=4 * interval + 5)
    syncs = [r for r in conf.requests("sync") if r.at >= restarted]
    conf.expect(
        not syncs or delivered.at <= syncs[0].at,
        "the restarted relay synced before re-sending the completion it had in flight "
        "(the outbox goes first)",
    )
    conf.expect(
        delivered.body == in_flight[0],
        "the completion delivered after the restart is not the one in flight at the kill",
    )
    conf.settle(1.5 * interval)
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the Graph ran {len(conf.runs_of(command_id))} times across the restart, not once",
    )


@check(
    "D17-relay-sigterm",
    "SIGTERM ends the relay within 5 s with its outbox intact: the next start delivers "
    "the completion that was waiting.",
    area="relay",
)
def check_sigterm(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    refusing = conf.fault(Fault("complete", "status", status=503, times=None))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    interval = conf.timing.expected_interval
    conf.wait_request(
        "complete", "the refused completion", timeout=10 * interval + 5, command_id=command_id
    )
    began = time.monotonic()
    conf.stop()
    took = time.monotonic() - began
    conf.expect(took < 4.5, f"the relay took {took:.1f} s to end after SIGTERM")
    refusing.times = 0
    conf.start()
    conf.wait_delivered(command_id, timeout=4 * interval + 5)
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the Graph ran {len(conf.runs_of(command_id))} times across the restart, not once",
    )


def _survives(conf: RelayConformance, kind: str) -> None:
    sessions = conf.share(2)
    conf.start()
    conf.plan(lambda record: RunPlan(duration=4 * conf.timing.expected_control_poll))
    for action in ("sync", "start", "control", "complete"):
        conf.fault(Fault(action, kind, status=503, seconds=2.0 * conf.timing.expected_interval))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    interval = conf.timing.expected_interval
    delivered = conf.wait_delivered(command_id, timeout=15 * interval + 15)
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the Graph ran {len(conf.runs_of(command_id))} times, not once",
    )
    conf.settle(2.6 * interval)
    later = [r for r in conf.requests("sync") if r.at > delivered.at]
    conf.expect(
        len(later) >= 2,
        f"{len(later)} pass(es) in the 2.6 intervals after the faults: the relay must keep "
        "its cadence",
    )


@check(
    "D17-relay-survives-5xx",
    "A 503 on each relay path (sync, start, control, complete) loses nothing: the command "
    "runs once and is delivered, and the passes go on.",
    area="relay",
)
def check_survives_5xx(osf_relay_conf: RelayConformance) -> None:
    _survives(osf_relay_conf, "status")


@check(
    "D17-relay-survives-drops",
    "A connection dropped unanswered on each relay path loses nothing: the command runs "
    "once and is delivered, and the passes go on.",
    area="relay",
)
def check_survives_drops(osf_relay_conf: RelayConformance) -> None:
    _survives(osf_relay_conf, "drop")


@check(
    "D17-relay-survives-slow",
    "An answer held two intervals on each relay path loses nothing: the command runs "
    "once and is delivered, and the passes go on.",
    area="relay",
)
def check_survives_slow(osf_relay_conf: RelayConformance) -> None:
    _survives(osf_relay_conf, "hold")


@check(
    "D17-relay-survives-refused",
    "Connections refused for two intervals while a command runs lose nothing: it is "
    "delivered once the server is back, the Graph ran once, and the passes go on.",
    area="relay",
)
def check_survives_refused(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    interval = conf.timing.expected_interval
    conf.plan(lambda record: RunPlan(duration=0.5 * interval))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    conf.wait_request(
        "start", "the command's start", timeout=10 * interval + 5, command_id=command_id
    )
    conf.wait_run(command_id, timeout=5.0)  # the start's answer is in: the command runs
    conf.refuse_connections(2.0 * interval)
    delivered = conf.wait_delivered(command_id, timeout=6 * interval + 5)
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the Graph ran {len(conf.runs_of(command_id))} times, not once",
    )
    conf.settle(2.6 * interval)
    later = [r for r in conf.requests("sync") if r.at > delivered.at]
    conf.expect(
        len(later) >= 2,
        f"{len(later)} pass(es) in the 2.6 intervals after the refusals: the relay must keep "
        "its cadence",
    )


@check(
    "D17-relay-survives-driver-5xx",
    "A driver answering 503 to a few requests loses nothing: a command queued then runs "
    "once and is delivered.",
    area="relay",
)
def check_survives_driver_5xx(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    conf.scenario.fail_next = 4
    command_id = conf.queue(sessions[0]["graph_session_id"])
    conf.wait_delivered(command_id, timeout=12 * conf.timing.expected_interval + 10)
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the Graph ran {len(conf.runs_of(command_id))} times, not once",
    )
