"""A2 and D18 from the agent's side: outcomes reported as the server has them.

A run the desktop's re-check cancels (D13: its session no longer shared when the
desktop comes to run it) is reported ``cancelled``, exit 0, nothing queued again. A
completion over the bound is stored ``result_truncated`` (D18): the agent says so and
shows no result; the largest result that fits -- Japanese text, three UTF-8 bytes a
character -- passes through the agent whole (compared by JSON equality).
"""

from __future__ import annotations

import json

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.agent import AgentConformance
from pytest_osfoundry.conformance.expected import RESULT_LIMIT
from pytest_osfoundry.engine import Fixed, Graph, ResultText
from pytest_osfoundry.relay import Envelope, max_result_text
from pytest_osfoundry.server import Run

RECHECK_AFTER = 0.5
"""When the desktop, asleep since before the ticket, stops sharing the session and
comes back, in intervals after the ticket."""

DESKTOP_ENVELOPE = Envelope(
    execution_id="exec_" + "0" * 32, status="completed", total_tokens=0, reported_cost=0
)
"""The kit's desktop's completion around a result (its execution ids are ``exec_`` and
32 hex digits): 23 characters more than the seed's, so 99,876 characters of result
text fit where the seed's envelope fits 99,899."""

LARGE_CHARS = max_result_text("日", DESKTOP_ENVELOPE)
"""The largest Japanese result text the kit's desktop posts whole (D18)."""


def _expect_one_start(conf: AgentConformance) -> Run:
    starts = conf.calls("run_graph_session")
    runs = conf.runs()
    conf.expect(
        len(starts) == 1 and len(runs) == 1,
        f"the agent sent {len(starts)} starts and queued {len(runs)} runs for one run: "
        "a terminal outcome is reported, never run again",
    )
    return runs[0]


@check(
    "A2-recheck-cancel-reported",
    "A run the desktop's re-check cancels (its session no longer shared when the "
    "desktop comes to run it) is reported as the server has it: status cancelled, "
    "exit 0, nothing queued again.",
)
def check_recheck_cancel_reported(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    task = conf.run_task()
    relay, clock = conf.desktop.relay, conf.desktop.clock

    def unshare_and_return() -> None:  # on the desktop's own thread
        relay.untick(conf.project_id, str(task["graph_session_id"]))
        relay.go_online()

    def on_desktop_thread() -> None:
        clock.call_later(0.0, unshare_and_return)

    conf.offline()
    conf.after_ticket(RECHECK_AFTER, on_desktop_thread)
    outcome = conf.run(task)
    run = _expect_one_start(conf)
    conf.expect(
        run.status == "cancelled" and run.started_at is None,
        f"the desktop's re-check should have cancelled the run; the server has it "
        f"{run.status!r}",
    )
    conf.expect_reported(outcome, run, status="cancelled")


@check(
    "D18-agent-truncated-result",
    "A completion over the bound is stored result_truncated: the agent reports "
    "result_truncated true and result null (no partial result shown as complete), "
    "exit 0, and does not run it again.",
    area="agent",
)
def check_truncated_result(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    task = conf.run_task()
    conf.graph(
        str(task["graph_session_id"]),
        Graph(duration=Fixed(conf.interval), result=ResultText(RESULT_LIMIT + 1, "ascii")),
    )
    outcome = conf.run(task)
    run = _expect_one_start(conf)
    conf.expect(
        run.status == "completed" and (run.completion or {}).get("result_truncated") is True,
        f"the server should have the run completed and truncated; it has it {run.status!r}",
    )
    entry = conf.expect_reported(outcome, run)
    conf.expect(
        entry.get("result_truncated") is True and entry.get("result") is None,
        f"the server stored the run result_truncated (D18: all or nothing); the report "
        f"says result_truncated {json.dumps(entry.get('result_truncated'))} and result "
        f"{json.dumps(entry.get('result'))[:200]}: say result_truncated true, result null",
    )


@check(
    "D18-agent-large-result",
    f"A result of {LARGE_CHARS:,} Japanese characters (the largest the kit's desktop "
    "posts whole, about 300 kB of UTF-8) is reported whole: equal to the run's result "
    "by JSON equality, not truncated, exit 0.",
    area="agent",
)
def check_large_result(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    task = conf.run_task()
    conf.graph(
        str(task["graph_session_id"]),
        Graph(duration=Fixed(conf.interval), result=ResultText(LARGE_CHARS, "japanese")),
    )
    outcome = conf.run(task)
    run = _expect_one_start(conf)
    stored = (run.completion or {}).get("result")
    conf.expect(
        isinstance(stored, str) and len(stored) == LARGE_CHARS,
        f"the server should have the whole result of {LARGE_CHARS} characters; it has "
        f"{run.status!r}, truncated {(run.completion or {}).get('result_truncated')}",
    )
    conf.measures["result_bytes"] = len(str(stored).encode("utf-8"))
    entry = conf.expect_reported(outcome, run)
    reported = entry.get("result")
    conf.measures["reported_chars"] = len(reported) if isinstance(reported, str) else None
    conf.expect(
        entry.get("result_truncated") is not True,
        "the report says result_truncated true for a result the server has whole",
    )
