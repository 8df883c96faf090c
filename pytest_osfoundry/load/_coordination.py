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
"""

from __future__ import annotations

import logging
import sys
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
from pytest_osfoundry.load._accounting import Accounting, account
from pytest_osfoundry.load._accounts import Handout, Target
from pytest_osfoundry.load._drain import drain
from pytest_osfoundry.load._ledger import Ledger
from pytest_osfoundry.load._rhythm import Rhythm
from pytest_osfoundry.load._transport import agent_client

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
        self, request_type: str, name: str, response_time: float, exception: Any = None, **_: Any
    ) -> None:
        self.ledger.latencies.add(f"{request_type} {name}", response_time, exception is not None)

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
        self._runs: dict[str, Ledger] = {}
        self._ledgers: dict[str, Ledger] = {}
        self._finished = False
        runner = env.runner
        assert runner is not None
        runner.register_message(CLAIM, self._on_claim)
        runner.register_message(RUNS, self._on_runs)
        runner.register_message(LEDGER, self._on_ledger)
        env.events.test_stopping.add_listener(self.finish)

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
                                 "relay_url": self.target.relay_url}
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

    @staticmethod
    def _wait(got: dict[str, Ledger], nodes: list[str]) -> list[str]:
        """Wait (bounded) until every node answered; the nodes that did not."""
        with gevent.Timeout(ANSWER_TIMEOUT, False):
            while any(node not in got for node in nodes):
                gevent.sleep(0.05)
        return [node for node in nodes if node not in got]

    def finish(self, environment: Environment, **_: Any) -> None:
        """The end of the run: stop the agents, drain, gather every ledger, judge."""
        if self._finished:
            return
        self._finished = True
        nodes = self._nodes()
        reasons: list[str] = []
        if not nodes:
            reasons.append("no worker was connected at the end of the run")
        self._broadcast(FINISH, nodes)
        missing = self._wait(self._runs, nodes)
        reasons += [f"worker {node} sent no runs (its agents' ledger is missing)"
                    for node in missing]
        runs = Ledger.combined(self._runs.values())
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
            sleep=gevent.sleep,
        )
        self._broadcast(REPORT, nodes)
        missing = self._wait(self._ledgers, nodes)
        reasons += [f"worker {node} sent no ledger" for node in missing]
        ledger = Ledger.combined(self._ledgers.values())
        ledger.runs = runs.runs
        # The drain needed the desktops' starts too: read those runs now.
        extra = drain(
            _only_unread(ledger, finals),
            self._client_for,
            limit=rhythm.pass_interval,
            period=max(0.05, rhythm.pass_interval / 4),
            mapper=pool.imap_unordered,
            sleep=gevent.sleep,
        )
        finals.update(extra)
        runner = self.env.runner
        if runner is not None and getattr(runner, "worker_cpu_warning_emitted", False):
            reasons.append("Locust warned that a worker's CPU was overloaded (over 90 %)")
        if runner is not None and runner.exceptions:
            reasons.append(f"{len(runner.exceptions)} kinds of error were raised in the load's "
                           "users (Locust's error report lists them)")
        if not runs.runs:
            reasons.append("no agent queued a run: there is nothing to judge")
        owners = {f"{a}.{t}": str(a) for a, acc in enumerate(self.target.accounts)
                  for t in range(len(acc.agent_tokens))}
        result = account(ledger, finals, interval=rhythm.pass_interval, scale=rhythm.scale,
                         owner_of=owners, not_valid=reasons)
        verdict.append(result)
        self._write(result)
        environment.process_exit_code = result.exit_status

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
