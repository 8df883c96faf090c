"""The context one agent check works in: its own account, agent token, project, desktop.

:class:`AgentSuite` is the run's shared part (one per pytest process): the reference
server on real time, its tickets saying the tier's pickup interval
(``poll_after_seconds``), behind
:class:`~pytest_osfoundry.conformance.agent._instrumented.InstrumentedMcp` on one
loopback port. :meth:`AgentSuite.context` gives a check an
:class:`AgentConformance`: a fresh account with one project, an agent token with both
scopes, a lane of the server's record, and the kit's fake desktop (a
:class:`~pytest_osfoundry.relay.FakeRelay` and :class:`~pytest_osfoundry.engine.FakeEngine`
on a real clock in a thread of their own, talking to the server in-process) passing
every interval and polling control at 0.15 of it, as the production 20 s and 3 s
scaled. The real-time tier (``realtime=True``, ``--osf-agent-realtime``) is the
production rhythm itself: I = 20 s, and no ``OSF_AGENT_PICKUP_INTERVAL`` in the agent's
environment (the ticket's ``poll_after_seconds`` still says 20).
:meth:`AgentConformance.run` starts the agent command once with the contract's
environment (:data:`CONTRACT`), waits for it to end (or stops it at its
deadline, SIGTERM then SIGKILL), and reads its report. A check judges only what the
server saw (:meth:`AgentConformance.calls`, :meth:`AgentConformance.runs`) and what the
agent reported (:class:`AgentOutcome`).

Every threshold is in units of the interval :attr:`AgentSuite.interval` (``I``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_osfoundry.client import DirectTransport, RelayClient, mask_token
from pytest_osfoundry.clock import RealClock
from pytest_osfoundry.conformance.agent._instrumented import (
    AgentFault,
    InstrumentedMcp,
    McpCall,
    McpLane,
)
from pytest_osfoundry.conformance.agent._process import AgentProcess, split_agent_command
from pytest_osfoundry.conformance.command._internal import CommandSuite
from pytest_osfoundry.conformance.expected import READ_SCOPE, RUN_SCOPE
from pytest_osfoundry.conformance.scheduling._internal import Interrupted
from pytest_osfoundry.conformance.suite._internal import CREDENTIAL_VARIABLES, CheckFailure
from pytest_osfoundry.engine import FakeEngine, Graph, make_sessions, served_graph
from pytest_osfoundry.relay import FakeRelay, MemoryOutbox, RelayEvent
from pytest_osfoundry.server import LoopbackServer, ReferenceServer, Run, ServerState

__all__ = [
    "CONTRACT",
    "DEFAULT_INTERVAL",
    "REALTIME_INTERVAL",
    "TIMING_VARIABLES",
    "AgentConformance",
    "AgentOutcome",
    "AgentSuite",
    "default_concurrency",
    "task_text",
]

DEFAULT_INTERVAL = 2.0
"""The scaled tier's pickup interval in seconds (production: 20)."""

REALTIME_INTERVAL = 20.0
"""The real-time tier's pickup interval in seconds: the production rhythm."""

DEFAULT_CONCURRENCY = 8
"""Agent checks run at once on the scaled tier (``--osf-agent-concurrency``)."""

REALTIME_CONCURRENCY = 32
"""Agent checks run at once on the real-time tier: every check of the suite, since its
checks spend minutes waiting on the rhythm and a second wave would double the run."""

TIMING_VARIABLES = ("OSF_AGENT_PICKUP_INTERVAL",)
"""The contract's timing variables: left out on the real-time tier, also when pytest's
own environment has them (``OSF_AGENT_DEADLINE`` stays: it is the task's limit, not a
rhythm)."""

CONTROL_POLL_SHARE = 0.15
"""The fake desktop's control poll as a share of the interval (production: 3 s of 20)."""

DEADLINE_INTERVALS = 20.0
"""An agent's deadline (``OSF_AGENT_DEADLINE``) in intervals, plus :data:`DEADLINE_FLOOR`."""

DEADLINE_FLOOR = 5.0
"""Seconds added to every deadline: the agent's own start (an interpreter, its imports)."""

WAIT_TICK = 0.05
"""How often :meth:`AgentConformance.wait` looks again when no request has arrived."""

READY_SECONDS = 15.0
"""How long the fake desktop may take for its first sync, and the preflight's limit."""

CONTRACT: tuple[str, ...] = (
    "OSF_AGENT_MCP_URL",
    "OSF_AGENT_TOKEN",
    "OSF_AGENT_PROJECT_ID",
    "OSF_AGENT_TASK",
    "OSF_AGENT_TASK_TEXT",
    "OSF_AGENT_PICKUP_INTERVAL",
    "OSF_AGENT_DEADLINE",
    "OSF_AGENT_STATE_DIR",
    "OSF_AGENT_REPORT",
    "OSF_AGENT_SCENARIO",
)
"""The environment variables every start of the agent command gets (docs/agent-conformance.md)."""


def default_concurrency(realtime: bool) -> int:
    """How many agent checks run at once unless ``--osf-agent-concurrency`` says: the
    tier's (:data:`DEFAULT_CONCURRENCY`, :data:`REALTIME_CONCURRENCY`)."""
    return REALTIME_CONCURRENCY if realtime else DEFAULT_CONCURRENCY


def _seconds(value: float) -> str:
    return f"{value:g}"


def task_text(task: Mapping[str, Any]) -> str:
    """``task`` (``OSF_AGENT_TASK``) in one English sentence (``OSF_AGENT_TASK_TEXT``)."""
    kind = task["kind"]
    arguments = json.dumps(task.get("arguments", {}), sort_keys=True)
    if kind == "run":
        return (
            f"Run the Graph session {task['graph_session_id']} with the arguments {arguments}, "
            "wait until the run is finished, and report its outcome."
        )
    if kind == "run-by-name":
        return (
            f"Find the Graph session named {task['session_name']!r} among the project's "
            f"shared sessions, run it with the arguments {arguments}, wait until the run is "
            "finished, and report its outcome."
        )
    if kind == "run-and-cancel":
        return (
            f"Run the Graph session {task['graph_session_id']} with the arguments {arguments}, "
            f"cancel the run {task['cancel_after_seconds']:g} seconds after it was queued, "
            "wait until the run is finished, and report its outcome."
        )
    items = json.dumps(task["items"], sort_keys=True)
    return (
        f"Run the Graph session {task['graph_session_id']} once for each of these argument "
        f"objects, in order: {items}; wait for each run to finish and report each outcome."
    )


@dataclass
class AgentOutcome:
    """How one start of the agent ended.

    ``exit_code`` (negative: the signal that ended it); ``stopped`` is true when the suite
    had to stop it at its deadline; ``report`` its report file as parsed JSON (``None``
    when it wrote none or not JSON: ``report_problem`` says which); ``seconds`` how long
    it ran; ``output_tail`` the last lines it printed (token masked); ``killed`` is
    true when the suite killed it on purpose (:meth:`AgentConformance.run_killed`);
    ``token_printed`` whether its token appeared in what it printed (before masking).
    """

    exit_code: int
    stopped: bool
    report: Any
    report_problem: str | None
    seconds: float
    output_tail: str
    output_bytes: int
    killed: bool = False
    token_printed: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The outcome for a report."""
        return {
            "exit_code": self.exit_code,
            "stopped_at_deadline": self.stopped,
            "killed": self.killed,
            "report": self.report,
            "report_problem": self.report_problem,
            "seconds": round(self.seconds, 3),
            "output_bytes": self.output_bytes,
            "output_tail": self.output_tail,
            "token_printed": self.token_printed,
        }


class AgentSuite(CommandSuite["AgentConformance"]):
    """The run's instrumented server (see the module)."""

    def __init__(
        self,
        command: str,
        *,
        interval: float | None = None,
        realtime: bool = False,
        blind: bool = False,
    ):
        if realtime and interval is not None:
            raise ValueError("the real-time tier's interval is the production 20 s; give none")
        self.command = command
        self.argv = split_agent_command(command)
        self.realtime = realtime
        """The real-time tier: I = 20 s and no timing variable in the agent's environment."""
        self.interval = REALTIME_INTERVAL if realtime else interval or DEFAULT_INTERVAL
        self.blind = blind
        poll_after: float = int(self.interval) if self.interval.is_integer() else self.interval
        clock = RealClock()
        self.reference = ReferenceServer(
            clock, state=ServerState(clock, poll_after_seconds=poll_after)
        )
        self.server = InstrumentedMcp(self.reference)
        self.door = LoopbackServer(self.server, workers=64, request_deadline=60.0)
        super().__init__(self.server.wake_all, thread="osf-agent-stall-watch")

    @property
    def mcp_url(self) -> str:
        """The MCP endpoint the agents are given."""
        return self.door.origin + self.reference.mcp_path

    def context(self, check_id: str, *, argv: Sequence[str] | None = None) -> AgentConformance:
        """A fresh context for one check (``argv`` replaces the run's agent command)."""
        conf = AgentConformance(self, check_id)
        if argv is not None:
            conf.argv = list(argv)
        return self._opened(conf)

    def close(self) -> None:
        """Close what the checks left open, then the server's door."""
        super().close()
        self.door.close()


class _Desktop:
    """The check's fake desktop: FakeRelay and FakeEngine on a real clock, in a thread."""

    def __init__(self, suite: AgentSuite, desktop_token: str, project_id: str, seed: int):
        self.clock = RealClock()
        client = RelayClient(DirectTransport(suite.reference), suite.door.origin, desktop_token)
        self.engine = FakeEngine(
            self.clock, default=served_graph(suite.interval), seed=None, stop_latency=0.0
        )
        self.relay = FakeRelay(
            self.clock,
            client,
            self.engine,
            interval=suite.interval,
            control_poll=CONTROL_POLL_SHARE * suite.interval,
            outbox=MemoryOutbox(),
        )
        self.sessions = [s.to_dict() for s in make_sessions(3, seed=seed)]
        self.relay.share(project_id, self.sessions)
        self.synced = threading.Event()

        def on_event(event: RelayEvent) -> None:
            if event.kind == "synced":
                self.synced.set()

        self.relay.on_event(on_event)
        self.thread = threading.Thread(target=self.clock.run, name="osf-agent-desktop", daemon=True)
        self.started = False

    def start(self) -> bool:
        """Begin passing; whether the first sync came within :data:`READY_SECONDS`."""
        self.started = True
        self.relay.start()
        self.thread.start()
        return self.synced.wait(READY_SECONDS)

    def stop(self) -> None:
        """Stop passing and the clock."""
        if self.started:
            self.relay.stop()
            self.clock.stop()
            self.thread.join(timeout=10.0)


@dataclass
class _Frozen:
    calls: list[McpCall]
    outcomes: list[AgentOutcome] = field(default_factory=list)


class AgentConformance:
    """One check's world: provisioned on the shared server, its agent started on demand."""

    def __init__(self, suite: AgentSuite, check_id: str) -> None:
        self.suite = suite
        self.check_id = check_id
        self.interval = suite.interval
        state = suite.reference.state
        self.account = state.add_account()
        self.project_id = state.add_project(self.account.account_id).project_id
        self.agent = state.add_agent(
            self.account.account_id, [self.project_id], (READ_SCOPE, RUN_SCOPE)
        )
        self.token = suite.reference.tokens.issue("agent", self.agent.agent_id)
        self.desktop_token = suite.reference.tokens.issue("desktop", self.account.account_id)
        self.account.desktop_tokens.add(self.desktop_token)
        self.lane: McpLane = suite.server.lane(self.token)
        self.desktop = _Desktop(suite, self.desktop_token, self.project_id, secrets.randbits(16))
        self.sessions: list[dict[str, Any]] = self.desktop.sessions
        """The sessions the desktop shares (three, each with ``graph_session_id`` and ``name``)."""
        self.folder = tempfile.mkdtemp(prefix="osf-agent-check-")
        self.state_dir = os.path.join(self.folder, "state")
        os.mkdir(self.state_dir)
        self.argv = list(suite.argv)
        self.process: AgentProcess | None = None
        self.processes: list[AgentProcess] = []
        self.outcomes: list[AgentOutcome] = []
        """How each start of the agent ended, in order."""
        self.tasks: list[dict[str, Any]] = []
        self.measures: dict[str, Any] = {}
        """What the check measured (first look, gaps, calls, lateness), for its record."""
        self._frozen: _Frozen | None = None
        self._starts = 0

    # ---------------------------------------------------------------- the world
    def graph(self, graph_session_id: str, graph: Graph) -> None:
        """The Graph the desktop runs for ``graph_session_id`` from now on."""
        self.desktop.engine.graphs[graph_session_id] = graph

    def offline(self) -> None:
        """The desktop goes asleep now (its passes stop; the server keeps the queue)."""
        self.ready()
        self.desktop.clock.call_later(0.0, lambda: self.desktop.relay.go_offline(mode="asleep"))

    def online(self) -> None:
        """The desktop is back: a pass at once, then every interval."""
        self.desktop.clock.call_later(0.0, self.desktop.relay.go_online)

    def after_ticket(self, intervals: float, action: Callable[[], None]) -> None:
        """Call ``action()`` (in a thread of its own) ``intervals`` intervals after the
        agent's first ticket; never, if no ticket comes before the check ends."""

        def wait_then_act() -> None:
            def ticketed() -> bool:  # called with the lane's lock held: read calls directly
                closing = self._frozen is not None or self.suite.interrupted.is_set()
                return closing or any(
                    c.result is not None or c.status == 0
                    for c in self.lane.calls
                    if c.tool == "run_graph_session"
                )

            while not self.lane.wait_for(ticketed, 0.2):
                pass
            if self._frozen is not None or self.suite.interrupted.is_set():
                return
            wait = self.ticket_time() + intervals * self.interval - time.time()
            if not self.suite.interrupted.wait(max(0.0, wait)) and self._frozen is None:
                action()

        threading.Thread(target=wait_then_act, name="osf-agent-after-ticket", daemon=True).start()

    def fault(self, fault: AgentFault) -> AgentFault:
        """Apply a fault rule to this agent's calls (the agent cannot tell it from a real one)."""
        return self.lane.add_fault(fault)

    def legacy_only(self) -> None:
        """From now on the agent's server speaks only the legacy MCP revisions (the ones
        with sessions: 2025-11-25, 2025-06-18), as a real server may (R1)."""
        self.lane.legacy_only = True

    def end_session(self) -> str | None:
        """The server ends the MCP session the agent named last (its next request naming
        it is answered 404); the session's id, or ``None`` when there was none."""
        return self.suite.server.end_session(self.lane)

    def new_state_dir(self) -> None:
        """The agent's next start gets an empty ``OSF_AGENT_STATE_DIR``: it is a new
        intended run, not a restart (the folder survives only a restart)."""
        self.state_dir = tempfile.mkdtemp(prefix="state-", dir=self.folder)

    def without_scope(self, scope: str) -> None:
        """The agent's token loses ``scope`` (a token without it is refused with 403)."""
        self.agent.scopes = self.agent.scopes - {scope}

    def revoke_token(self) -> None:
        """The agent's token is revoked (every tool call with it is refused with 401)."""
        self.suite.reference.tokens.revoke(self.token)

    def session(self, index: int = 0) -> dict[str, Any]:
        """One of the shared sessions."""
        return self.sessions[index]

    # ---------------------------------------------------------------- the agent
    def env(self, task: Mapping[str, Any], report: str, deadline: float) -> dict[str, str]:
        """The contract's environment for one start of the agent (:data:`CONTRACT`; on
        the real-time tier without :data:`TIMING_VARIABLES`)."""
        scenario = f"scenario-{secrets.token_hex(6)}" if self.suite.blind else self.check_id
        env = {
            "OSF_AGENT_MCP_URL": self.suite.mcp_url,
            "OSF_AGENT_TOKEN": self.token,
            "OSF_AGENT_PROJECT_ID": self.project_id,
            "OSF_AGENT_TASK": json.dumps(dict(task)),
            "OSF_AGENT_TASK_TEXT": task_text(task),
            "OSF_AGENT_PICKUP_INTERVAL": _seconds(self.interval),
            "OSF_AGENT_DEADLINE": _seconds(deadline),
            "OSF_AGENT_STATE_DIR": self.state_dir,
            "OSF_AGENT_REPORT": report,
            "OSF_AGENT_SCENARIO": scenario,
        }
        if self.suite.realtime:
            for name in TIMING_VARIABLES:
                del env[name]
        return env

    def deadline(self, intervals: float = DEADLINE_INTERVALS) -> float:
        """A deadline of ``intervals`` intervals, plus :data:`DEADLINE_FLOOR` seconds."""
        return round(intervals * self.interval + DEADLINE_FLOOR, 3)

    def ready(self) -> None:
        """Start the desktop and wait for its first sync (the sessions are then listed)."""
        if not self.desktop.started and not self.desktop.start():
            self.fail(f"the kit's fake desktop did not sync within {READY_SECONDS:g} s")

    def launch(self, task: Mapping[str, Any], *, deadline: float | None = None) -> AgentProcess:
        """Start the agent command with ``task``; the process (not waited for)."""
        self.ready()
        self._starts += 1
        report = os.path.join(self.folder, f"report-{self._starts}.json")
        self.tasks.append(dict(task))
        env = self.env(task, report, deadline if deadline is not None else self.deadline())
        process = AgentProcess(
            self.argv,
            env,
            cwd=os.getcwd(),
            secrets=[self.token],
            # the contract gives OSF_AGENT_TOKEN; pytest's other credentials are not the agent's
            unset=(*TIMING_VARIABLES, *CREDENTIAL_VARIABLES),
        )
        self.process = process
        self.processes.append(process)
        self._report_path = report
        return process

    def run(
        self,
        task: Mapping[str, Any],
        *,
        deadline: float | None = None,
        stop_when: Callable[[], bool] | None = None,
    ) -> AgentOutcome:
        """Start the agent command with ``task``, wait for it to end (stopping it at its
        deadline, SIGTERM then SIGKILL, or as soon as ``stop_when()`` holds: the verdict
        is known), and read its report."""
        limit = deadline if deadline is not None else self.deadline()
        began = time.monotonic()
        process = self.launch(task, deadline=limit)
        try:  # stop_when is looked at on each request the agent sends
            self.wait(
                lambda: process.exited() is not None or (stop_when is not None and stop_when()),
                began + limit + 1.0 - time.monotonic(),
            )
        except Interrupted:
            process.kill()
            raise
        stopped = process.exited() is None
        status = process.stop()
        if self.suite.interrupted.is_set():
            # Ctrl-C may end the agent (its group killed) before the loop above sees the
            # flag: an agent the suite stopped is no verdict on the agent.
            raise Interrupted("the run is stopping")
        return self._ended(process, status, stopped, began)

    def run_killed(
        self, task: Mapping[str, Any], when: Callable[[], bool], *, within: float
    ) -> AgentOutcome:
        """Start the agent command with ``task`` and kill it -- SIGKILL to its process
        group, no warning, as a crash or a power cut does -- as soon as ``when()`` holds
        (looked at on each request it sends), or after ``within`` seconds; how it ended
        (``killed`` is true when the suite killed it, false when it had ended first)."""
        began = time.monotonic()
        process = self.launch(task)
        self.wait(lambda: when() or process.exited() is not None, within)
        ended_first = process.exited() is not None
        process.kill()
        status = process.stop()  # its output read to the end
        return self._ended(process, status, False, began, killed=not ended_first)

    def _ended(
        self,
        process: AgentProcess,
        status: int,
        stopped: bool,
        began: float,
        *,
        killed: bool = False,
    ) -> AgentOutcome:
        report, problem = _read_report(self._report_path)
        outcome = AgentOutcome(
            exit_code=status,
            stopped=stopped,
            report=report,
            report_problem=problem,
            seconds=time.monotonic() - began,
            output_tail=process.output_tail(),
            output_bytes=process.output_bytes,
            killed=killed,
            token_printed=process.shows_secret(),
        )
        self.outcomes.append(outcome)
        return outcome

    @property
    def tokens(self) -> list[str]:
        """The check's own credentials (the agent's token, the desktop's): masked in
        every report of the run."""
        return [self.token, self.desktop_token]

    def freeze(self) -> None:
        """The check has ended: from now on the record answers as it does now."""
        if self._frozen is None:
            self._frozen = _Frozen(self.lane.snapshot(), list(self.outcomes))
            self.lane.end()

    def close(self) -> None:
        """Stop the agent and the desktop; forget the lane; remove the check's folder."""
        self.freeze()
        self.suite.closed(self)
        for process in self.processes:
            process.stop()
        self.desktop.stop()
        self.suite.server.forget(self.lane)
        shutil.rmtree(self.folder, ignore_errors=True)

    # ---------------------------------------------------------------- the records
    def calls(self, tool: str | None = None) -> list[McpCall]:
        """The agent's MCP requests so far (``tool``: its ``tools/call`` of that tool)."""
        every = self.lane.snapshot() if self._frozen is None else self._frozen.calls
        return [c for c in every if tool is None or c.tool == tool]

    def reads(self, command_id: str | None = None) -> list[McpCall]:
        """The agent's ``get_graph_run`` calls (of one command id)."""
        return [
            c
            for c in self.calls("get_graph_run")
            if command_id is None or (c.arguments or {}).get("command_id") == command_id
        ]

    def runs(self) -> list[Run]:
        """The runs this check's agent queued on the server, oldest first."""
        state = self.suite.reference.state
        with state._lock:
            mine = [r for r in state.runs.values() if r.agent_id == self.agent.agent_id]
        return sorted(mine, key=lambda r: r.queued_at)

    def ticket_time(self) -> float:
        """When the first ticket was answered (or its reply lost after it was applied)."""
        for call in self.calls("run_graph_session"):
            if call.result is not None or call.status == 0:
                return call.answered
        self.fail("the agent never received a ticket from run_graph_session")
        raise AssertionError  # unreachable

    def record(self) -> dict[str, Any]:
        """The check's record: the calls (arguments, answers; token masked by the
        caller), each start's outcome, the tasks and the measures."""
        calls = self.calls()
        start = calls[0].at if calls else 0.0
        outcomes = self._frozen.outcomes if self._frozen is not None else self.outcomes
        return {
            "check": self.check_id,
            "interval": self.interval,
            "tasks": list(self.tasks),
            "calls": [c.as_dict(start) for c in calls],
            "outcomes": [o.as_dict() for o in outcomes],
            "measures": dict(self.measures),
        }

    def run_task(self, session: int = 0, **arguments: Any) -> dict[str, Any]:
        """A ``run`` task of one shared session, with ``arguments``."""
        return {
            "kind": "run",
            "graph_session_id": self.session(session)["graph_session_id"],
            "arguments": arguments or {"topic": f"{self.check_id} {secrets.token_hex(3)}"},
        }

    # ---------------------------------------------------------------- verdicts
    def expect_reported(
        self, outcome: AgentOutcome, run: Run, *, status: str = "completed"
    ) -> dict[str, Any]:
        """Fail unless the agent ended on its own with exit 0 and reported ``run`` as the
        server has it (its command id, ``status``, its result by JSON equality); the
        report's entry."""
        self.expect(
            not outcome.stopped,
            f"the agent did not end within its deadline ({outcome.seconds:.1f} s); it was stopped",
        )
        self.expect(
            outcome.exit_code == 0,
            f"the agent exited {outcome.exit_code} although its run reached {run.status!r}: "
            "exit 0 once a terminal status is reached and reported",
        )
        report = outcome.report
        self.expect(
            isinstance(report, dict),
            f"the agent's report is not one JSON object: {outcome.report_problem or report!r}",
        )
        assert isinstance(report, dict)
        return self.expect_entry(report, run, status=status)

    def expect_entry(self, entry: Any, run: Run, *, status: str = "completed") -> dict[str, Any]:
        """Fail unless the report entry ``entry`` tells of ``run`` as the server has it."""
        self.expect(isinstance(entry, dict), f"a report entry is not a JSON object: {entry!r}")
        assert isinstance(entry, dict)
        self.expect(
            entry.get("command_id") == run.command_id,
            f"the report names the command {entry.get('command_id')!r}; the run queued is "
            f"{run.command_id}",
        )
        self.expect(
            run.status == status and entry.get("status") == status,
            f"the run is {run.status!r} on the server and {entry.get('status')!r} in the "
            f"report; expected {status!r}",
        )
        if status == "completed":
            expected = (run.completion or {}).get("result")
            self.expect(
                entry.get("result") == expected,
                f"the reported result {json.dumps(entry.get('result'))[:200]} is not the run's "
                f"result {json.dumps(expected)[:200]} (compared by JSON equality)",
            )
        return entry

    def expect_token_kept(self) -> None:
        """Fail unless the agent's token travelled only in the ``Authorization: Bearer``
        header of every request the server saw with it (never in a URL, another
        header or a body: R2) and was never printed by the agent."""
        leaks = list(self.lane.leaks)
        self.expect(
            not leaks,
            f"the agent's token appeared outside the Authorization header {len(leaks)} "
            f"time(s), first {leaks[0] if leaks else ''}: send it only as "
            "`Authorization: Bearer <token>` (R2; a URL or another header ends up in logs)",
        )
        printed = [n for n, o in enumerate(self.outcomes, 1) if o.token_printed]
        self.expect(
            not printed,
            f"the agent printed its token (start {printed[0] if printed else 0}; masked in "
            "this report): never write a credential to output or logs",
        )

    def expect_one_run(self) -> Run:
        """Fail unless the agent queued exactly one run; that run."""
        runs = self.runs()
        self.expect(
            len(runs) == 1,
            f"the agent queued {len(runs)} runs for one intended run"
            + (": " + ", ".join(r.command_id for r in runs) if runs else ""),
        )
        return runs[0]

    def fail(self, message: str, *, tail: bool = True) -> None:
        """Fail the check with ``message`` (and the agent's last lines of output), the
        agent's token masked: a message may quote what the agent sent or reported, and
        the run's reports mask only the run's own credentials."""
        if tail and self.outcomes and self.outcomes[-1].output_tail:
            message += "\nthe agent's last lines of output:\n" + self.outcomes[-1].output_tail
        raise CheckFailure(mask_token(message, [self.token]))

    def expect(self, condition: bool, message: str) -> None:
        """Fail with ``message`` unless ``condition``."""
        if not condition:
            self.fail(message)

    def wait(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` holds: looked at as soon as the agent's next request
        is recorded, and every :data:`WAIT_TICK` seconds for what no request announces
        (a process that ended, the desktop's progress)."""
        end = time.monotonic() + timeout
        while not predicate():
            if self.suite.interrupted.is_set():
                raise Interrupted("the run is stopping")
            left = end - time.monotonic()
            if left <= 0:
                return False
            seen = len(self.lane.calls)

            def news(seen: int = seen) -> bool:  # under the lane's lock: its own list
                return len(self.lane.calls) != seen or self.suite.interrupted.is_set()

            self.lane.wait_for(news, min(WAIT_TICK, left))
        return True


def _read_report(path: str) -> tuple[Any, str | None]:
    """The agent's report (parsed JSON) or ``None`` and why."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read(8_000_000)
    except FileNotFoundError:
        return None, "the agent wrote no report at OSF_AGENT_REPORT"
    except (OSError, UnicodeDecodeError) as err:
        return None, f"the agent's report cannot be read: {err}"
    try:
        return json.loads(text), None
    except ValueError as err:
        return None, f"the agent's report is not JSON: {err}"
