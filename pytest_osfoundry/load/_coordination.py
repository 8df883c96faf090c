"""Master and workers: who gets which account, and the end of a run gathered from all.

Locust's own messages carry it, so it works the same in one process (Locust's local
runner delivers a message to its own handlers) and as a master with any number of
workers on any machines:

* ``osf_claim`` / ``osf_grant`` — a user starting on a worker asks the master for its
  account; the master's ``Handout`` grants one
  desktop per owner, and agents in turn (the grant carries the URLs and the token).
* At the end (Locust's ``test_stopping``, on the master while every worker's users
  still run) ``MasterSide.finish`` sends ``osf_finish``: each worker's agents stop
  queueing, finish the start call in hand, and the worker answers ``osf_runs`` with
  the runs its agents queued. The master **drains** (every run read until terminal,
  the desktops still running), then sends ``osf_report``: each worker stops its
  desktops and answers ``osf_ledger`` (what they executed, every exchange's latency,
  its health). The master waits for every worker, bounded, before it judges: a worker
  that never answers makes the run "not valid", never green.

Locust's master stops when its run time is up, before the workers' last statistics
report arrives; gathering the ledgers inside ``test_stopping`` is what makes the
accounting whole.

**Interrupts.** Once the load has started, the master (or the single process) takes
SIGINT and SIGTERM itself: the first ends the load as its run time would (the drain
and the accounting follow), and the accounting says "not valid: interrupted at 8 s of
60 s" (with no ``-t`` an interrupt is how a run ends, and is only recorded); an
interrupt during the drain ends the drain at once, and the accounting is still
printed and written.

Each run of the load has an id of its own (the master's), in every run's arguments:
the runs of earlier loads or of anyone else are not this load's, and are dropped
before judging. At the end the master asks the server once more: a server that no
longer answers is named ("the server stopped answering at 31 s").
"""

from __future__ import annotations

import logging
import signal
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gevent
from gevent.event import AsyncResult, Event
from gevent.pool import Pool
from locust.env import Environment
from locust.rpc import Message
from locust.runners import LocalRunner, MasterRunner, WorkerRunner

from pytest_osfoundry._lateness import LatenessProbe
from pytest_osfoundry.client import ConnectionLost
from pytest_osfoundry.load._accounting import Accounting, account
from pytest_osfoundry.load._accounts import Handout, Target
from pytest_osfoundry.load._drain import drain
from pytest_osfoundry.load._ledger import Ledger
from pytest_osfoundry.load._preflight import unreachable
from pytest_osfoundry.load._rhythm import Rhythm
from pytest_osfoundry.load._transport import agent_client, wire

__all__ = ["MasterSide", "WorkerSide", "sides", "verdict", "worker_side"]

log = logging.getLogger("osfoundry-load")

CLAIM, GRANT = "osf_claim", "osf_grant"
FINISH, RUNS = "osf_finish", "osf_runs"
REPORT, LEDGER = "osf_report", "osf_ledger"

#: Seconds a user waits for its grant, and the master for each worker's answer.
GRANT_TIMEOUT = 60.0
ANSWER_TIMEOUT = 60.0
#: The lateness probe wakes every twentieth of a pass interval, at most this often.
PROBE_MIN = 0.05
#: Reads of the drain in flight at once.
DRAIN_CONCURRENCY = 32
#: Seconds the master waits for each worker's answer after a second interrupt.
HURRIED_ANSWER_TIMEOUT = 5.0

#: The last accounting this process made (the exit status osfoundry-load returns).
verdict: list[Accounting] = []

#: Each environment's worker side (Locust imports the locustfile under its own name,
#: so the registry lives here, in the package, where the users find it).
_WORKER_SIDES: dict[int, WorkerSide] = {}


def worker_side(env: Environment) -> WorkerSide:
    """The ``WorkerSide`` of ``env``'s process (its users' grants and ledger)."""
    return _WORKER_SIDES[id(env)]


class WorkerSide:
    """This process's users: their grants, their ledger, their end (see the module)."""

    def __init__(self, env: Environment, rhythm: Callable[[], Rhythm]) -> None:
        self.env = env
        self.rhythm = rhythm
        self.ledger = Ledger()
        self.finishing = Event()
        self.agents_busy = 0
        self.desktops: list[Any] = []
        self._grants: dict[str, AsyncResult] = {}
        self._probe: LatenessProbe | None = None
        runner = env.runner
        assert runner is not None
        runner.register_message(GRANT, self._on_grant)
        runner.register_message(FINISH, self._on_finish, concurrent=True)
        runner.register_message(REPORT, self._on_report, concurrent=True)
        env.events.request.add_listener(self._on_request)
        env.events.spawning_complete.add_listener(self._on_spawned)

    # ------------------------------------------------------------------ users
    def claim(self, role: str) -> dict[str, Any]:
        """Ask the master for an account; the grant, or ``RuntimeError`` naming why not."""
        runner = self.env.runner
        assert runner is not None
        claim_id = uuid.uuid4().hex
        waiting: AsyncResult = AsyncResult()
        self._grants[claim_id] = waiting
        runner.send_message(CLAIM, {"id": claim_id, "role": role})
        try:
            grant: dict[str, Any] = waiting.get(timeout=GRANT_TIMEOUT)
        except gevent.Timeout:
            raise RuntimeError(
                f"no account granted to a {role} within {GRANT_TIMEOUT:g} s"
            ) from None
        finally:
            self._grants.pop(claim_id, None)
        if "error" in grant:
            raise RuntimeError(str(grant["error"]))
        return grant

    def _on_grant(self, environment: Environment, msg: Message, **_: Any) -> None:
        waiting = self._grants.get(msg.data.get("id"))
        if waiting is not None:
            waiting.set(msg.data)

    def _on_request(
        self, request_type: str, name: str, response_time: float, exception: Any = None,
        context: Any = None, **_: Any
    ) -> None:
        ledger = self.ledger
        ledger.latencies.add(f"{request_type} {name}", response_time, exception is not None)
        if not isinstance(context, dict):
            return
        if context.get("status") is not None:
            ledger.answered_last = time.time()
        elif isinstance(exception, ConnectionLost):
            ledger.unanswered += 1
        refused = context.get("refused")
        if refused is not None and "account" in context:
            credential = str(context.get("credential")) if refused == "token" else (
                "relay_url" if request_type == "relay" else "mcp_url")
            ledger.refused[(int(context["account"]), credential, int(context["status"]),
                            f"{request_type} {name}")] += 1

    def _on_spawned(self, **_: Any) -> None:
        """Every user is started: from now on this process's timers must be on time."""
        if self._probe is None:
            self._probe = LatenessProbe(max(PROBE_MIN, self.rhythm().pass_interval / 20))
            gevent.spawn(self._probe.run)

    # ------------------------------------------------------------------ the end
    def _on_finish(self, environment: Environment, msg: Message, **_: Any) -> None:
        self.finishing.set()
        rhythm = self.rhythm()
        settle = rhythm.wall(rhythm.retry_delay) * 25 + 30.0
        with gevent.Timeout(settle, False):
            while self.agents_busy:
                gevent.sleep(0.05)
        part = Ledger()
        part.runs = list(self.ledger.runs)
        part.starts = dict(self.ledger.starts)
        self._send(RUNS, {"ledger": part.to_dict(), "busy": self.agents_busy})

    def _on_report(self, environment: Environment, msg: Message, **_: Any) -> None:
        for desktop in self.desktops:
            desktop.halt()
        if self._probe is not None:
            self._probe.stop()
            self.ledger.late_max = self._probe.worst
        runner = self.env.runner
        self.ledger.cpu_warning = bool(runner is not None and runner.cpu_warning_emitted)
        part = Ledger()
        part.starts = self.ledger.starts
        part.latencies = self.ledger.latencies
        part.late_max = self.ledger.late_max
        part.cpu_warning = self.ledger.cpu_warning
        part.refused = self.ledger.refused
        part.answered_last = self.ledger.answered_last
        part.unanswered = self.ledger.unanswered
        self._send(LEDGER, {"ledger": part.to_dict()})

    def _send(self, kind: str, data: dict[str, Any]) -> None:
        runner = self.env.runner
        assert runner is not None
        runner.send_message(kind, data)


class MasterSide:
    """The master's part (or the local runner's): hand out accounts, gather, judge."""

    def __init__(self, env: Environment, target: Target, handout: Handout, rhythm: Rhythm,
                 options: Any) -> None:
        self.env = env
        self.target = target
        self.handout = handout
        self.rhythm = rhythm
        self.options = options
        self.run_id = uuid.uuid4().hex
        """This run's id, in every run's arguments: what tells its runs from others'."""
        self._runs: dict[str, Ledger] = {}
        self._ledgers: dict[str, Ledger] = {}
        self._finished = False
        self._done = Event()
        self._started: tuple[float, float] | None = None  # (epoch, monotonic)
        self._interrupted: float | None = None  # seconds into the load
        self._cut: float | None = None  # seconds into the load the drain was cut
        self._finishing = False
        self.hurry = Event()
        """Set by an interrupt during the drain: end it, and judge, at once."""
        runner = env.runner
        assert runner is not None
        runner.register_message(CLAIM, self._on_claim)
        runner.register_message(RUNS, self._on_runs)
        runner.register_message(LEDGER, self._on_ledger)
        env.events.test_start.add_listener(self._on_start)
        env.events.test_stopping.add_listener(self.finish)

    # ------------------------------------------------------------------ interrupts
    def _on_start(self, **_: Any) -> None:
        """The load starts: its clock starts, and the interrupts are the load's."""
        if self._started is not None:
            return
        self._started = (time.time(), time.monotonic())
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._on_signal)
        log.info("osfoundry-load: the load started (an interrupt ends it, and the drain and "
                 "the accounting follow)")

    def _elapsed(self) -> float:
        return 0.0 if self._started is None else time.monotonic() - self._started[1]

    def _on_signal(self, signum: int, frame: Any) -> None:
        """SIGINT or SIGTERM: the first ends the load, one during the drain ends that."""
        if self._finishing or self._interrupted is not None:
            if not self.hurry.is_set():
                self._cut = self._elapsed()
                log.warning("osfoundry-load: interrupted during the drain: judging now")
                self.hurry.set()
            return
        if self._interrupted is None:
            self._interrupted = self._elapsed()
            log.warning("osfoundry-load: interrupted at %.0f s: ending the load (the drain and "
                        "the accounting follow; interrupt again to end the drain at once)",
                        self._interrupted)
            runner = self.env.runner
            if runner is not None:
                gevent.spawn(runner.quit)

    def _interruption(self) -> tuple[dict[str, Any] | None, list[str]]:
        """What the interrupts did, as the report's field and the not-valid reasons."""
        if self._interrupted is None and self._cut is None:
            return None, []
        run_time = getattr(self.options, "run_time", None)
        of = float(run_time) if run_time else None
        reasons: list[str] = []
        if self._interrupted is not None and of is not None:
            reasons.append(f"interrupted at {self._interrupted:.0f} s of {of:.0f} s")
        if self._cut is not None:
            reasons.append(f"the drain was cut short by an interrupt at {self._cut:.0f} s: "
                           "runs not yet terminal then are listed, not judged")
        return {"at": self._interrupted, "of": of, "drain_cut_at": self._cut}, reasons

    def _reply(self, kind: str, data: dict[str, Any], node: str) -> None:
        runner = self.env.runner
        assert runner is not None
        if isinstance(runner, MasterRunner):
            runner.send_message(kind, data, client_id=node)
        else:
            runner.send_message(kind, data)

    def _on_claim(self, environment: Environment, msg: Message, **_: Any) -> None:
        data = msg.data or {}
        grant: dict[str, Any] = {"id": data.get("id"), "mcp_url": self.target.mcp_url,
                                 "relay_url": self.target.relay_url, "run": self.run_id}
        if data.get("role") == "desktop":
            index = self.handout.desktop()
            if index is None:
                grant["error"] = (
                    f"every one of the {self.handout.desktops} desktops is handed out "
                    "(one desktop per owner): give --desktops or more accounts"
                )
            else:
                acc = self.target.accounts[index]
                grant.update(account=index, project_id=acc.project_id, token=acc.desktop_token)
        else:
            index, agent = self.handout.agent()
            acc = self.target.accounts[index]
            grant.update(account=index, agent=agent, project_id=acc.project_id,
                         token=acc.agent_tokens[agent])
        self._reply(GRANT, grant, msg.node_id)

    def _on_runs(self, environment: Environment, msg: Message, **_: Any) -> None:
        self._runs[msg.node_id] = Ledger.from_dict(msg.data["ledger"])

    def _on_ledger(self, environment: Environment, msg: Message, **_: Any) -> None:
        self._ledgers[msg.node_id] = Ledger.from_dict(msg.data["ledger"])

    def _nodes(self) -> list[str]:
        runner = self.env.runner
        if isinstance(runner, MasterRunner):
            return [client.id for client in runner.clients.all]
        return ["local"]

    def _broadcast(self, kind: str, nodes: list[str]) -> None:
        for node in nodes:
            self._reply(kind, {}, node)

    def _wait(self, got: dict[str, Ledger], nodes: list[str]) -> list[str]:
        """Wait (bounded) until every node answered; the nodes that did not."""
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while any(node not in got for node in nodes):
            left = deadline - time.monotonic()
            if self.hurry.is_set():
                left = min(left, HURRIED_ANSWER_TIMEOUT)
            if left <= 0:
                break
            gevent.sleep(min(0.05, left))
        return [node for node in nodes if node not in got]

    def finish(self, environment: Environment, **_: Any) -> None:
        """The end of the run: stop the agents, drain, gather every ledger, judge.

        Once: a second ``test_stopping`` (the run time falling due during the drain of
        an interrupted run) waits here until the accounting is written."""
        if self._finished:
            self._done.wait()
            return
        self._finished = True
        self._finishing = True
        try:
            self._finish(environment)
        finally:
            self._done.set()

    def _sleep(self, seconds: float) -> None:
        self.hurry.wait(seconds)

    def _finish(self, environment: Environment) -> None:
        nodes = self._nodes()
        reasons: list[str] = []
        if not nodes:
            reasons.append("no worker was connected at the end of the run")
        self._broadcast(FINISH, nodes)
        missing = self._wait(self._runs, nodes)
        reasons += [f"worker {node} sent no runs (its agents' ledger is missing)"
                    for node in missing]
        runs = Ledger.combined(self._runs.values())
        runs.drop_foreign(self.run_id)
        rhythm = self.rhythm
        log.info("osfoundry-load: draining %d runs (at most %g s)", len(runs.runs),
                 rhythm.wall(self.options.drain))
        pool = Pool(DRAIN_CONCURRENCY)
        finals = drain(
            runs,
            self._client_for,
            limit=rhythm.wall(self.options.drain),
            period=max(0.05, rhythm.pass_interval / 4),
            mapper=pool.imap_unordered,
            sleep=self._sleep,
            stop=self.hurry.is_set,
        )
        self._broadcast(REPORT, nodes)
        missing = self._wait(self._ledgers, nodes)
        reasons += [f"worker {node} sent no ledger" for node in missing]
        ledger = Ledger.combined(self._ledgers.values())
        ledger.runs = runs.runs
        foreign = len(ledger.drop_foreign(self.run_id))
        # The drain needed the desktops' starts too: read those runs now.
        extra = drain(
            _only_unread(ledger, finals),
            self._client_for,
            limit=rhythm.pass_interval,
            period=max(0.05, rhythm.pass_interval / 4),
            mapper=pool.imap_unordered,
            sleep=self._sleep,
            stop=self.hurry.is_set,
        )
        finals.update(extra)
        runner = self.env.runner
        if runner is not None and getattr(runner, "worker_cpu_warning_emitted", False):
            reasons.append("Locust warned that a worker's CPU was overloaded (over 90 %)")
        if runner is not None and runner.exceptions:
            reasons.append(f"{len(runner.exceptions)} kinds of error were raised in the load's "
                           "users (Locust's error report lists them)")
        failures = self._gone(ledger)
        interrupted, interrupts = self._interruption()
        reasons = interrupts + reasons
        if not runs.runs and not failures:
            reasons.append("no agent queued a run: there is nothing to judge")
        owners = {f"{a}.{t}": str(a) for a, acc in enumerate(self.target.accounts)
                  for t in range(len(acc.agent_tokens))}
        result = account(ledger, finals, interval=rhythm.pass_interval, scale=rhythm.scale,
                         owner_of=owners, not_valid=reasons, failures=failures,
                         foreign=foreign, interrupted=interrupted)
        verdict.append(result)
        self._write(result)
        environment.process_exit_code = result.exit_status

    def _gone(self, ledger: Ledger) -> list[str]:
        """The server's absence at the end, named with when it last answered."""
        cause = unreachable(self.target, wire)
        if cause is None:
            return []
        started = self._started[0] if self._started is not None else 0.0
        if ledger.answered_last and started:
            when = f"at {max(0.0, ledger.answered_last - started):.0f} s"
        else:
            when = "before the load's first exchange"
        return [f"the server stopped answering {when} ({ledger.unanswered} exchanges found no "
                f"server; at the end: {cause})"]

    def _client_for(self, agent: str) -> Any:
        index, token = (int(x) for x in agent.split(".", 1))
        return agent_client(self.target.mcp_url, self.target.accounts[index].agent_tokens[token])

    def _write(self, result: Accounting) -> None:
        sys.stdout.write("\n" + result.table())
        sys.stdout.flush()
        for path, text in ((self.options.report_json, result.to_json),
                           (self.options.report_md, result.to_markdown)):
            if path:
                try:
                    Path(path).write_text(text(), encoding="utf-8")
                except OSError as err:
                    log.error("osfoundry-load: cannot write %s: %s", path, err)


def _only_unread(ledger: Ledger, finals: dict[str, Any]) -> Ledger:
    """The part of ``ledger`` whose starts the drain has not read yet."""
    part = Ledger()
    part.starts = {c: s for c, s in ledger.starts.items() if c not in finals}
    return part


def sides(
    env: Environment, rhythm: Callable[[], Rhythm], master: Callable[[], MasterSide] | None
) -> tuple[WorkerSide | None, MasterSide | None]:
    """The sides this process plays: a worker's, the master's, or both (no workers)."""
    runner = env.runner
    worker = WorkerSide(env, rhythm) if isinstance(runner, (WorkerRunner, LocalRunner)) else None
    if worker is not None:
        _WORKER_SIDES[id(env)] = worker
    boss = master() if master is not None else None
    return worker, boss
