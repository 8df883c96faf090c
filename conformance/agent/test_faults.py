"""A5, R6 and R1 from the agent's side: a start or a read whose answer goes astray, an
event stream left open, an MCP session the server ends.

Each fault is the server's (pytest_osfoundry/conformance/agent/_instrumented.py), so
the agent sees it only on the wire: a start applied and answered 503, a start applied
and its answer held past the agent's own time-out, a start applied and its reply lost
with its MCP session ended, a read whose reply is lost, every tool answered on an
event stream left open after the answer, the session ended mid-run. The session
checks' server speaks only the legacy MCP revisions (the ones with sessions); an
agent that opens no session there is not run (skipped, with the reason).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.agent import AgentConformance, AgentFault, McpCall

LEGACY_ONLY = "2025-11-25 and 2025-06-18"
"""The revisions the session checks' server speaks (the ones with MCP sessions)."""


def _asked(call: McpCall) -> tuple[Any, Any, Any]:
    arguments = call.arguments or {}
    return (
        arguments.get("graph_session_id"),
        arguments.get("idempotency_key"),
        arguments.get("arguments"),
    )


def _starts(conf: AgentConformance) -> list[McpCall]:
    """The agent's starts in the order they arrived (a held one is recorded last)."""
    return sorted(conf.calls("run_graph_session"), key=lambda c: c.at)


def _expect_asked_again(
    conf: AgentConformance, after: str, *, held: bool = False
) -> list[McpCall]:
    """Fail unless the agent asked again, every time with the first start's key,
    session and arguments; the starts. ``held``: the first start's answer is held, so
    it is recorded only once released (by a second start, or when the check ends)."""
    starts = _starts(conf)
    sent = max(len(starts), 1) if held else len(starts)
    conf.measures["starts"] = sent
    outcome = conf.outcomes[-1]
    stopped = " and was stopped at its deadline" if outcome.stopped else ""
    conf.expect(
        len(starts) >= 2,
        f"the agent sent {sent} start(s){stopped}: after {after} it must ask again "
        "(the start may have been applied; the same key makes asking safe)",
    )
    first = _asked(starts[0])
    for call in starts[1:]:
        conf.expect(
            _asked(call) == first,
            f"the retry asked {_asked(call)!r} after {first!r}: after {after} a start is "
            "asked again with the same key, session and arguments",
        )
    return starts


def _need_session(conf: AgentConformance) -> None:
    """Skip the check when the agent opened no MCP session (it speaks only the
    stateless revision, which the check's legacy-only server does not)."""
    if not any(c.rpc == "initialize" and c.status == 200 for c in conf.calls()):
        pytest.skip(
            f"the agent opened no MCP session on this check's server, which speaks only "
            f"{LEGACY_ONLY} (the revisions with sessions): an agent of 2026-07-28 alone "
            "has no session to end"
        )


@check(
    "A5-same-key-after-503",
    "After its first start is applied and answered HTTP 503 instead of the ticket (a "
    "gateway failing), the agent asks again with the same key, session and arguments; "
    "exactly one run is queued and reported.",
)
def check_same_key_after_503(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.fault(AgentFault("run_graph_session", "status-after", status=503))
    outcome = conf.run(conf.run_task())
    _expect_asked_again(conf, "a 503 to a start")
    conf.expect_reported(outcome, conf.expect_one_run())


@check(
    "A5-same-key-after-held-answer",
    "When the answer to its first start (applied) never comes, the agent gives up on "
    "it by its own time-out and asks again with the same key, session and arguments; "
    "exactly one run is queued and reported.",
)
def check_same_key_after_held_answer(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    deadline = conf.deadline()
    # Held until the agent asks again or the check ends (then dropped unanswered).
    conf.fault(AgentFault("run_graph_session", "hold-after", seconds=deadline + 2.0))
    outcome = conf.run(conf.run_task(), deadline=deadline)
    starts = _expect_asked_again(
        conf, "an answer that never came (held past any time-out)", held=True
    )
    conf.measures["retry_after_intervals"] = round(
        (starts[1].at - starts[0].at) / conf.interval, 2
    )
    conf.expect_reported(outcome, conf.expect_one_run())


@check(
    "A5-same-key-new-session",
    "When the reply to its first start (applied) is lost and the server has ended its "
    "MCP session (404 for that Mcp-Session-Id), the agent starts a new session and asks "
    "again with the same key and arguments; exactly one run is queued and reported.",
)
def check_same_key_new_session(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.legacy_only()
    conf.fault(AgentFault("run_graph_session", "drop-after", end_session=True))
    outcome = conf.run(conf.run_task())
    _need_session(conf)
    starts = _expect_asked_again(conf, "a lost reply")
    ended = starts[0].session
    renewed = [c for c in starts[1:] if c.session is not None and c.session != ended]
    conf.expect(
        bool(renewed),
        f"the agent asked again {len(starts) - 1} time(s), always naming the session the "
        "server had ended (answered 404): on a 404 to a request naming its "
        "Mcp-Session-Id an agent starts a new session (initialize) and asks again",
    )
    conf.expect_reported(outcome, conf.expect_one_run())


@check(
    "R6-agent-reads-again",
    "After the reply to one get_graph_run is lost (the connection dropped), the agent "
    "reads its run again (no new start), and reports the run once it is terminal.",
    area="agent",
)
def check_reads_again(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.fault(AgentFault("get_graph_run", "drop-after"))
    outcome = conf.run(conf.run_task())
    reads = sorted(conf.reads(), key=lambda c: c.at)
    lost = [c for c in reads if c.status == 0]
    conf.expect(bool(lost), "the agent never read its run with get_graph_run")
    again = [c for c in reads if c.at > lost[0].at]
    conf.measures["reads"] = len(reads)
    conf.expect(
        bool(again),
        "the agent did not read its run again after a get_graph_run whose reply was lost: "
        "a read changes nothing, so read again at the next interval",
    )
    starts = conf.calls("run_graph_session")
    conf.expect(
        len(starts) == 1,
        f"the agent sent {len(starts)} starts: a lost read is no reason to start again",
    )
    conf.expect_reported(outcome, conf.expect_one_run())


@check(
    "R1-agent-stream-left-open",
    "When every tool call is answered as an event stream left open after the answer's "
    "event (as some servers do), the agent takes each answer from its event and goes "
    "on: one start, the run followed and reported.",
    area="agent",
)
def check_stream_left_open(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.fault(AgentFault("*", "open-stream", times=None))
    outcome = conf.run(
        conf.run_task(), stop_when=lambda: len(conf.calls("run_graph_session")) > 1
    )
    starts = conf.calls("run_graph_session")
    conf.expect(bool(starts), "the agent never called run_graph_session")
    conf.expect(
        len(starts) == 1,
        f"the agent sent {len(starts)} starts although the ticket came on the event "
        "stream answering the first (left open after the answer, as a server may): take "
        "the answer from its event; do not wait for the stream to end",
    )
    conf.expect_reported(outcome, conf.expect_one_run())


@check(
    "R1-agent-session-ended",
    "When the server ends the agent's MCP session mid-run (404 for that Mcp-Session-Id), "
    "the agent starts a new session and goes on reading the same run: one run, reported.",
    area="agent",
)
def check_session_ended(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.legacy_only()
    ended: list[tuple[float, str | None]] = []
    conf.after_ticket(0.5, lambda: ended.append((time.time(), conf.end_session())))
    outcome = conf.run(conf.run_task())
    _need_session(conf)
    conf.expect(
        bool(ended) and ended[0][1] is not None,
        "the check could not end the agent's session: it named none after its ticket",
    )
    at, session = ended[0]
    run = conf.expect_one_run()
    later = [c for c in conf.reads() if c.at > at]
    renewed = [
        c
        for c in later
        if c.session not in (None, session)
        and (c.arguments or {}).get("command_id") == run.command_id
    ]
    conf.measures["reads_after_end"] = len(later)
    conf.expect(
        bool(renewed),
        f"after the server ended its MCP session the agent read its run {len(later)} "
        "time(s), never on a new session: on a 404 to a request naming its "
        "Mcp-Session-Id an agent starts a new session (initialize) and goes on polling "
        "the same command id",
    )
    conf.expect(
        len(conf.calls("run_graph_session")) == 1,
        "the agent started again after its session ended: the run it queued is still "
        "there; poll its command id on the new session",
    )
    conf.expect_reported(outcome, run)
