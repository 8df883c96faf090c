"""R15 from the relay's side: a refused desktop token is not hammered.

Mid-check the suite revokes the relay's desktop token on the server (every relay
request with it is answered 401, as for an unknown token, R12), while a completion is
on its way: the relay's completion is refused and must stay in its outbox. For two
intervals the token stays refused: the relay keeps its pass rhythm, at most one sync
a pass (two enabled projects, so a pass that syncs on after a refusal syncs twice),
and re-sends the refused completion at most once a pass. Then the token is accepted
again: the relay recovers on its own, delivers the same completion and syncs again.
What it writes in its log is its own: the check does not read it.
"""

from __future__ import annotations

import time
from typing import Any

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.relay import RelayConformance, RunPlan, RunRecord

REVOKED_INTERVALS = 2
"""How many intervals the token stays refused."""

AT_ONCE = 0.25
"""Two refused requests of one kind closer than this many intervals: retried at once."""


@check(
    "R15-relay-refused-token",
    "With its desktop token refused (401) the relay keeps its pass rhythm: at most one "
    "sync a pass and a refused completion re-sent at most once a pass, never at once; "
    "the completion stays in the outbox and is delivered, and syncs resume, once the "
    "token is accepted again.",
    area="relay",
)
def check_refused_token(osf_relay_conf: RelayConformance) -> None:
    conf = osf_relay_conf
    sessions = conf.share(1, project=0)
    conf.share(1, project=1)
    conf.start()
    interval = conf.timing.expected_interval
    revoked: list[float] = []

    def plan(record: RunRecord) -> RunPlan:
        # The engine runs the command: its start was accepted; from now on the token is not.
        if not revoked:
            conf.revoke_token()
            revoked.append(time.time())
        return RunPlan(duration=0.1)

    conf.plan(plan)
    command_id = conf.queue(sessions[0]["graph_session_id"])
    first = conf.wait_request(
        "complete",
        "the command's completion (posted after its token was revoked)",
        timeout=10 * interval + 5,
        command_id=command_id,
    )
    conf.settle(REVOKED_INTERVALS * interval)
    accepted = time.time()
    conf.accept_token()
    delivered = conf.wait_delivered(command_id, timeout=REVOKED_INTERVALS * interval + 5)
    resumed = conf.wait_request(
        "sync",
        "a sync answered 200 after the token was accepted again",
        timeout=REVOKED_INTERVALS * interval + 5,
        after=accepted,
        statuses=lambda status: status == 200,
    )
    refused = [r for r in conf.requests() if r.status == 401 and revoked[0] <= r.at < accepted]
    conf.notes.append(
        f"while refused ({accepted - revoked[0]:.2f} s): "
        + ", ".join(
            f"{action} {sum(1 for r in refused if r.action == action)}"
            for action in ("sync", "start", "control", "complete")
        )
        + f"; delivered {delivered.at - accepted:.2f} s and synced {resumed.at - accepted:.2f} s "
        "after it was accepted again"
    )
    conf.expect(
        first.status == 401,
        f"the completion posted after the token was revoked was answered {first.status}, not "
        "401: the check could not refuse it",
    )
    for action, what in (("sync", "syncs"), ("complete", "completions")):
        times = [r.at for r in refused if r.action == action]
        closest = conf.shortest_gap(times, before=interval)
        conf.expect(
            closest is None or closest >= AT_ONCE * interval,
            f"two {what} refused with 401 {closest or 0:.3f} s apart ({len(times)} in "
            f"{accepted - revoked[0]:.1f} s with OSF_RELAY_INTERVAL={interval:g}): a refused "
            "token is not retried at once; the relay keeps its pass rhythm, at most one sync "
            "a pass",
        )
    body: Any = delivered.body
    conf.expect(
        body == first.body,
        "the completion delivered after the token was accepted again is not the one refused "
        "(the outbox keeps the refused completion as it was)",
    )
    conf.expect(
        len(conf.runs_of(command_id)) == 1,
        f"the engine ran the command {len(conf.runs_of(command_id))} times; once, whatever "
        "happened to its completion",
    )
