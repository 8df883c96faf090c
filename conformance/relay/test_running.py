"""D14 and D15 from the relay's side: how a command is run.

Start before run, one run at a time, on channel ``graph:external:<command id>``, a
control poll every control interval while it runs and none after; a command id that
is not a UUID is never started, completed or run. Judged on the server's record of
relay requests and the driver's record of the engine's runs.
"""

from __future__ import annotations

import itertools
import statistics
from typing import Any

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.relay import Fault, RelayConformance, RunPlan


def _run_one(conf: RelayConformance, duration: float) -> str:
    sessions = conf.share(2)
    conf.start()
    conf.plan(lambda record: RunPlan(duration=duration))
    command_id = conf.queue(sessions[0]["graph_session_id"], {"topic": "relay"})
    conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + duration + 5)
    return command_id


@check(
    "D14-relay-serial",
    "Three commands handed out together run one after another: each run is asked of "
    "the engine only after the previous one's completion was posted.",
    area="relay",
)
def check_serial(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(3)
    conf.start()
    conf.plan(lambda record: RunPlan(duration=0.5))
    ids = [conf.queue(s["graph_session_id"]) for s in sessions]
    for command_id in ids:
        conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + 10)
    runs = sorted((r for r in conf.runs if r.command_id in ids), key=lambda r: r.at)
    conf.expect(len(runs) == 3, f"the engine ran {len(runs)} of the 3 commands, not each once")
    for before, after in itertools.pairwise(runs):
        posted = conf.requests("complete", before.command_id)
        conf.expect(
            bool(posted) and posted[0].at <= after.at,
            f"the engine was asked to run {after.command_id} while {before.command_id} was "
            "still running: one desktop runs one command at a time",
        )


@check(
    "D14-relay-channel",
    "The engine runs a command on channel graph:external:<command id>, with the "
    "command's session and arguments.",
    area="relay",
)
def check_channel(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    command_id = _run_one(conf, 0.1)
    runs = conf.runs_of(command_id)
    conf.expect(len(runs) == 1, f"the engine ran the command {len(runs)} times, not once")
    run = runs[0]
    expected = f"graph:external:{command_id}"
    conf.expect(run.channel == expected, f"the run's channel is {run.channel!r}, not {expected!r}")
    conf.expect(
        run.arguments == {"topic": "relay"},
        f"the run's arguments are {run.arguments!r}, not the queued {{'topic': 'relay'}}",
    )


@check(
    "D14-relay-start-first",
    "A command is started (POST .../start answered running) before its engine run is asked.",
    area="relay",
)
def check_start_first(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    command_id = _run_one(conf, 0.1)
    starts = [r for r in conf.requests("start", command_id) if r.status == 200]
    runs = conf.runs_of(command_id)
    conf.expect(bool(starts), "the command ran without an answered start request")
    conf.expect(bool(runs), "the command was completed but the engine never ran it")
    conf.expect(
        starts[0].at <= runs[0].at,
        f"the engine run came {starts[0].at - runs[0].at:.3f} s before the start request: "
        "start first, then run",
    )


@check(
    "D14-relay-control-cadence",
    "While a command runs, its control path is polled every control interval (median "
    "gap within 0.6-1.8 intervals, none over 4).",
    area="relay",
)
def check_control_cadence(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    period = conf.timing.expected_control_poll
    duration = max(2.0, 14 * period)
    command_id = _run_one(conf, duration)
    runs = conf.runs_of(command_id)
    done = conf.requests("complete", command_id)[0].at
    polls = [r.at for r in conf.requests("control", command_id) if runs[0].at <= r.at <= done]
    conf.expect(
        len(polls) >= 4,
        f"{len(polls)} control poll(s) during a {duration:g} s run with "
        f"OSF_RELAY_CONTROL_POLL={period:g}",
    )
    median = statistics.median(conf.gaps(polls))
    longest, said = conf.longest_gap(polls)
    conf.expect(
        0.6 * period <= median <= 1.8 * period and longest <= 4 * period,
        f"control polls a median {median:.3f} s apart ({said}); the control interval is "
        f"{period:g} s",
    )


@check(
    "D14-relay-no-control-after",
    "Once a command's completion is posted, its control path is not polled again.",
    area="relay",
)
def check_no_control_after(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    command_id = _run_one(conf, 0.4)
    conf.settle(max(1.0, 6 * conf.timing.expected_control_poll))
    done = conf.requests("complete", command_id)[0].at
    after = [r for r in conf.requests("control", command_id) if r.at > done]
    conf.expect(
        not after,
        f"{len(after)} control poll(s) of the command after its completion was posted",
    )


@check(
    "D15-relay-non-uuid",
    "A command whose id is not a UUID (injected into a sync answer) is never started, "
    "completed or run; a real command beside it still runs.",
    area="relay",
)
def check_non_uuid(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    session = sessions[0]
    bad_ids = ["not-a-uuid", "../../sync", "12345678-1234-1234-1234-1234567890ab-x"]
    bad: list[dict[str, Any]] = [
        {
            "command_id": bad_id,
            "graph_session_id": session["graph_session_id"],
            "slug": session["slug"],
            "arguments": {},
            "queued_at": "2026-11-08T00:00:00Z",
        }
        for bad_id in bad_ids
    ]
    conf.fault(Fault("sync", "inject", times=3, commands=bad))
    good = conf.queue(session["graph_session_id"])
    conf.wait_delivered(good, timeout=10 * conf.timing.expected_interval + 5)
    conf.settle(2 * conf.timing.expected_interval)
    named = [
        f"{r.method} {r.action} for {r.command_id!r}"
        for r in conf.requests()
        if r.command_id is not None and r.command_id != good
    ]
    conf.expect(
        not named, f"the relay sent requests for command ids that are not UUIDs: {named[:3]}"
    )
    ran = [r.command_id for r in conf.runs if r.command_id != good]
    conf.expect(not ran, f"the engine was asked to run non-UUID command ids {ran!r}")
