"""The kit's own agent as a command: ``python -m pytest_osfoundry.agent`` (``embedded``).

It reads the agent suite's contract from its environment (docs/agent-conformance.md:
``OSF_AGENT_MCP_URL``, ``OSF_AGENT_TOKEN``, ``OSF_AGENT_PROJECT_ID``,
``OSF_AGENT_TASK``, ``OSF_AGENT_PICKUP_INTERVAL``, ``OSF_AGENT_DEADLINE``,
``OSF_AGENT_REPORT``), does the task with a :class:`~pytest_osfoundry.agent.ScriptedAgent`
on real time over HTTP, writes its report and exits:

* 0 -- every run reached a terminal status and was reported (a ``failed`` run too);
* 1 -- it could not get there (a refused call, no session of that name, D5);
* 3 -- its deadline passed first; 4 -- the contract's environment is malformed;
* 128 + the signal's number -- ended by SIGTERM or SIGINT (the report written first).

What it does is the seed's advice (conformance/spec.md, A1-A6): one fresh
idempotency key per intended run, the same key and arguments again after a lost
reply (no answer within its own time-out, a dropped connection, a gateway's 502, 503
or 504), on a new MCP session when the server ended its session (404); the first
look one pickup interval after the ticket, then fixed polling every interval (a lost
read is followed by the next one); no read after a terminal answer; any refusal
final; the items of ``run-items`` one run after another. Every request has its own
time-out, :func:`request_timeout`: three intervals, at least 3 s. An answer sent as an
event stream is taken from its event, whether or not the stream then ends.
:class:`ContractAgent` is the whole behaviour; a subclass may change one step (the
kit's tests break it on purpose that way).
"""

from __future__ import annotations

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
from pytest_osfoundry.agent._strategies import Strategy, wait_then_every
from pytest_osfoundry.client import HttpTransport, McpClient, OsfClientError
from pytest_osfoundry.clock import RealClock

__all__ = [
    "EXIT_DEADLINE",
    "EXIT_DONE",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "ContractAgent",
    "ContractError",
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


class ContractAgent:
    """The task of one start, done as the seed advises (see the module)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.url = _need(env, "OSF_AGENT_MCP_URL")
        self.token = _need(env, "OSF_AGENT_TOKEN")
        self.project_id = _need(env, "OSF_AGENT_PROJECT_ID")
        self.task = _task(_need(env, "OSF_AGENT_TASK"))
        self.interval = _positive(env, "OSF_AGENT_PICKUP_INTERVAL")
        self.report_path = _need(env, "OSF_AGENT_REPORT")
        self.ends = time.monotonic() + _positive(env, "OSF_AGENT_DEADLINE") - 0.5
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
        """First look one interval after the ticket, then every interval (A1)."""
        return wait_then_every(self.interval, self.interval)

    def scripted(self) -> ScriptedAgent:
        """The scripted agent: same key on a lost reply, retried a quarter interval later."""
        return ScriptedAgent(
            self.clock,
            self.client,
            strategy=self.strategy(),
            retry="same-key",
            retry_delay=min(1.0, self.interval / 4),
            max_start_attempts=8,
            retry_statuses=RETRY_STATUSES,
        )

    def run_one(self, graph_session_id: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Queue one run (a fresh key), follow it to a terminal status; its report entry."""
        cancel = self.task.get("cancel_after_seconds")
        cancel_after = float(cancel) if isinstance(cancel, (int, float)) else None  # _task
        run = self.agent.start(
            graph_session_id,
            arguments,
            cancel_after=cancel_after if self.task["kind"] == "run-and-cancel" else None,
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
            late = any("deadline" in str(e.get("error")) for e in self.entries)
            return EXIT_DEADLINE if late else EXIT_FAILED
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
