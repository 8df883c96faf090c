"""D11 and D14 at production speed (opt-in: ``--osf-relay-realtime``; about a minute).

The relay is started without ``OSF_RELAY_INTERVAL`` and ``OSF_RELAY_CONTROL_POLL``,
so it must fall back to the original hook's 20 s passes and 3 s control polls.
"""

from __future__ import annotations

import statistics

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.relay import RelayConformance, RunPlan

OPT_IN = "--osf-relay-realtime"


@check(
    "D11-relay-realtime-cadence",
    "Without the timing variables, passes are 20 s apart (each gap 17-24 s).",
    area="relay",
    opt_in=OPT_IN,
)
def check_realtime_cadence(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    conf.share(1)
    conf.start()
    conf.settle(41.5)
    times = [r.at for r in conf.requests("sync") if r.at >= conf.started_at]
    gaps = conf.gaps(times)
    shown = ", ".join(f"{g:.1f}" for g in gaps)
    conf.expect(len(times) >= 2, f"{len(times)} pass(es) in 42 s; the production interval is 20 s")
    conf.expect(
        all(17.0 <= g <= 24.0 for g in gaps),
        f"passes {shown} s apart without OSF_RELAY_INTERVAL; the production interval is 20 s",
    )


@check(
    "D14-relay-realtime-control",
    "Without the timing variables, a running command's control path is polled every 3 s "
    "(median gap 2.5-3.8 s).",
    area="relay",
    opt_in=OPT_IN,
)
def check_realtime_control(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(1)
    conf.start()
    conf.plan(lambda record: RunPlan(duration=13.0))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    done = conf.wait_delivered(command_id, timeout=45.0)
    polls = [r.at for r in conf.requests("control", command_id) if r.at <= done.at]
    conf.expect(len(polls) >= 3, f"{len(polls)} control poll(s) during a 13 s run")
    median = statistics.median(conf.gaps(polls))
    conf.expect(
        2.5 <= median <= 3.8,
        f"control polls a median {median:.2f} s apart without OSF_RELAY_CONTROL_POLL; "
        "the production period is 3 s",
    )
