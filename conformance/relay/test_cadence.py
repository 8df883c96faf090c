"""D11 from the relay's side: passes one interval apart, at once on a sharing change,
none while one is busy and no burst after it.

The relay runs with ``OSF_RELAY_INTERVAL`` (1 s by default); a pass is seen as its
sync of the one enabled project (the server's record). Bands are wide (a loaded
2-core runner delays a timer by tens of milliseconds, rarely hundreds); the
measurement behind them is in docs/relay-conformance.md.
"""

from __future__ import annotations

import statistics
import time

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.relay import RelayConformance, RunPlan


def _sync_times(conf: RelayConformance, since: float = 0.0) -> list[float]:
    return [r.at for r in conf.requests("sync") if r.at >= since]


@check(
    "D11-relay-cadence",
    "Consecutive passes of an idle relay are one interval apart (median within 0.75-1.35 "
    "intervals, no gap under half an interval or over two).",
    area="relay",
)
def check_cadence(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    conf.share(2)
    conf.start()
    interval = conf.timing.expected_interval
    since = time.time()
    conf.settle(interval * 5.3)
    times = _sync_times(conf, since)
    conf.expect(
        len(times) >= 3,
        f"{len(times)} pass(es) in {interval * 5.3:g} s with OSF_RELAY_INTERVAL={interval:g}: "
        "a pass is due every interval",
    )
    gaps = conf.gaps(times)
    median = statistics.median(gaps)
    shown = ", ".join(f"{g:.2f}" for g in gaps)
    conf.expect(
        0.75 * interval <= median <= 1.35 * interval,
        f"the passes are a median {median:.2f} s apart (gaps {shown} s); the interval is "
        f"{interval:g} s",
    )
    longest, said = conf.longest_gap(times)
    conf.expect(
        min(gaps) >= 0.5 * interval and longest <= 2.0 * interval,
        f"a gap between passes is outside 0.5-2 intervals: {shown} s ({said}; interval "
        f"{interval:g} s)",
    )


@check(
    "D11-relay-sharing-pass",
    "A sharing change makes an idle relay pass at once: the median delay of three "
    "changes, each made just after a pass, is under half an interval.",
    area="relay",
)
def check_sharing_pass(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    interval = conf.timing.expected_interval
    delays = []
    for round_ in range(3):
        last = _sync_times(conf)[-1]
        conf.wait_request("sync", "the next pass", timeout=interval * 3, after=last + 1e-6)
        conf.settle(0.12 * interval)
        changed = time.time()
        conf.edit_session(sessions[0]["graph_session_id"], description=f"changed {round_}")
        seen = conf.wait_request(
            "sync", "a pass after the sharing change", timeout=interval * 3, after=changed
        )
        delays.append(seen.at - changed)
    median = statistics.median(delays)
    shown = ", ".join(f"{d:.2f}" for d in delays)
    conf.expect(
        median < 0.5 * interval,
        f"after a sharing change the next pass came {shown} s later (median {median:.2f} s); "
        f"a change must cause a pass at once, not at the next interval ({interval:g} s)",
    )


@check(
    "D11-relay-busy-skip",
    "No pass starts while one is busy running a command, and none bursts after it: "
    "no sync during the run, at most one in the half interval after its completion.",
    area="relay",
)
def check_busy_skip(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    interval = conf.timing.expected_interval
    conf.plan(lambda record: RunPlan(duration=3.5 * interval))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    done = conf.wait_delivered(command_id, timeout=10 * interval + 10)
    conf.settle(1.6 * interval)
    starts = conf.requests("start", command_id)
    conf.expect(bool(starts), "the command was completed without a start request")
    started = starts[0].at
    during = [t for t in _sync_times(conf) if started < t < done.at]
    conf.expect(
        not during,
        f"{len(during)} sync(s) while a pass was busy running a command for "
        f"{3.5 * interval:g} s: a pass due while one is running is skipped",
    )
    after = [t for t in _sync_times(conf) if done.at <= t <= done.at + 0.5 * interval]
    conf.expect(
        len(after) <= 1,
        f"{len(after)} syncs within half an interval after the long pass ended: skipped "
        "passes must not be made up in a burst",
    )
    later = _sync_times(conf, done.at)
    conf.expect(
        bool(later) and later[0] - done.at <= 1.6 * interval,
        "no pass within 1.6 intervals after the long pass ended: the cadence must resume",
    )
