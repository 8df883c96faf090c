"""The Locust users: the kit's scripted agent and fake desktop, each on its own clock.

Each user runs the kit's own pieces unchanged — ``McpClient``
and ``ScriptedAgent`` for an agent,
``RelayClient``, ``FakeRelay``
and ``FakeEngine`` for a desktop — on a
``RealClock`` of its own, run in the user's greenlet (one
user's steps are serial, as one agent connection's and one desktop's are). Only the
transport is the load's: ``StatsTransport``
over the wire, so Locust's statistics see every tool call and relay action.

* ``AgentUser`` — granted one agent token of an owner whose desktop runs; waits
  until the owner's sessions are listed (asking every quarter of a pass interval, so
  it starts within one of its desktop's first pass), then queues one run after another on a
  random session, polling by the chosen seed strategy, a share of them cancelled; a
  lost reply to the start call is retried with the same key (a share of replies is
  dropped after the server answered, ``--lost-replies``). Each run's arguments name
  its agent and key (``tag``).
* ``DesktopUser`` — granted one owner (one desktop per owner); shares three
  sessions, passes every interval from a random phase, runs each command on the fake
  engine's Graph durations with the 3 s control poll, its completions through an
  outbox. Every execution it starts goes to the ledger.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import gevent
from locust import User, task
from locust.exception import StopUser

from pytest_osfoundry._process_time import refuse_frozen_time
from pytest_osfoundry.agent import AgentRun, ScriptedAgent, parse_strategy
from pytest_osfoundry.client import (
    McpClient,
    OsfClientError,
    RelayClient,
)
from pytest_osfoundry.engine import Engine, FakeEngine, StartedRun
from pytest_osfoundry.faults import DropReplies, FaultyTransport
from pytest_osfoundry.load._clock import UserClock
from pytest_osfoundry.load._coordination import WorkerSide, worker_side
from pytest_osfoundry.load._ledger import Ledger, RunRecord, tag
from pytest_osfoundry.load._preflight import desktop_sessions
from pytest_osfoundry.load._transport import StatsTransport, wire
from pytest_osfoundry.relay import FakeRelay, MemoryOutbox

__all__ = ["AgentUser", "DesktopUser"]

#: Passes, events and executed ids a load desktop keeps of each (its memory is bounded).
DESKTOP_HISTORY = 100
#: The shortest wait of an agent asking whether its owner's sessions are listed yet.
SESSIONS_POLL_MIN = 0.05


class _LedgerEngine:
    """An engine that writes every execution it starts to the ledger, then starts it."""

    def __init__(self, inner: Engine, ledger: Ledger) -> None:
        self.inner = inner
        self.ledger = ledger

    def start(self, graph_session_id: str, arguments: dict[str, Any], channel: str) -> StartedRun:
        self.ledger.started(channel.rsplit(":", 1)[-1], arguments)
        return self.inner.start(graph_session_id, arguments, channel)


def _side(user: User) -> WorkerSide:
    return worker_side(user.environment)


class AgentUser(User):
    """An agent of one owner: queues, polls, cancels, retries (see the module)."""

    fixed_count = 0
    abstract = False
    _rng: ClassVar[random.Random] = random.Random()

    def on_start(self) -> None:
        refuse_frozen_time()
        self.side = _side(self)
        rhythm = self.side.rhythm()
        opts = self.environment.parsed_options
        grant = self.side.claim("agent")
        self.label = f"{grant['account']}.{grant['agent']}"
        self.run_id = str(grant["run"])
        faulty = FaultyTransport(wire(), DropReplies(fraction=opts.lost_replies, seed=None))
        context = {"account": grant["account"], "credential": f"agent token {grant['agent']}"}
        self.client = McpClient(
            StatsTransport(faulty, self.environment.events.request.fire, context),
            grant["mcp_url"], grant["token"],
        )
        self.clock = UserClock()
        self.rhythm = rhythm
        self.agent = ScriptedAgent(
            self.clock,
            self.client,
            strategy=rhythm.strategy(parse_strategy(opts.strategy)),
            retry="same-key",
            retry_delay=rhythm.wall(rhythm.retry_delay),
        )
        self.sessions = self._sessions(grant["project_id"])

    def _sessions(self, project_id: str) -> list[str]:
        """The owner's shared sessions, once its desktop has synced them (none when the
        load ends first: the task then stops the user, which Locust logs as no error)."""
        period = max(SESSIONS_POLL_MIN, self.rhythm.pass_interval / 4)
        while not self.side.finishing.is_set():
            try:
                listed = self.client.list_graph_sessions(project_id)
            except OsfClientError:
                listed = {}
            ids = [s["graph_session_id"] for s in listed.get("sessions", [])
                   if isinstance(s, dict) and isinstance(s.get("graph_session_id"), str)]
            if ids:
                return ids
            gevent.sleep(period)
        return []

    @task
    def queue_one_run(self) -> None:
        """Queue one run and follow it to its end (or to the end of the load)."""
        side = self.side
        if side.finishing.is_set() or not self.sessions:
            raise StopUser()
        rng = self._rng
        rhythm = self.rhythm
        key = self.agent.new_key()
        cancel_after = (rhythm.wall(rng.uniform(0, rhythm.cancel_window))
                        if rng.random() < rhythm.cancel_share else None)
        side.agents_busy += 1
        try:
            run = self.agent.start(rng.choice(self.sessions), tag(self.label, key, self.run_id),
                                   key=key, cancel_after=cancel_after)

            def settled() -> bool:
                if run.done.is_set:
                    return True
                return side.finishing.is_set() and (run.command_id is not None
                                                    or run.error is not None)

            self.clock.run(until=settled)
            side.ledger.runs.append(_record(self.label, key, run))
            self.agent.runs.clear()
        finally:
            side.agents_busy -= 1
        if rhythm.think:
            gevent.sleep(rhythm.wall(rhythm.think))


def _record(label: str, key: str, run: AgentRun) -> RunRecord:
    view = run.view if run.view is not None else run.ticket
    return RunRecord(label, key, [run.command_id] if run.command_id else [],
                     dict(view) if view is not None else None, run.cancel_at is not None,
                     run.error)


class DesktopUser(User):
    """One owner's desktop relay (see the module)."""

    fixed_count = 0
    abstract = False

    def on_start(self) -> None:
        refuse_frozen_time()
        self.side = _side(self)
        rhythm = self.side.rhythm()
        grant = self.side.claim("desktop")
        context = {"account": grant["account"], "credential": "desktop token"}
        client = RelayClient(
            StatsTransport(wire(), self.environment.events.request.fire, context),
            grant["relay_url"], grant["token"],
        )
        self.clock = UserClock()
        engine = FakeEngine(self.clock, default=rhythm.graph(), seed=None,
                            stop_latency=rhythm.wall(rhythm.stop_latency))
        self.relay = FakeRelay(
            self.clock,
            client,
            _LedgerEngine(engine, self.side.ledger),
            interval=rhythm.pass_interval,
            control_poll=rhythm.wall(rhythm.control_poll),
            outbox=MemoryOutbox(),
            history=DESKTOP_HISTORY,
        )
        self.halted = False
        self.relay.share(grant["project_id"], desktop_sessions(grant["account"]))
        self.relay.start(phase=random.uniform(0, rhythm.pass_interval))
        self.side.desktops.append(self)

    @task
    def serve(self) -> None:
        """Run the desktop's clock until the load ends."""
        if self.halted:
            raise StopUser()
        self.clock.run(until=lambda: self.halted)

    def halt(self) -> None:
        """Stop passing and end the clock (the end of the load)."""
        self.halted = True
        self.relay.stop()
        self.clock.stop()
