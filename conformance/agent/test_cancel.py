"""D8, R7 and D16 from the agent's side: the ``run-and-cancel`` task.

The agent cancels its run ``cancel_after_seconds`` (1.5 intervals) after the ticket,
once, and reports the status the run ended with on the server: ``cancelled`` at once
when it was still queued (D8: the cancel's own answer is terminal, so no read
follows it); when it was running, the server answers ``running`` with
``cancel_requested`` (R7) and the agent polls on until a read shows the run terminal
-- ``cancelled`` once the desktop stopped it, or ``completed`` with its result when
the Graph finished before the desktop saw the flag (D16). The cancel's time is judged
in intervals: not before it is due, at most one interval after (less the suite's
own stalls).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.agent import AgentConformance, AgentFault, McpCall
from pytest_osfoundry.conformance.expected import TERMINAL
from pytest_osfoundry.engine import Fixed, Graph
from pytest_osfoundry.relay import RelayEvent
from pytest_osfoundry.server import Run

CANCEL_AFTER = 1.5
"""The task's ``cancel_after_seconds`` in intervals."""

CANCEL_EARLY = 0.05
"""How much before it is due the cancel may arrive, in intervals (clock granularity)."""

CANCEL_LATE = 1.0
"""How much after it is due the cancel may arrive, in intervals (less the stalls)."""

RACED_RESULT = {"answer": "finished before the desktop saw the cancel"}


def _cancel_task(conf: AgentConformance, graph: Graph) -> dict[str, Any]:
    """A ``run-and-cancel`` task of the first shared session, which runs ``graph``."""
    task = conf.run_task()
    conf.graph(str(task["graph_session_id"]), graph)
    return {
        "kind": "run-and-cancel",
        "graph_session_id": task["graph_session_id"],
        "arguments": task["arguments"],
        "cancel_after_seconds": round(CANCEL_AFTER * conf.interval, 3),
    }


def _no_cancel_in_time(conf: AgentConformance) -> Callable[[], bool]:
    """True once the cancel is overdue by an interval more than allowed, less the
    suite's own stalls (the verdict is known: no need to wait for the agent's deadline)."""
    limit = (CANCEL_AFTER + CANCEL_LATE + 1.0) * conf.interval

    def overdue() -> bool:
        tickets = [
            c for c in conf.calls("run_graph_session") if c.result is not None or c.status == 0
        ]
        if not tickets or conf.calls("cancel_graph_run"):
            return False
        ticket, now = tickets[0].answered, time.time()
        # the suite's own stalls are not the agent's lateness (as _expect_one_cancel judges)
        return now - conf.suite.stalls.within(ticket, now) > ticket + limit

    return overdue


def _picked_up_at_once(conf: AgentConformance) -> None:
    """The desktop is asleep until the ticket, then passes at once: the run is running
    long before the cancel is due, however the desktop's passes fall."""
    conf.offline()
    conf.after_ticket(0.0, conf.online)


def _expect_one_cancel(conf: AgentConformance, run: Run) -> McpCall:
    """Fail unless the agent sent exactly one ``cancel_graph_run``, of its run, about
    ``cancel_after_seconds`` after the ticket; that call."""
    cancels = conf.calls("cancel_graph_run")
    conf.measures["cancels"] = len(cancels)
    conf.expect(
        len(cancels) == 1,
        f"the agent sent {len(cancels)} cancel_graph_run calls for a run-and-cancel task: "
        "exactly one",
    )
    cancel = cancels[0]
    named = (cancel.arguments or {}).get("command_id")
    conf.expect(
        named == run.command_id,
        f"the agent cancelled {named!r}, not its run {run.command_id}",
    )
    interval = conf.interval
    ticket = conf.ticket_time()
    delay = (cancel.at - ticket) / interval
    excused = delay - conf.suite.stalls.within(ticket, cancel.at) / interval
    conf.measures["cancel_intervals"] = round(delay, 3)
    conf.expect(
        delay >= CANCEL_AFTER - CANCEL_EARLY and excused <= CANCEL_AFTER + CANCEL_LATE,
        f"the cancel came {delay:.2f} intervals after the ticket (I = {interval:g} s); "
        f"cancel_after_seconds asks for {CANCEL_AFTER:g} (counted from the ticket; not "
        f"before, at most {CANCEL_LATE:g} interval after)",
    )
    return cancel


def _terminal_answer(conf: AgentConformance, run: Run) -> float | None:
    """When the agent first got an answer saying its run is terminal (a read or the
    cancel), or ``None``."""
    answers = [
        c.answered
        for c in (*conf.reads(run.command_id), *conf.calls("cancel_graph_run"))
        if (c.result or {}).get("status") in TERMINAL
    ]
    return min(answers, default=None)


def _expect_no_read_after_terminal(conf: AgentConformance, run: Run) -> None:
    seen = _terminal_answer(conf, run)
    after = [] if seen is None else [r for r in conf.reads(run.command_id) if r.at > seen]
    conf.measures["reads_after_terminal"] = len(after)
    conf.expect(
        not after,
        f"the agent read its run {len(after)} more time(s) after an answer said it was "
        "terminal: a terminal status is final (the cancel's answer `cancelled` too)",
    )


def _expect_polled_to_terminal(conf: AgentConformance, run: Run, cancel: McpCall) -> None:
    """Fail unless a read after the cancel saw the run terminal (R7: `running` with
    `cancel_requested` is not the end)."""
    after = [r for r in conf.reads(run.command_id) if r.at >= cancel.answered]
    terminal = [r for r in after if (r.result or {}).get("status") in TERMINAL]
    conf.measures["reads_after_cancel"] = len(after)
    conf.expect(
        bool(terminal),
        f"the cancel answered {(cancel.result or {}).get('status')!r} with cancel_requested "
        f"and the agent read its run {len(after)} time(s) after it without seeing it "
        "terminal: a running run's cancel is a request (R7); keep polling until the run is "
        "terminal and report the status it ended with",
    )


def _expect_answered_running(conf: AgentConformance, cancel: McpCall) -> None:
    answer = cancel.result or {}
    conf.expect(
        answer.get("status") == "running" and answer.get("cancel_requested") is True,
        f"the cancel was answered {answer or cancel.error!r}, not `running` with "
        "cancel_requested: the run was not running when the agent cancelled it",
    )


@check(
    "D8-agent-cancel-queued",
    "A run-and-cancel task whose run is still queued (the desktop offline): one "
    "cancel_graph_run, about cancel_after_seconds after the ticket; its answer "
    "`cancelled` is final (no read after it, no new start); reported cancelled, exit 0.",
    area="agent",
)
def check_cancel_queued(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.offline()  # never back: the run stays queued until the cancel
    task = _cancel_task(conf, Graph(duration=Fixed(conf.interval)))
    outcome = conf.run(task, stop_when=_no_cancel_in_time(conf))
    run = conf.expect_one_run()
    starts = conf.calls("run_graph_session")
    conf.expect(len(starts) == 1, f"the agent sent {len(starts)} starts for one run")
    cancel = _expect_one_cancel(conf, run)
    answer = (cancel.result or {}).get("status")
    conf.expect(
        answer == "cancelled" and run.started_at is None,
        f"the cancel of the queued run was answered {answer!r}; the server has it "
        f"{run.status!r}",
    )
    _expect_no_read_after_terminal(conf, run)
    conf.expect_reported(outcome, run, status="cancelled")


@check(
    "R7-agent-cancel-running",
    "A run-and-cancel task whose run is running: one cancel_graph_run (answered "
    "`running` with cancel_requested); the agent polls until the run is terminal and "
    "reports the server's final status, cancelled, exit 0.",
    area="agent",
)
def check_cancel_running(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    _picked_up_at_once(conf)
    task = _cancel_task(conf, Graph(duration=Fixed(8 * conf.interval), result="too late"))
    outcome = conf.run(task, stop_when=_no_cancel_in_time(conf))
    run = conf.expect_one_run()
    cancel = _expect_one_cancel(conf, run)
    _expect_answered_running(conf, cancel)
    _expect_polled_to_terminal(conf, run, cancel)
    _expect_no_read_after_terminal(conf, run)
    conf.expect_reported(outcome, run, status="cancelled")


def _deaf_while_running(conf: AgentConformance) -> None:
    """The desktop's network goes from the moment it starts a run until the run's
    completion is made (it sees no cancel flag meanwhile), then comes back and
    delivers it: the Graph finishes between the flag and the desktop's stop."""
    relay, clock = conf.desktop.relay, conf.desktop.clock

    def on_event(event: RelayEvent) -> None:  # on the desktop's own thread
        if event.kind == "started":
            relay.go_offline(mode="network")
        elif event.kind == "complete-held":
            clock.call_later(0.0, relay.go_online)

    relay.on_event(on_event)


@check(
    "D16-agent-cancel-raced",
    "A run-and-cancel task whose Graph finishes between the cancel flag and the "
    "desktop's stop, so the desktop completes it: the agent polls on after `running` "
    "with cancel_requested and reports what the server has, completed with its result.",
    area="agent",
)
def check_cancel_raced(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    _deaf_while_running(conf)
    _picked_up_at_once(conf)
    graph = Graph(
        duration=Fixed((CANCEL_AFTER + CANCEL_LATE + 0.5) * conf.interval), result=RACED_RESULT
    )
    outcome = conf.run(_cancel_task(conf, graph), stop_when=_no_cancel_in_time(conf))
    run = conf.expect_one_run()
    cancel = _expect_one_cancel(conf, run)
    _expect_answered_running(conf, cancel)
    _expect_polled_to_terminal(conf, run, cancel)
    _expect_no_read_after_terminal(conf, run)
    conf.expect(
        run.status == "completed" and run.cancel_requested,
        f"the server has the run {run.status!r} (cancel_requested {run.cancel_requested}); "
        "the desktop should have completed it after the flag",
    )
    conf.expect_reported(outcome, run, status="completed")


@check(
    "R7-agent-cancel-lost-reply",
    "A run-and-cancel task whose cancel is applied but its reply lost (the connection "
    "dropped): the agent does not take the lost reply for the end; it asks again or "
    "reads its run, and reports the status the run ended with (cancelled), exit 0, one "
    "run.",
    area="agent",
)
def check_cancel_lost_reply(osf_agent_conf: AgentConformance) -> None:
    conf = osf_agent_conf
    conf.offline()  # the run stays queued: the cancel applies at once
    task = _cancel_task(conf, Graph(duration=Fixed(conf.interval)))
    conf.fault(AgentFault("cancel_graph_run", "drop-after"))
    outcome = conf.run(task, stop_when=_no_cancel_in_time(conf))
    run = conf.expect_one_run()
    starts = conf.calls("run_graph_session")
    conf.expect(len(starts) == 1, f"the agent sent {len(starts)} starts for one run")
    cancels = conf.calls("cancel_graph_run")
    conf.measures["cancels"] = len(cancels)
    conf.expect(bool(cancels), "the agent never called cancel_graph_run")
    lost = cancels[0]
    learned = [
        c
        for c in (*cancels[1:], *conf.reads(run.command_id))
        if c.at > lost.at and (c.result or {}).get("status") in TERMINAL
    ]
    conf.expect(
        bool(learned),
        f"the reply to the cancel was lost and the agent then sent {len(cancels) - 1} "
        f"cancel(s) and {len(conf.reads(run.command_id))} read(s) without learning how "
        "its run ended: a lost reply says nothing (the cancel may have been applied); ask "
        "again (a cancel is safe to repeat) or read the run",
    )
    conf.expect_reported(outcome, run, status="cancelled")
