"""A1 and A2 from the agent's side: the first look, fixed polling, stop at terminal.

The Graph lasts three intervals (I, the ticket's ``poll_after_seconds``). Bounds are
in units of I and come from the published polling table scaled to I (docs/choices.md).
An upper bound is judged less the time the suite's own process was kept from running
(the relay suite's rule: a machine too busy for the suite keeps the agent waiting too);
a lower bound as measured.
"""

from __future__ import annotations

import itertools
import math

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.agent import AgentConformance
from pytest_osfoundry.conformance.expected import TERMINAL
from pytest_osfoundry.engine import Fixed, Graph, served_graph

FIRST_LOOK = (0.75, 2.0)
"""The first read's delay after the ticket, in intervals: not before 0.75 I, at most 2 I."""

EVERY_15_S = 0.75
"""The `every 15 s` row's period in intervals (15 s of 20)."""

EVERY_15_S_P95_CALLS = 16
"""The `every 15 s` row's p95 calls per run: never more reads than this."""

BACKOFF_P95_LATE = 28.4 / 20
"""The backoff row's p95 lateness in intervals (28.4 s of 20): the result seen no later."""


def _three_intervals(conf: AgentConformance) -> dict[str, object]:
    task = conf.run_task()
    conf.graph(str(task["graph_session_id"]), served_graph(3 * conf.interval))
    return task


@check(
    "A1-first-look",
    "The agent's first get_graph_run comes 0.75-2 intervals after the ticket "
    "(poll_after_seconds), for a Graph of three intervals.",
)
def check_first_look(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    outcome = conf.run(_three_intervals(conf))
    run = conf.expect_one_run()
    reads = conf.reads(run.command_id)
    conf.expect(bool(reads), "the agent never called get_graph_run for its run")
    interval = conf.interval
    ticket = conf.ticket_time()
    delay = (reads[0].at - ticket) / interval
    # The upper bound is judged less the suite's own stalls (the lower one as measured).
    excused = delay - conf.suite.stalls.within(ticket, reads[0].at) / interval
    conf.measures["first_look_intervals"] = round(delay, 3)
    low, high = FIRST_LOOK
    conf.expect(
        low <= delay and excused <= high,
        f"the first get_graph_run came {delay:.2f} intervals after the ticket "
        f"(I = {interval:g} s); the first look is due about one interval after it "
        f"({low:g}-{high:g} I): the desktop picks work up once an interval",
    )
    conf.expect_reported(outcome, run)


@check(
    "A1-fixed-polling",
    "For a Graph of three intervals the agent reads its run no more often than the "
    "`every 15 s` row scaled (one read per 0.75 I of the run, plus two; at most 16) and "
    "sees the result at most 1.42 intervals after it finished (the backoff row's p95).",
)
def check_fixed_polling(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    outcome = conf.run(_three_intervals(conf))
    run = conf.expect_one_run()
    reads = conf.reads(run.command_id)
    conf.expect(bool(reads), "the agent never called get_graph_run for its run")
    interval = conf.interval
    ticket = conf.ticket_time()
    terminal = next((r for r in reads if (r.result or {}).get("status") in TERMINAL), None)
    conf.expect(terminal is not None, "no get_graph_run of the agent's saw its run terminal")
    assert terminal is not None
    span = (terminal.at - ticket) / interval
    bound = min(EVERY_15_S_P95_CALLS, math.floor(span / EVERY_15_S) + 2)
    upto = reads[: reads.index(terminal) + 1]
    gaps = [round((b.at - a.at) / interval, 3) for a, b in itertools.pairwise(upto)]
    finished = run.finished_at or terminal.at
    stalled = conf.suite.stalls.within(finished, terminal.at)
    late = (terminal.at - finished - stalled) / interval
    conf.measures.update(
        {
            "reads": len(upto),
            "read_bound": bound,
            "gaps_intervals": gaps,
            "late_intervals": round(late, 3),
            "stalled_seconds": round(stalled, 3),
        }
    )
    conf.expect(
        len(upto) <= bound,
        f"the agent read its run {len(upto)} times in {span:.2f} intervals (gaps {gaps} I); "
        f"the `every 15 s` row allows {bound}: poll once an interval, not faster",
    )
    conf.expect(
        late <= BACKOFF_P95_LATE,
        f"the agent saw the result {late:.2f} intervals after the run finished; at most "
        f"{BACKOFF_P95_LATE:.2f} (the backoff row's p95): poll at a fixed interval, no backoff"
        + (f" ({stalled:.3f} s of the suite itself kept from running excused)" if stalled else ""),
    )
    conf.expect_reported(outcome, run)


@check(
    "A2-stop-at-terminal",
    "The agent reads its run no more after a get_graph_run answered a terminal status.",
)
def check_stop_at_terminal(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    outcome = conf.run(conf.run_task())
    run = conf.expect_one_run()
    reads = conf.reads(run.command_id)
    seen = next(
        (i for i, r in enumerate(reads) if (r.result or {}).get("status") in TERMINAL),
        None,
    )
    conf.expect(seen is not None, "no get_graph_run of the agent's saw its run terminal")
    assert seen is not None
    after = len(reads) - seen - 1
    conf.measures["reads_after_terminal"] = after
    conf.expect(
        after == 0,
        f"the agent read its run {after} more time(s) after it answered "
        f"{(reads[seen].result or {}).get('status')!r}: a terminal status is final",
    )
    conf.expect_reported(outcome, run)


@check(
    "A2-failed-run-reported",
    "A run the desktop fails is reported as it is: status failed, exit 0 (the agent is "
    "done), nothing queued again.",
)
def check_failed_run_reported(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    task = conf.run_task()
    conf.graph(
        str(task["graph_session_id"]),
        Graph(duration=Fixed(conf.interval), error="the Graph failed on purpose (agent suite)"),
    )
    outcome = conf.run(task)
    conf.expect_reported(outcome, conf.expect_one_run(), status="failed")


OFFLINE_INTERVALS = 8
"""How long the desktop sleeps in the patience check, in intervals from the ticket."""


@check(
    "A3-patient-while-offline",
    f"While the desktop is offline for {OFFLINE_INTERVALS} intervals the agent keeps "
    "reading its queued run (no gap over two intervals), queues nothing more and cancels "
    "nothing; the run completes once the desktop is back and is reported.",
)
def check_patient_while_offline(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.offline()
    conf.after_ticket(OFFLINE_INTERVALS, conf.online)
    outcome = conf.run(conf.run_task())
    interval = conf.interval
    runs = conf.runs()
    cancels = conf.calls("cancel_graph_run")
    conf.measures.update({"runs": len(runs), "cancels": len(cancels)})
    conf.expect(
        len(runs) == 1,
        f"the agent queued {len(runs)} runs while the desktop was offline: a run that stays "
        "queued is waited for, never queued again under a new key",
    )
    conf.expect(
        not cancels,
        f"the agent cancelled its run {len(cancels)} time(s) while it was queued: a slow "
        "desktop is no reason to cancel",
    )
    run = runs[0]
    ticket = conf.ticket_time()
    back = ticket + OFFLINE_INTERVALS * interval
    reads = [r.at for r in conf.reads(run.command_id) if r.at <= back]
    conf.expect(bool(reads), "the agent never read its run while the desktop was offline")
    times = [ticket, *reads, back]
    gaps = [round((b - a) / interval, 3) for a, b in itertools.pairwise(times)]
    # An upper bound: each gap is judged less the suite's own stalls within it.
    pairs = list(itertools.pairwise(times))
    stalled = [conf.suite.stalls.within(a, b) for a, b in pairs]
    excused = [(b - a - conf.suite.stalls.within(a, b)) / interval for a, b in pairs]
    conf.measures["gaps_intervals_offline"] = gaps[:-1]
    conf.measures["stalled_seconds"] = round(sum(stalled), 3)
    conf.expect(
        max(excused) <= 2.0,
        f"while the desktop was offline the agent's reads were {gaps[:-1]} intervals apart "
        f"and its last came {gaps[-1]:.2f} intervals before the desktop returned: keep "
        "polling at the cadence (no gap over two intervals)"
        + (
            f" ({sum(stalled):.3f} s of the suite itself kept from running excused)"
            if any(stalled)
            else ""
        ),
    )
    conf.expect_reported(outcome, run)
