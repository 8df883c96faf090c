"""The context one relay check works in: its own account, token, project(s) and relay.

:class:`RelaySuite` is the run's shared part (one per pytest process): the
instrumented reference server and the driver API (on a loopback port).
:meth:`RelaySuite.context` gives a check a :class:`RelayConformance`: a fresh
account with its desktop token and projects, an agent to queue runs with, a driver
scenario, a lane of the server's record, its own loopback port into the shared
server (closed to refuse connections), a state directory, and the relay command
started with the contract's environment (and stopped, with its process group, at the
end). A check judges only ``requests()`` (the server's record) and ``runs`` /
``cancels`` (the driver's).
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pytest_osfoundry.clock import RealClock
from pytest_osfoundry.conformance.command._internal import (
    CommandProcess,
    CommandStarts,
    CommandSuite,
    split_command,
)
from pytest_osfoundry.conformance.expected import READ_SCOPE, RUN_SCOPE
from pytest_osfoundry.conformance.relay._driver import (
    CancelRecord,
    DriverApi,
    Planner,
    RunRecord,
    Scenario,
)
from pytest_osfoundry.conformance.relay._instrumented import (
    Fault,
    InstrumentedServer,
    Lane,
    RelayRequest,
)
from pytest_osfoundry.conformance.scheduling._internal import Interrupted
from pytest_osfoundry.conformance.suite._internal import CREDENTIAL_VARIABLES, CheckFailure
from pytest_osfoundry.engine import make_sessions
from pytest_osfoundry.server import LoopbackServer, ReferenceServer

__all__ = [
    "FLOOD_REQUESTS",
    "READY_SECONDS",
    "RelayConformance",
    "RelaySuite",
    "Timing",
    "flood_rate",
]

READY_SECONDS = 15.0
"""A relay that has not synced this long after its start fails (the contract's 15 s)."""


FLOOD_REQUESTS = 30
FLOOD_WINDOW = 0.3
"""More than :data:`FLOOD_REQUESTS` relay requests within :data:`FLOOD_WINDOW` seconds
(100 a second) is a flood: a correct relay at the suite's cadence sends a few a
second (its control polls, about seven)."""


def flood_rate(requests: Sequence[RelayRequest]) -> float | None:
    """Requests a second over the last :data:`FLOOD_REQUESTS` + 1, if that is a flood."""
    if len(requests) <= FLOOD_REQUESTS:
        return None
    span = requests[-1].at - requests[-1 - FLOOD_REQUESTS].at
    return FLOOD_REQUESTS / max(span, 1e-3) if span < FLOOD_WINDOW else None


class Timing:
    """The cadence a check starts the relay with (``None``: the production 20 s / 3 s)."""

    def __init__(self, interval: float | None = 1.0, control_poll: float | None = 0.15) -> None:
        self.interval = interval
        self.control_poll = control_poll

    @property
    def expected_interval(self) -> float:
        """The interval the relay should keep."""
        return 20.0 if self.interval is None else self.interval

    @property
    def expected_control_poll(self) -> float:
        """The control poll period the relay should keep."""
        return 3.0 if self.control_poll is None else self.control_poll


RELAY_COMMAND = "the relay command"
"""How an error names the relay command (``--osf-relay-command``)."""

EMBEDDED_MODULE = "pytest_osfoundry.relay.driven"
"""The kit's own relay adapter, which ``--osf-relay-command=embedded`` runs."""

TIMING_VARIABLES = ("OSF_RELAY_INTERVAL", "OSF_RELAY_CONTROL_POLL")
"""The scaled tier's timing variables: a check that does not set them (the real-time
checks) leaves them out of the relay's environment, so it keeps production cadence."""


def relay_argv(command: str) -> list[str]:
    """``--osf-relay-command``'s ``CMD`` as argv: ``embedded`` is the kit's adapter
    (:mod:`pytest_osfoundry.relay.driven`) under this interpreter.

    Raises:
        CommandError: ``CMD`` cannot be split as a shell would, or is empty.
    """
    return split_command(command, what=RELAY_COMMAND, embedded_module=EMBEDDED_MODULE)


class RelaySuite(CommandSuite["RelayConformance"]):
    """The run's instrumented server and driver API (see the module)."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.argv = relay_argv(command)
        self.reference = ReferenceServer(RealClock())
        self.server = InstrumentedServer(self.reference)
        self.driver = DriverApi()
        self.driver_door = LoopbackServer(self.driver, workers=64, request_deadline=60.0)
        super().__init__(self.server.wake_all, thread="osf-stall-watch")

    def context(
        self,
        check_id: str,
        *,
        timing: Timing | None = None,
        projects: int = 2,
        argv: Sequence[str] | None = None,
    ) -> RelayConformance:
        """A fresh context for one check (its relay not yet started; ``argv`` replaces
        the run's relay command for this check alone)."""
        conf = RelayConformance(self, check_id, timing or Timing(), projects)
        if argv is not None:
            conf.argv = list(argv)
        return self._opened(conf)

    def close(self) -> None:
        """Close what a check left open (its relays, its door), then the driver's door."""
        super().close()
        self.driver_door.close()


class RelayConformance:
    """One check's world: provisioned on the shared server, its relay started on demand."""

    def __init__(self, suite: RelaySuite, check_id: str, timing: Timing, projects: int) -> None:
        self.suite = suite
        self.check_id = check_id
        self.timing = timing
        state = suite.reference.state
        self.account = state.add_account()
        self.project_ids = [
            state.add_project(self.account.account_id).project_id for _ in range(projects)
        ]
        self.agent = state.add_agent(
            self.account.account_id, self.project_ids, (READ_SCOPE, RUN_SCOPE)
        )
        self.token = suite.reference.tokens.issue("desktop", self.account.account_id)
        self.account.desktop_tokens.add(self.token)
        self.lane: Lane = suite.server.lane(self.token)
        self.scenario: Scenario = suite.driver.new_scenario()
        self.state_dir = tempfile.mkdtemp(prefix="osf-relay-state-")
        # The check's own door into the shared server: closing it refuses connections.
        self.door = LoopbackServer(suite.server, workers=6, request_deadline=60.0)
        self.argv = list(suite.argv)
        self.starts = CommandStarts(
            what=RELAY_COMMAND,
            secrets=[self.token],
            # The real-time checks: production cadence; no credential of pytest's own.
            unset=(*TIMING_VARIABLES, *CREDENTIAL_VARIABLES),
        )
        """Every start of the relay in this check."""
        self.started_at = 0.0
        """When the relay was last started (``time.time()`` just before its spawn), in the
        epoch the server stamps requests in."""
        self._keys = 0
        self.sessions: dict[str, list[dict[str, Any]]] = {}
        self.command_ids: list[str] = []
        """The commands this check queued or injected, oldest first (its report shows
        the relay's stderr lines that name them)."""
        self.notes: list[str] = []
        """What the check measured, in its words, for its record (``--osf-relay-record``)."""
        self._frozen: tuple[list[RelayRequest], str, list[str]] | None = None

    # ---------------------------------------------------------------- sharing
    def share(
        self, sessions: int = 3, *, project: int = 0, enabled: bool = True
    ) -> list[dict[str, Any]]:
        """Enable a project with ``sessions`` made-up sessions, all ticked; returns them."""
        pid = self.project_ids[project]
        made = [s.to_dict() for s in make_sessions(sessions, seed=hash((self.token, pid)) & 0xFFFF)]
        for info in made:
            info["ticked"] = True
        self.sessions[pid] = made

        def edit(projects: list[dict[str, Any]]) -> None:
            projects[:] = [p for p in projects if p["project_id"] != pid]
            projects.append({"project_id": pid, "enabled": enabled, "sessions": made})
            projects.sort(key=lambda p: self.project_ids.index(p["project_id"]))

        self.scenario.change(edit)
        return [{k: v for k, v in s.items() if k != "ticked"} for s in made]

    def edit_session(self, graph_session_id: str, **changes: Any) -> None:
        """Change one session's fields in the driver's settings (``ticked=False`` unticks)."""

        def edit(projects: list[dict[str, Any]]) -> None:
            for project in projects:
                for session in project["sessions"]:
                    if session["graph_session_id"] == graph_session_id:
                        session.update(changes)

        self.scenario.change(edit)

    def set_enabled(self, enabled: bool, *, project: int = 0) -> None:
        """Enable or disable a project in the driver's settings."""
        pid = self.project_ids[project]

        def edit(projects: list[dict[str, Any]]) -> None:
            for entry in projects:
                if entry["project_id"] == pid:
                    entry["enabled"] = enabled

        self.scenario.change(edit)

    # ---------------------------------------------------------------- the relay
    def env(self) -> dict[str, str]:
        """The contract's environment for this check's relay."""
        env = {
            "OSF_RELAY_URL": self.door.origin,
            "OSF_DESKTOP_TOKEN": self.token,
            "OSF_RELAY_DRIVER": f"{self.suite.driver_door.origin}/s/{self.scenario.key}",
            "OSF_RELAY_STATE_DIR": self.state_dir,
            "OSF_RELAY_SCENARIO": self.check_id,
        }
        if self.timing.interval is not None:
            env["OSF_RELAY_INTERVAL"] = f"{self.timing.interval:g}"
        if self.timing.control_poll is not None:
            env["OSF_RELAY_CONTROL_POLL"] = f"{self.timing.control_poll:g}"
        return env

    def start(self, *, ready: bool = True) -> CommandProcess:
        """Start the relay command; with ``ready``, wait for its first answered sync.

        Readiness is judged on the server's record: a sync it answered 200 at or after
        :attr:`started_at`, the moment taken *before* the process was spawned, so a
        relay that syncs at once is ready however late the suite's own thread gets to
        run again after the spawn (on a loaded machine, after the sync has arrived)."""
        self.started_at = since = time.time()
        process = self.starts.start(self.argv, self.env())
        if ready:
            self.wait(
                lambda rs: any(
                    r.action == "sync" and r.status == 200 and r.at >= since for r in rs
                ),
                READY_SECONDS,
                f"the relay's first sync within {READY_SECONDS:g} s of its start",
            )
        return process

    def stop(self) -> int:
        """Stop the relay (SIGTERM, SIGKILL 5 s later); its exit status."""
        return self.starts.stop()

    def kill(self) -> int:
        """SIGKILL the relay's process group (a crash)."""
        return self.starts.kill()

    @property
    def tokens(self) -> list[str]:
        """The check's own credential (its desktop token): masked in every report."""
        return [self.token]

    def freeze(self) -> None:
        """The check has ended: from now on :meth:`requests`, :meth:`stderr_tail` and
        :meth:`stderr_texts` answer as they do now, so that every part of its report
        (made while its relay may still run, or after :meth:`close`) tells of the same
        requests. Freezing again changes nothing."""
        if self._frozen is None:
            self._frozen = (self.lane.snapshot(), self.stderr_tail(), self.stderr_texts())

    def close(self) -> None:
        """Stop every relay this check started; forget its lane, scenario and state.

        What the report shows is kept (:meth:`freeze`: a pre-run check's report is made
        after its close)."""
        self.freeze()
        self.suite.closed(self)
        self.starts.close()
        self.door.close()
        self.suite.server.forget(self.lane)
        self.suite.driver.forget(self.scenario)
        shutil.rmtree(self.state_dir, ignore_errors=True)

    def revoke_token(self) -> None:
        """Revoke this check's desktop token on the server: every relay request with it is
        answered 401 from now on (R12), until :meth:`accept_token`. The lane still records
        them (it is keyed by the token's text)."""
        self.suite.reference.tokens.revoke(self.token)

    def accept_token(self) -> None:
        """Accept this check's desktop token again (the same text, the same owner)."""
        self.suite.reference.tokens.issue("desktop", self.account.account_id, token=self.token)

    def refuse_connections(self, seconds: float) -> None:
        """Close this check's door for ``seconds`` (connections refused), then reopen it
        on the same port (the relay's ``OSF_RELAY_URL`` is unchanged)."""
        port = self.door.port
        self.door.close()
        if self.suite.interrupted.wait(seconds):
            raise Interrupted("the run is stopping")
        deadline = time.monotonic() + 5.0
        while True:
            try:
                self.door = LoopbackServer(
                    self.suite.server, port=port, workers=6, request_deadline=60.0
                )
                return
            except OSError as err:
                if time.monotonic() > deadline:
                    self.fail(f"the suite could not reopen port {port} after refusing: {err}")
                time.sleep(0.05)

    def stderr_tail(self) -> str:
        """The relay's last stderr lines (token masked); once the check is over
        (:meth:`freeze`), those it had written by then."""
        if self._frozen is not None:
            return self._frozen[1]
        return self.starts.output_tail()

    def stderr_texts(self) -> list[str]:
        """What each start of the relay wrote to stderr, in start order (each bounded, its
        last bytes; token masked); once the check is over (:meth:`freeze`), what they had
        written by then."""
        if self._frozen is not None:
            return list(self._frozen[2])
        return self.starts.output_texts()

    # ---------------------------------------------------------------- the agent
    def queue(self, graph_session_id: str, arguments: dict[str, Any] | None = None) -> str:
        """Queue a run of a shared session as the project's agent; its command id."""
        self._keys += 1
        ticket = self.suite.reference.state.run_graph_session(
            self.agent,
            graph_session_id,
            f"{self.check_id}-{self._keys}-{uuid.uuid4()}",
            arguments or {},
        )
        command_id = str(ticket["command_id"])
        self.command_ids.append(command_id)
        return command_id

    def cancel(self, command_id: str) -> dict[str, Any]:
        """The agent cancels its run (a running one gets the cancel flag)."""
        return self.suite.reference.state.cancel_graph_run(self.agent, command_id)

    def view(self, command_id: str) -> dict[str, Any]:
        """The server's view of a run."""
        return self.suite.reference.state.view(command_id)

    def plan(self, planner: Planner) -> None:
        """How the driver answers the engine's runs from now on."""
        self.scenario.planner = planner

    def fault(self, fault: Fault) -> Fault:
        """Apply a fault rule to this relay's requests (commands it injects count as this
        check's, :attr:`command_ids`)."""
        for command in fault.commands:
            command_id = command.get("command_id")
            if isinstance(command_id, str) and command_id:
                self.command_ids.append(command_id)
        return self.lane.add_fault(fault)

    # ---------------------------------------------------------------- the records
    def requests(
        self, action: str | None = None, command_id: str | None = None
    ) -> list[RelayRequest]:
        """The relay's requests so far, oldest first (optionally one action and/or one
        command); once the check is over (:meth:`freeze`), those it had sent by then."""
        return [
            r
            for r in (self.lane.snapshot() if self._frozen is None else self._frozen[0])
            if (action is None or r.action == action)
            and (command_id is None or r.command_id == command_id)
        ]

    @property
    def runs(self) -> list[RunRecord]:
        """The engine's run requests so far."""
        return list(self.scenario.runs)

    def runs_of(self, command_id: str) -> list[RunRecord]:
        """The engine's run requests for one command."""
        return [r for r in self.scenario.runs if r.command_id == command_id]

    def wait_run(self, command_id: str, timeout: float) -> RunRecord:
        """Wait for the engine's run of ``command_id`` (the driver's record); fail after
        ``timeout`` seconds naming it."""
        deadline = time.monotonic() + timeout
        while not self.runs_of(command_id):
            if time.monotonic() > deadline:
                self.fail(f"waited {timeout:g} s for the engine to run {command_id}", tail=True)
            if self.suite.interrupted.wait(0.02):
                raise Interrupted("the run is stopping")
        return self.runs_of(command_id)[0]

    @property
    def cancels(self) -> list[CancelRecord]:
        """The engine's cancels so far."""
        return list(self.scenario.cancels)

    def cancels_of(self, command_id: str) -> list[Any]:
        """The engine's cancels of one command."""
        return [c for c in self.scenario.cancels if c.command_id == command_id]

    def delivered(self, command_id: str) -> list[RelayRequest]:
        """The completions of ``command_id`` the server accepted (2xx)."""
        return [r for r in self.requests("complete", command_id) if 200 <= r.status < 300]

    def wait(
        self, predicate: Callable[[list[RelayRequest]], bool], timeout: float, what: str
    ) -> None:
        """Wait until ``predicate(requests)`` holds, or fail naming ``what`` and the stderr
        tail; a relay flooding the server fails at once, naming its rate."""
        if self._wait_for(lambda rs: flood_rate(rs) is not None or predicate(rs), timeout):
            self._no_flood()
            return
        self._no_flood()
        self.fail(f"waited {timeout:g} s for {what}, in vain", tail=True)

    def _wait_for(self, predicate: Callable[[list[RelayRequest]], bool], timeout: float) -> bool:
        """The lane's wait, ended at once (``Interrupted``) when the suite is interrupted."""
        interrupted = self.suite.interrupted
        held = self.lane.wait_for(lambda rs: interrupted.is_set() or predicate(rs), timeout)
        if interrupted.is_set():
            raise Interrupted("the run is stopping")
        return held

    def _no_flood(self) -> None:
        rate = flood_rate(self.lane.snapshot())
        if rate is not None:
            self.fail(
                f"the relay floods the server: {rate:.0f} relay requests a second "
                f"(more than {FLOOD_REQUESTS} within {FLOOD_WINDOW:g} s)",
                tail=True,
            )

    def wait_request(
        self,
        action: str,
        what: str,
        *,
        timeout: float,
        after: float = 0.0,
        command_id: str | None = None,
        statuses: Callable[[int], bool] = lambda status: True,
    ) -> RelayRequest:
        """Wait for a request of ``action`` (after a time, of a command, answered with a
        status ``statuses`` accepts); the first such, or fail naming ``what``."""

        def match(r: RelayRequest) -> bool:
            return (
                r.action == action
                and r.at >= after
                and (command_id is None or r.command_id == command_id)
                and statuses(r.status)
            )

        self.wait(lambda rs: any(match(r) for r in rs), timeout, what)
        return next(r for r in self.lane.snapshot() if match(r))

    def wait_delivered(self, command_id: str, timeout: float = 10.0) -> RelayRequest:
        """Wait for an accepted completion of ``command_id``; the first one."""
        self.wait(
            lambda rs: any(
                r.action == "complete" and r.command_id == command_id and 200 <= r.status < 300
                for r in rs
            ),
            timeout,
            f"an accepted completion of {command_id}",
        )
        return self.delivered(command_id)[0]

    def settle(self, seconds: float) -> None:
        """Let the relay run on for ``seconds`` (to see that something does NOT happen);
        a flood fails at once."""
        self._wait_for(lambda rs: flood_rate(rs) is not None, seconds)
        self._no_flood()

    def fail(self, message: str, *, tail: bool = False) -> None:
        """Fail the check with ``message`` (and the relay's last stderr lines)."""
        if tail:
            text = self.stderr_tail()
            if text:
                message += "\nthe relay's last stderr lines:\n" + text
        raise CheckFailure(message)

    def expect(self, condition: bool, message: str) -> None:
        """Fail with ``message`` unless ``condition``."""
        if not condition:
            self.fail(message)

    @staticmethod
    def gaps(times: Sequence[float]) -> list[float]:
        """The differences between consecutive times."""
        return [b - a for a, b in itertools.pairwise(times)]

    def longest_gap(self, times: Sequence[float]) -> tuple[float, str]:
        """The longest gap between consecutive times, less the time the suite's own
        process was stalled within it (the suite's :attr:`~RelaySuite.stalls`), for a check's
        upper bound; and the words for a message ("longest 0.733 s", and the stall if any)."""
        longest, gap, stalled = max(
            (b - a - self.suite.stalls.within(a, b), b - a, self.suite.stalls.within(a, b))
            for a, b in itertools.pairwise(times)
        )
        words = f"longest {gap:.3f} s"
        if stalled:
            words += f", {stalled:.3f} s of it with the suite itself kept from running"
        return longest, words

    def shortest_gap(self, times: Sequence[float], before: float) -> float | None:
        """The shortest gap between consecutive times, for a check's lower bound, plus the
        time the suite's own process was stalled from ``before`` seconds ahead of the
        gap's first time to its second (a stall may have stamped the first request late,
        making the gap look shorter than the relay made it); ``None`` for fewer than two."""
        stalls = self.suite.stalls
        return min(
            (b - a + stalls.within(a - before, b) for a, b in itertools.pairwise(times)),
            default=None,
        )
