"""The kit's own agent as a command: ``python -m pytest_osfoundry.agent`` (``embedded``).

It reads the agent suite's contract from its environment (docs/agent-conformance.md:
``OSF_AGENT_MCP_URL``, ``OSF_AGENT_TOKEN``, ``OSF_AGENT_PROJECT_ID``,
``OSF_AGENT_TASK``, ``OSF_AGENT_DEADLINE``, ``OSF_AGENT_REPORT``, and
``OSF_AGENT_PICKUP_INTERVAL`` and ``OSF_AGENT_STATE_DIR`` when given), does the task
with a :class:`~pytest_osfoundry.agent.ScriptedAgent` on real time over HTTP, writes
its report and exits:

* 0 -- every run reached a terminal status and was reported (a ``failed`` run too);
* 1 -- it could not get there (a refused call, no session of that name, D5);
* 3 -- its deadline passed first; 4 -- the contract's environment is malformed;
* 128 + the signal's number -- ended by SIGTERM or SIGINT (the report written first).

What it does is the seed's advice (conformance/spec.md, A1-A6): one fresh
idempotency key per intended run, the same key and arguments again after a lost
reply (no answer within its own time-out, a dropped connection, a gateway's 502, 503
or 504), on a new MCP session when the server ended its session (404); the first
look one pickup interval after the ticket, then fixed polling every interval (the
ticket's ``poll_after_seconds``; before a ticket ``OSF_AGENT_PICKUP_INTERVAL``, or the
production 20 s on the real-time tier, which sets no timing variable), a lost read
followed by the next one; no read after a terminal answer; any refusal final; the
items of ``run-items`` one run after another. Every request has its own time-out,
:func:`request_timeout`: three intervals, at least 3 s. An answer sent as an event
stream is taken from its event, whether or not the stream then ends.
:class:`ContractAgent` is the whole behaviour; a subclass may change one step (the
kit's tests break it on purpose that way).

A restart resumes (:class:`SavedRuns`, in ``OSF_AGENT_STATE_DIR``): each run's key
is saved before its start is sent, its command id as soon as the ticket arrives; an
agent started again with the same task polls the saved command id, or asks again
with the saved key, instead of queueing a second run. A task done (or failed for
good) is forgotten, so the next start of the same task is a new intended run.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import Any

from pytest_osfoundry._checks import is_number
from pytest_osfoundry._vocabulary import TERMINAL_STATUSES
from pytest_osfoundry.agent._scripted import AgentRun, ScriptedAgent
from pytest_osfoundry.agent._strategies import Strategy
from pytest_osfoundry.client import HttpTransport, McpClient, OsfClientError
from pytest_osfoundry.clock import RealClock

__all__ = [
    "EXIT_DEADLINE",
    "EXIT_DONE",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "ContractAgent",
    "ContractError",
    "SavedRuns",
    "main",
    "request_timeout",
]

EXIT_DONE = 0
EXIT_FAILED = 1
EXIT_DEADLINE = 3
EXIT_USAGE = 4

TASK_KINDS = ("run", "run-by-name", "run-and-cancel", "run-items")
REQUEST_TIMEOUT_INTERVALS = 3.0
"""Each request's time-out, in pickup intervals (:func:`request_timeout`)."""
REQUEST_TIMEOUT_FLOOR = 3.0
"""The shortest time-out of a request, in seconds (a loaded machine, a cold server)."""
RETRY_STATUSES = (502, 503, 504)
"""HTTP statuses taken as a lost reply: a gateway failed, the call may have been applied."""


def request_timeout(interval: float) -> float:
    """Seconds one request may take (connect, answer and body in all) before the agent
    takes its reply as lost: :data:`REQUEST_TIMEOUT_INTERVALS` intervals, at least
    :data:`REQUEST_TIMEOUT_FLOOR` (6 s at the suite's default 2 s, 60 s at 20 s)."""
    return max(REQUEST_TIMEOUT_INTERVALS * interval, REQUEST_TIMEOUT_FLOOR)

LIST_LIMIT = 50
"""The ``limit`` a ``run-by-name`` lists sessions with (R8's largest)."""

PRODUCTION_INTERVAL = 20.0
"""The pickup interval assumed before a ticket says one, when the environment gives none."""

STATE_FILE = "osfoundry-agent-state.json"
"""The file :class:`SavedRuns` keeps in ``OSF_AGENT_STATE_DIR``."""


class ContractError(ValueError):
    """The contract's environment is missing a variable or has a malformed one."""


class _Stopped(BaseException):
    """SIGTERM or SIGINT arrived (raised from the signal handler)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _need(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ContractError(f"{name} is not set")
    return value


def _positive(env: Mapping[str, str], name: str) -> float:
    text = _need(env, name)
    try:
        value = float(text)
    except ValueError:
        raise ContractError(f"{name} must be a number of seconds, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise ContractError(f"{name} must be a positive number of seconds, got {text!r}")
    return value


def _task(text: str) -> dict[str, Any]:
    try:
        task = json.loads(text)
    except ValueError as err:
        raise ContractError(f"OSF_AGENT_TASK is not JSON: {err}") from None
    if not isinstance(task, dict) or task.get("kind") not in TASK_KINDS:
        raise ContractError(f"OSF_AGENT_TASK must be an object whose kind is one of {TASK_KINDS}")
    kind = task["kind"]
    name = "session_name" if kind == "run-by-name" else "graph_session_id"
    if not isinstance(task.get(name), str) or not task[name]:
        raise ContractError(f"OSF_AGENT_TASK of kind {kind!r} needs a non-empty {name}")
    if not isinstance(task.get("arguments", {}), dict):
        raise ContractError("OSF_AGENT_TASK's arguments must be an object")
    items = task.get("items")
    if kind == "run-items" and not (
        isinstance(items, list) and all(isinstance(item, dict) for item in items)
    ):
        raise ContractError(
            "OSF_AGENT_TASK of kind 'run-items' needs items: a list of argument objects"
        )
    cancel = task.get("cancel_after_seconds")
    if kind == "run-and-cancel" and not (
        is_number(cancel) and 0 <= cancel < 1e6
    ):
        raise ContractError(
            "OSF_AGENT_TASK of kind 'run-and-cancel' needs cancel_after_seconds >= 0"
        )
    return task


class SavedRuns:
    """The progress of one task, kept in ``OSF_AGENT_STATE_DIR`` across a restart.

    One JSON file (:data:`STATE_FILE`): the task, and for each of its intended runs (by
    index: 0, or each item of ``run-items``) the key and, once the ticket came, the
    command id. Every change replaces the file at once (written beside it, then
    renamed), so an agent killed at any instant leaves the state before or after the
    change, never half of it. A file of another task, or unreadable, is ignored.
    Without a folder nothing is kept.
    """

    def __init__(self, folder: str | None, task: Mapping[str, Any]) -> None:
        self.path = os.path.join(folder, STATE_FILE) if folder else None
        self.task = dict(task)
        self.runs: list[dict[str, Any]] = []
        if self.path is not None:
            with contextlib.suppress(OSError, ValueError):
                with open(self.path, encoding="utf-8") as file:
                    saved = json.load(file)
                if isinstance(saved, dict) and saved.get("task") == self.task:
                    runs = saved.get("runs")
                    if isinstance(runs, list) and all(isinstance(r, dict) for r in runs):
                        self.runs = runs

    def slot(self, index: int) -> dict[str, Any] | None:
        """What was saved of run ``index`` (``key``, ``command_id``), if anything."""
        return self.runs[index] if index < len(self.runs) else None

    def save_key(self, index: int, key: str) -> None:
        """Run ``index`` is about to be started with ``key`` (saved before the start)."""
        del self.runs[index:]
        self.runs.append({"key": key, "command_id": None})
        self._write()

    def save_command(self, key: str, command_id: str) -> None:
        """The ticket of the start sent with ``key`` came: its run is ``command_id``."""
        for run in self.runs:
            if run.get("key") == key and run.get("command_id") != command_id:
                run["command_id"] = command_id
                self._write()

    def forget(self) -> None:
        """The task is over: a later start of it is a new intended run."""
        self.runs = []
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)

    def _write(self) -> None:
        if self.path is None:
            return
        temporary = self.path + ".part"
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump({"task": self.task, "runs": self.runs}, file)
        os.replace(temporary, self.path)


class _Remembering:
    """The agent's MCP client, telling its :class:`ContractAgent` of every ticket."""

    def __init__(self, client: McpClient, agent: ContractAgent) -> None:
        self.client = client
        self.agent = agent

    def run_graph_session(
        self,
        graph_session_id: str,
        idempotency_key: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Queue a run; its ticket, told to the agent before it is returned."""
        ticket = self.client.run_graph_session(graph_session_id, idempotency_key, arguments)
        self.agent.ticket_came(idempotency_key, ticket)
        return ticket

    def get_graph_run(self, command_id: str) -> dict[str, Any]:
        """A run's view."""
        return self.client.get_graph_run(command_id)

    def cancel_graph_run(self, command_id: str) -> dict[str, Any]:
        """Cancel a run."""
        return self.client.cancel_graph_run(command_id)


class ContractAgent:
    """The task of one start, done as the seed advises (see the module)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.url = _need(env, "OSF_AGENT_MCP_URL")
        self.token = _need(env, "OSF_AGENT_TOKEN")
        self.project_id = _need(env, "OSF_AGENT_PROJECT_ID")
        self.task = _task(_need(env, "OSF_AGENT_TASK"))
        given = env.get("OSF_AGENT_PICKUP_INTERVAL", "").strip()
        self.interval = (
            _positive(env, "OSF_AGENT_PICKUP_INTERVAL") if given else PRODUCTION_INTERVAL
        )
        """The pickup interval: each ticket's ``poll_after_seconds`` once one came."""
        self.report_path = _need(env, "OSF_AGENT_REPORT")
        self.ends = time.monotonic() + _positive(env, "OSF_AGENT_DEADLINE") - 0.5
        self.saved = SavedRuns(env.get("OSF_AGENT_STATE_DIR", "").strip() or None, self.task)
        self.clock = RealClock()
        self.transport = self.make_transport()
        self.client = McpClient(self.transport, self.url, self.token, renew_session=True)
        self.agent = self.scripted()
        self.entries: list[dict[str, Any]] = []

    # ------------------------------------------------------------ the steps
    def make_transport(self) -> HttpTransport:
        """HTTP with the agent's own time-out per request (:func:`request_timeout`)."""
        return HttpTransport(timeout=request_timeout(self.interval))

    def strategy(self) -> Strategy:
        """First look one interval after the ticket, then every interval (A1): the
        interval as it is when each wait begins (:meth:`ticket_came` sets it)."""
        return lambda attempt, elapsed: self.interval

    def ticket_came(self, key: str, ticket: Mapping[str, Any]) -> None:
        """A ticket: its command id saved at once, its ``poll_after_seconds`` the cadence."""
        command_id = ticket.get("command_id")
        if isinstance(command_id, str) and command_id:
            self.saved.save_command(key, command_id)
        poll_after = ticket.get("poll_after_seconds")
        if is_number(poll_after) and 0 < poll_after < 86_400:
            self.interval = float(poll_after)

    def scripted(self) -> ScriptedAgent:
        """The scripted agent: same key on a lost reply, retried a quarter interval later."""
        return ScriptedAgent(
            self.clock,
            _Remembering(self.client, self),
            strategy=self.strategy(),
            retry="same-key",
            retry_delay=min(1.0, self.interval / 4),
            max_start_attempts=8,
            retry_statuses=RETRY_STATUSES,
        )

    def run_one(self, graph_session_id: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Queue one run (a fresh key, saved first), follow it to a terminal status; its
        report entry. A run saved by an earlier start of this task is resumed instead:
        its command id polled, or its start asked again with its key."""
        cancel = self.task.get("cancel_after_seconds")
        cancel_after = float(cancel) if isinstance(cancel, (int, float)) else None  # _task
        index = len(self.entries)
        saved = self.saved.slot(index) or {}
        key, command_id = saved.get("key"), saved.get("command_id")
        if not isinstance(key, str) or not key:
            key, command_id = self.agent.new_key(), None
            self.saved.save_key(index, key)
        run = self.agent.start(
            graph_session_id,
            arguments,
            key=key,
            cancel_after=cancel_after if self.task["kind"] == "run-and-cancel" else None,
            command_id=command_id if isinstance(command_id, str) and command_id else None,
        )
        self.follow(run)
        return self.entry(run)

    def follow(self, run: AgentRun) -> None:
        """Run the clock until ``run`` is done or the deadline is near."""
        self.clock.run(until=lambda: run.done.is_set or time.monotonic() >= self.ends)
        if not run.done.is_set:
            run.error = "the deadline passed before the run was terminal"

    def entry(self, run: AgentRun) -> dict[str, Any]:
        """What the report says of ``run``."""
        view = run.view or {}
        truncated = bool(view.get("result_truncated", False))
        return {
            "command_id": run.command_id,
            "status": run.status,
            "result": None if truncated else view.get("result"),
            "result_truncated": truncated,
            "error": run.error or view.get("error"),
        }

    def find_session(self, name: str) -> str | None:
        """The id of the shared session named ``name`` (``list_graph_sessions``)."""
        listing = self.client.list_graph_sessions(self.project_id, LIST_LIMIT)
        for session in listing.get("sessions", []):
            if isinstance(session, dict) and session.get("name") == name:
                return str(session["graph_session_id"])
        return None

    def run_items(self, graph_session_id: str, items: Sequence[Any]) -> None:
        """One run per item, each after the previous one is terminal (A4)."""
        for item in items:
            self.entries.append(self.run_one(graph_session_id, dict(item)))
            if self.entries[-1]["status"] not in TERMINAL_STATUSES:
                return

    def do(self) -> None:
        """The task, its entries in :attr:`entries`."""
        kind = self.task["kind"]
        arguments = self.task.get("arguments") or {}
        if kind == "run-items":
            self.run_items(str(self.task["graph_session_id"]), self.task.get("items") or [])
            return
        if kind == "run-by-name":
            name = str(self.task.get("session_name"))
            found = self.find_session(name)
            if found is None:
                self.entries.append(_empty(f"no shared Graph session is named {name!r}"))
                return
            self.entries.append(self.run_one(found, arguments))
            return
        self.entries.append(self.run_one(str(self.task["graph_session_id"]), arguments))

    # ------------------------------------------------------------ the whole
    def outcome(self) -> int:
        """Do the task and write the report; the exit status."""
        try:
            self.do()
        except OsfClientError as err:
            self.entries.append(_empty(str(err)))
        except _Stopped as stop:
            self.entries.append(_empty(f"stopped by signal {stop.signum}"))
            self.write_report()
            return 128 + stop.signum
        finally:
            self.transport.close()
        self.write_report()
        if not self.entries or any(e["status"] not in TERMINAL_STATUSES for e in self.entries):
            if any("deadline" in str(e.get("error")) for e in self.entries):
                return EXIT_DEADLINE  # its run may still be going: kept for a restart
            self.saved.forget()
            return EXIT_FAILED
        self.saved.forget()
        return EXIT_DONE

    def write_report(self) -> None:
        """The report: one entry, or the list of them for ``run-items``."""
        report: Any = (
            self.entries
            if self.task["kind"] == "run-items"
            else (self.entries[0] if self.entries else _empty("nothing was done"))
        )
        temporary = self.report_path + ".part"
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(report, file, ensure_ascii=False)
        os.replace(temporary, self.report_path)


def _empty(error: str) -> dict[str, Any]:
    return {
        "command_id": None,
        "status": None,
        "result": None,
        "result_truncated": False,
        "error": error,
    }


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise _Stopped(signum)


def main(
    env: Mapping[str, str] | None = None, agent_type: type[ContractAgent] = ContractAgent
) -> int:
    """Read the contract, do the task, write the report; the exit status (see the module)."""
    try:
        agent = agent_type(os.environ if env is None else env)
    except ContractError as err:
        print(f"osfoundry agent: {err}", file=sys.stderr)
        return EXIT_USAGE
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    status = agent.outcome()
    print(f"osfoundry agent: {json.dumps(agent.entries)[:2000]}", file=sys.stderr)
    return status
