"""D12 from the relay's side: what one pass syncs.

Only enabled projects are synced, each with only its ticked sessions, at most 100
of them (the first 100, and the server's answer is used); the outbox is re-sent
before the pass's first sync.
"""

from __future__ import annotations

from typing import Any

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.relay import Fault, RelayConformance

_FIELDS = ("graph_session_id", "name", "description", "slug", "version", "status")


def _synced_ids(body: Any) -> list[str]:
    sessions = body.get("sessions") if isinstance(body, dict) else None
    return [str(s.get("graph_session_id")) for s in sessions or [] if isinstance(s, dict)]


@check(
    "D12-relay-enabled-only",
    "A disabled project is never synced; the enabled one is, every pass.",
    area="relay",
)
def check_enabled_only(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    conf.share(2, project=0)
    conf.share(2, project=1, enabled=False)
    conf.start()
    conf.settle(2.5 * conf.timing.expected_interval)
    synced = [r.body.get("project_id") for r in conf.requests("sync") if isinstance(r.body, dict)]
    conf.expect(
        conf.project_ids[1] not in synced,
        f"the disabled project was synced {synced.count(conf.project_ids[1])} time(s)",
    )
    conf.expect(
        synced.count(conf.project_ids[0]) >= 2,
        "the enabled project was synced fewer than twice in 2.5 intervals",
    )


@check(
    "D12-relay-every-enabled",
    "Every enabled project is synced on every pass: two enabled projects, each synced "
    "at least twice in 2.5 intervals.",
    area="relay",
)
def check_every_enabled(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    conf.share(2, project=0)
    conf.share(2, project=1)
    conf.start()
    conf.settle(2.5 * conf.timing.expected_interval)
    synced = [r.body.get("project_id") for r in conf.requests("sync") if isinstance(r.body, dict)]
    counts = {pid: synced.count(pid) for pid in conf.project_ids}
    conf.expect(
        all(n >= 2 for n in counts.values()),
        f"in 2.5 intervals the two enabled projects were synced {sorted(counts.values())} "
        "times: a pass syncs every enabled project",
    )


@check(
    "D12-relay-ticked-only",
    "A sync carries exactly the project's ticked sessions, in order, with their fields.",
    area="relay",
)
def check_ticked_only(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(5)
    unticked = {sessions[1]["graph_session_id"], sessions[3]["graph_session_id"]}
    for gsid in unticked:
        conf.edit_session(gsid, ticked=False)
    conf.start()
    expected = [s for s in sessions if s["graph_session_id"] not in unticked]
    body = conf.requests("sync")[-1].body
    ids = _synced_ids(body)
    conf.expect(
        not unticked & set(ids),
        f"the sync carries {len(unticked & set(ids))} unticked session(s)",
    )
    conf.expect(
        ids == [s["graph_session_id"] for s in expected],
        f"the sync carries sessions {ids}, not the ticked ones in order",
    )
    sent = {s["graph_session_id"]: s for s in body["sessions"]}
    for session in expected:
        wrong = [f for f in _FIELDS if sent[session["graph_session_id"]].get(f) != session[f]]
        conf.expect(not wrong, f"a synced session's {', '.join(wrong)} differ from the owner's")


@check(
    "D12-relay-sync-limit",
    "With 120 ticked sessions a sync carries the first 100, and a command for one of "
    "them (from the server's answer) runs.",
    area="relay",
)
def check_sync_limit(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(120)
    conf.start()
    ids = _synced_ids(conf.requests("sync")[-1].body)
    first = [s["graph_session_id"] for s in sessions[:100]]
    conf.expect(
        ids == first,
        f"with 120 ticked sessions the sync carries {len(ids)}"
        + ("" if len(ids) != 100 else ", not the first 100 in order"),
    )
    command_id = conf.queue(sessions[42]["graph_session_id"])
    conf.wait_delivered(command_id, timeout=10 * conf.timing.expected_interval + 5)
    conf.expect(len(conf.runs_of(command_id)) == 1, "the command handed out was not run once")


@check(
    "D12-relay-outbox-first",
    "A pass re-sends the outbox before its first sync.",
    area="relay",
)
def check_outbox_first(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(2)
    conf.start()
    conf.fault(Fault("complete", "status", status=503))
    command_id = conf.queue(sessions[0]["graph_session_id"])
    interval = conf.timing.expected_interval
    refused = conf.wait_request(
        "complete", "the refused completion", timeout=10 * interval + 5, command_id=command_id
    )
    resent = conf.wait_request(
        "complete",
        "the completion re-sent",
        timeout=4 * interval + 5,
        command_id=command_id,
        after=refused.at + 1e-6,
    )
    syncs = [r for r in conf.requests("sync") if refused.at < r.at]
    conf.expect(
        not syncs or resent.at <= syncs[0].at,
        f"the pass after the refusal synced {syncs[0].at - refused.at:.2f} s after it, "
        f"before re-sending the outbox (re-sent {resent.at - refused.at:.2f} s after)"
        if syncs
        else "",
    )
