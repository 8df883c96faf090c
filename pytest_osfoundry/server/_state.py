"""The reference server's domain state: pure Python, no HTTP, no JSON-RPC, no I/O.

Every behavioural rule of conformance/spec.md that is not about the wire lives here, once:

* D4/R8  what ``list_graph_sessions`` shows (the last sync's upload, ``limit``)
* D6     a run is visible only to the agent that started it (:meth:`ServerState._own_run`)
* D7/R5  idempotency keys, per agent, remembered 24 hours (:class:`Retention`)
* D8/R7  the two cancel cases
* R4/R6  the ticket and run views
* D10    sync replaces the shared list and hands out queued commands, oldest first
* R9-R11 start, control, complete (redelivery, conflicts, the 100,000-character bound)
* R13    relay paths never reveal another owner's commands (404, like unknown ids)
* bounded memory: terminal runs kept up to :class:`Retention`'s caps, oldest-finished
  forgotten first (then as unknown as an invented id), keys for their window

Methods take already-authenticated principals (:class:`Agent`, :class:`Account`)
and plain values, and either return plain dicts or raise a :class:`DomainError`
(the records and refusals are :mod:`~pytest_osfoundry.server._records`; what a relay
sends is validated by :mod:`~pytest_osfoundry.server._relay_input`).
Time comes from the clock the state is given. All public methods are thread-safe.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import threading
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_osfoundry._checks import check_seconds
from pytest_osfoundry._ids import new_command_id, rfc3339
from pytest_osfoundry._jslength import js_stringify_length
from pytest_osfoundry._vocabulary import (
    CANCELLED,
    COMPLETED,
    FAILED,
    KEY_CONFLICT,
    MAX_LIST_LIMIT,
    MAX_SYNC_SESSIONS,
    POLL_AFTER_SECONDS,
    PROJECT_NOT_FOUND,
    QUEUED,
    RESULT_LIMIT,
    RUN_NOT_FOUND,
    RUN_STATUSES,
    RUNNING,
    SESSION_NOT_FOUND,
    TERMINAL_STATUSES,
)
from pytest_osfoundry.clock import Clock, RealClock
from pytest_osfoundry.server._records import (
    RELAY_REPORTED,
    Account,
    Agent,
    BadRequest,
    Conflict,
    DomainError,
    KeyEntry,
    NotFound,
    Project,
    Retention,
    Run,
    TooLarge,
)
from pytest_osfoundry.server._relay_input import copied, session_record, validate_completion

__all__ = [
    "Account",
    "Agent",
    "BadRequest",
    "Conflict",
    "DomainError",
    "NotFound",
    "Project",
    "Retention",
    "Run",
    "ServerState",
    "TooLarge",
]

#: Canonical JSON (keys sorted, compact): made once, not per call as json.dumps would.
_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode


def _fingerprint(graph_session_id: str, arguments: Mapping[str, Any]) -> bytes:
    """A digest of the session and arguments a key was used with (16 bytes, whatever
    the arguments weigh: a key kept 24 hours keeps no copy of them)."""
    return hashlib.blake2b(
        _canonical([graph_session_id, arguments]).encode(), digest_size=16
    ).digest()


class ServerState:
    """All the reference server knows. Subclass and override one method to break one rule.

    ``retention`` bounds what it keeps of finished work (:class:`Retention`: by default
    10,000 terminal runs and 50,000,000 characters of their completions, keys 24 hours).
    ``poll_after_seconds`` is what every ticket says (R4): the documented 20 unless a
    world runs on another pickup interval (the agent suite's scaled tier says its own).
    """

    def __init__(
        self,
        clock: Clock | None = None,
        *,
        seed: int | None = None,
        retention: Retention | None = None,
        poll_after_seconds: float = POLL_AFTER_SECONDS,
    ) -> None:
        if retention is not None and not isinstance(retention, Retention):
            raise TypeError(f"retention must be a Retention or None, got {retention!r}")
        check_seconds(poll_after_seconds, "poll_after_seconds", positive=True)
        self.poll_after_seconds = poll_after_seconds  # an int stays one on the wire
        self.clock: Clock = clock if clock is not None else RealClock()
        self.retention = retention if retention is not None else Retention()
        self._rng = random.Random(seed) if seed is not None else None
        self._lock = threading.RLock()
        self.accounts: dict[str, Account] = {}
        self.projects: dict[str, Project] = {}
        self.agents: dict[str, Agent] = {}
        self.runs: dict[str, Run] = {}
        self._queued: dict[str, dict[str, Run]] = {}
        # Oldest first (queue time): what the key window forgets first.
        self._keys: OrderedDict[tuple[str, str], KeyEntry] = OrderedDict()
        # Terminal runs, oldest-finished first, with what each weighs (characters).
        self._finished: deque[tuple[str, int]] = deque()
        self._finished_chars = 0

    # ------------------------------------------------------------------ provisioning
    def add_account(self, account_id: str | None = None) -> Account:
        """Create an account (random id unless given)."""
        with self._lock:
            account_id = account_id or f"acct_{secrets.token_hex(6)}"
            if account_id in self.accounts:
                raise ValueError(f"account {account_id!r} exists already")
            account = Account(account_id)
            self.accounts[account_id] = account
            return account

    def add_project(self, account_id: str, project_id: str | None = None) -> Project:
        """Create a project owned by ``account_id`` with nothing shared yet (D4)."""
        with self._lock:
            if account_id not in self.accounts:
                raise ValueError(f"unknown account {account_id!r}; add_account() first")
            project_id = project_id or f"proj_{secrets.token_hex(8)}"
            if project_id in self.projects:
                raise ValueError(f"project {project_id!r} exists already")
            project = Project(project_id, account_id)
            self.projects[project_id] = project
            self._queued[project_id] = {}
            return project

    def add_agent(
        self,
        account_id: str,
        project_ids: Iterable[str],
        scopes: Iterable[str],
        agent_id: str | None = None,
    ) -> Agent:
        """Connect a new agent of ``account_id`` to some of that account's projects."""
        with self._lock:
            if account_id not in self.accounts:
                raise ValueError(f"unknown account {account_id!r}; add_account() first")
            projects = frozenset(project_ids)
            for pid in projects:
                project = self.projects.get(pid)
                if project is None or project.account_id != account_id:
                    raise ValueError(f"project {pid!r} is not a project of {account_id!r}")
            agent_id = agent_id or f"agent_{secrets.token_hex(6)}"
            if agent_id in self.agents:
                raise ValueError(f"agent {agent_id!r} exists already")
            agent = Agent(agent_id, account_id, frozenset(scopes), projects)
            self.agents[agent_id] = agent
            return agent

    def share(self, project_id: str, sessions: Iterable[Mapping[str, Any]]) -> None:
        """Set a project's shared sessions directly, as a sync would (for fixtures)."""
        with self._lock:
            self._project(project_id).sessions = [
                session_record(s, i) for i, s in enumerate(sessions)
            ]

    # ------------------------------------------------------------------ MCP tools
    def list_graph_sessions(
        self, agent: Agent, project_id: str, limit: int | None = None
    ) -> dict[str, Any]:
        """D4/R8: the project's shared sessions as the last sync left them, at most ``limit``."""
        with self._lock:
            project = self._agent_project(agent, project_id)
            count = MAX_LIST_LIMIT if limit is None else limit
            return {
                "project_id": project.project_id,
                "sessions": copied(project.sessions[:count]),
            }

    def run_graph_session(
        self,
        agent: Agent,
        graph_session_id: str,
        idempotency_key: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """D1/D7/R4/R5: queue a run, or replay the ticket of the run this key queued."""
        args = dict(arguments) if arguments is not None else {}
        fingerprint = _fingerprint(graph_session_id, args)
        with self._lock:
            now = self.clock.now()
            self._forget_keys(now)
            entry = self._keys.get((agent.agent_id, idempotency_key))
            if entry is not None:
                if entry.fingerprint != fingerprint:
                    raise Conflict(KEY_CONFLICT)
                run = self.runs.get(entry.command_id)
                return self._ticket(run) if run is not None else self._kept_ticket(entry)
            project, session = self._agent_session(agent, graph_session_id)
            graph_session_id = session["graph_session_id"]  # the shared string, not a copy
            run = Run(
                command_id=new_command_id(self._rng),
                agent_id=agent.agent_id,
                project_id=project.project_id,
                graph_session_id=graph_session_id,
                slug=str(session["slug"]),
                arguments=copied(args),
                queued_at=now,
                key=idempotency_key,
            )
            self.runs[run.command_id] = run
            self._queued[project.project_id][run.command_id] = run
            self._keys[(agent.agent_id, idempotency_key)] = KeyEntry(
                fingerprint, run.command_id, graph_session_id, run.queued_at
            )
            return self._ticket(run)

    def get_graph_run(self, agent: Agent, command_id: str) -> dict[str, Any]:
        """D5/D6/R6: the run's view, for the agent that started it only."""
        with self._lock:
            return self._run_view(self._own_run(agent, command_id))

    def cancel_graph_run(self, agent: Agent, command_id: str) -> dict[str, Any]:
        """D8/R7: cancel a queued run at once, flag a running one, leave a terminal one."""
        with self._lock:
            run = self._own_run(agent, command_id)
            if run.status == QUEUED:
                run.cancel_requested = True
                run.cancelled_while_queued = True
                self._finish(run, CANCELLED)
            elif run.status == RUNNING:
                run.cancel_requested = True
            return {
                "command_id": run.command_id,
                "status": run.status,
                "cancel_requested": run.cancel_requested,
            }

    # ------------------------------------------------------------------ relay API
    def relay_sync(self, account: Account, project_id: str, sessions: list[Any]) -> dict[str, Any]:
        """D10: replace the project's shared sessions; hand out its queued commands."""
        with self._lock:
            project = self._owned_project(account, project_id)
            if not isinstance(sessions, list):
                raise BadRequest("sessions must be a list")
            if len(sessions) > MAX_SYNC_SESSIONS:
                raise BadRequest(
                    f"at most {MAX_SYNC_SESSIONS} sessions per sync, got {len(sessions)}"
                )
            project.sessions = [session_record(s, i) for i, s in enumerate(sessions)]
            queued = sorted(self._queued[project.project_id].values(), key=lambda r: r.queued_at)
            return {
                "project_id": project.project_id,
                "commands": [
                    {
                        "command_id": r.command_id,
                        "graph_session_id": r.graph_session_id,
                        "slug": r.slug,
                        "arguments": copied(r.arguments),
                        "queued_at": rfc3339(r.queued_at),
                    }
                    for r in queued
                ],
            }

    def relay_start(self, account: Account, command_id: str, execution_id: Any) -> dict[str, Any]:
        """R9: mark a queued run running; say ``cancelled`` if the agent cancelled it."""
        with self._lock:
            run = self._owned_run(account, command_id)
            if not isinstance(execution_id, str) or not execution_id:
                raise BadRequest("execution_id must be a non-empty string")
            if run.status == QUEUED:
                run.status = RUNNING
                run.started_at = self.clock.now()
                run.execution_id = execution_id
                self._queued[run.project_id].pop(run.command_id, None)
            elif run.status in (COMPLETED, FAILED):
                raise Conflict(f"command {command_id} is already {run.status}")
            return {"status": run.status}

    def relay_control(self, account: Account, command_id: str) -> dict[str, Any]:
        """R10: what the desktop's 3 s control poll reads."""
        with self._lock:
            run = self._owned_run(account, command_id)
            return {"status": run.status, "cancel_requested": run.cancel_requested}

    def relay_complete(self, account: Account, command_id: str, body: Any) -> dict[str, Any]:
        """R11: store a run's bounded completion exactly once."""
        with self._lock:
            run = self._owned_run(account, command_id)
            if not isinstance(body, dict):
                raise BadRequest("a completion must be a JSON object")
            weight = js_stringify_length(body)
            if weight > RESULT_LIMIT:
                raise TooLarge(
                    f"completion is over {RESULT_LIMIT} characters as JSON.stringify counts"
                )
            completion = validate_completion(body)
            if run.status in TERMINAL_STATUSES:
                if run.completion is not None and run.completion == completion:
                    return {"status": run.status}
                if (
                    run.cancelled_while_queued
                    and run.completion is None
                    and completion["status"] == CANCELLED
                ):
                    return {"status": run.status}
                raise Conflict(f"command {command_id} is already {run.status}")
            if run.status == QUEUED and completion["status"] == COMPLETED:
                raise Conflict(
                    f"command {command_id} was never started; only a cancelled or failed "
                    "completion is accepted for it"
                )
            run.completion = completion
            if "execution_id" in completion:
                run.execution_id = completion["execution_id"]
            status = completion["status"]
            self._finish(run, status, weight=weight)
            return {"status": status}

    # ------------------------------------------------------------------ views
    def _ticket(self, run: Run) -> dict[str, Any]:
        """R4: the start call's answer (an idempotent replay shows the current status)."""
        return {
            "command_id": run.command_id,
            "graph_session_id": run.graph_session_id,
            "status": run.status,
            "queued_at": rfc3339(run.queued_at),
            "poll_after_seconds": self.poll_after_seconds,
        }

    def _kept_ticket(self, entry: KeyEntry) -> dict[str, Any]:
        """R4/R5: a replay's ticket once its run is forgotten: the run's final status."""
        assert entry.status is not None, "a key's run is kept until its status is noted"
        return {
            "command_id": entry.command_id,
            "graph_session_id": entry.graph_session_id,
            "status": entry.status,
            "queued_at": rfc3339(entry.queued_at),
            "poll_after_seconds": self.poll_after_seconds,
        }

    def _run_view(self, run: Run) -> dict[str, Any]:
        """R6: the run as ``get_graph_run`` shows it."""
        view: dict[str, Any] = {
            "command_id": run.command_id,
            "graph_session_id": run.graph_session_id,
            "status": run.status,
            "queued_at": rfc3339(run.queued_at),
            "started_at": None if run.started_at is None else rfc3339(run.started_at),
            "finished_at": None if run.finished_at is None else rfc3339(run.finished_at),
            "cancel_requested": run.cancel_requested,
        }
        if run.execution_id is not None:
            view["execution_id"] = run.execution_id
        if run.completion is not None:
            for key in RELAY_REPORTED:
                if key in run.completion and key != "execution_id":
                    view[key] = copied(run.completion[key])
        return view

    # ------------------------------------------------------------------ lookups
    def _finish(self, run: Run, status: str, *, weight: int = 0) -> None:
        """Make ``run`` terminal (its completion, if any, ``weight`` characters), then
        forget the oldest-finished runs past :attr:`retention`'s caps."""
        run.status = status
        run.finished_at = self.clock.now()
        run.arguments = {}  # no answer shows them again
        self._queued[run.project_id].pop(run.command_id, None)
        self._finished.append((run.command_id, weight))
        self._finished_chars += weight
        cap_runs, cap_chars = self.retention.finished_runs, self.retention.finished_chars
        while (cap_runs is not None and len(self._finished) > cap_runs) or (
            cap_chars is not None and self._finished_chars > cap_chars
        ):
            # The newest is never reached: it alone fits both caps (finished_chars is
            # at least one completion at its bound).
            command_id, oldest = self._finished.popleft()
            self._finished_chars -= oldest
            self._forget(self.runs.pop(command_id))

    def _forget(self, run: Run) -> None:
        """``run`` is no longer kept: its key, while remembered, keeps its final status."""
        entry = self._keys.get((run.agent_id, run.key))
        if entry is not None and entry.command_id == run.command_id:
            entry.status = run.status

    def _forget_keys(self, now: float) -> None:
        """Forget the keys whose window has passed (the oldest are first)."""
        window = self.retention.key_seconds
        if window is None:
            return
        keys = self._keys
        while keys:
            key, entry = next(iter(keys.items()))
            if entry.queued_at + window > now:
                return
            del keys[key]

    def _own_run(self, agent: Agent, command_id: str) -> Run:
        """D6: another agent's run is exactly as unknown as an invented id (D5)."""
        run = self.runs.get(command_id)
        if run is None or run.agent_id != agent.agent_id:
            raise NotFound(RUN_NOT_FOUND)
        return run

    def _owned_run(self, account: Account, command_id: str) -> Run:
        """R13: a relay sees only its own account's commands; others are 404, never 403."""
        run = self.runs.get(command_id)
        if run is None or self.projects[run.project_id].account_id != account.account_id:
            raise NotFound(f"command {command_id} not found")
        return run

    def _project(self, project_id: str) -> Project:
        project = self.projects.get(project_id)
        if project is None:
            raise ValueError(f"unknown project {project_id!r}")
        return project

    def _owned_project(self, account: Account, project_id: Any) -> Project:
        if not isinstance(project_id, str):
            raise BadRequest("project_id must be a string")
        project = self.projects.get(project_id)
        if project is None or project.account_id != account.account_id:
            raise NotFound(f"project {project_id} not found")
        return project

    def _agent_project(self, agent: Agent, project_id: str) -> Project:
        project = self.projects.get(project_id)
        if project is None or project_id not in agent.project_ids:
            raise NotFound(PROJECT_NOT_FOUND)
        return project

    def _agent_session(self, agent: Agent, graph_session_id: str) -> tuple[Project, dict[str, Any]]:
        """The shared session with this id in a project the agent is connected to."""
        for pid in sorted(agent.project_ids):
            project = self.projects[pid]
            for session in project.sessions:
                if session["graph_session_id"] == graph_session_id:
                    return project, session
        raise NotFound(SESSION_NOT_FOUND)

    # ------------------------------------------------------------------ introspection
    def view(self, command_id: str) -> dict[str, Any]:
        """The run as its agent sees it (R6), with no access check: for tests and tools."""
        with self._lock:
            run = self.runs.get(command_id)
            if run is None:
                raise KeyError(f"no run {command_id!r}")
            return self._run_view(run)

    def counts(self) -> dict[str, int]:
        """How many runs exist in each status (for tests and experiments)."""
        with self._lock:
            out = dict.fromkeys(RUN_STATUSES, 0)
            for run in self.runs.values():
                out[run.status] += 1
            return out

    def kept(self) -> dict[str, int]:
        """What the state holds now, by kind: ``runs``, ``finished`` (terminal runs kept),
        ``finished_chars`` (what their completions weigh) and ``keys`` (for tests and
        benchmarks of :attr:`retention`)."""
        with self._lock:
            return {
                "runs": len(self.runs),
                "finished": len(self._finished),
                "finished_chars": self._finished_chars,
                "keys": len(self._keys),
            }
