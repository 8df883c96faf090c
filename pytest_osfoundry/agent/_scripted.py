"""A scripted agent: queues runs over MCP, polls by a strategy, cancels, retries.

:class:`ScriptedAgent` plays the chat agent of conformance/spec.md as a process on the kit's
clock, so hundreds of agents interleave correctly with the relay's passes. It talks
to a server only through a :class:`ToolClient` (an :class:`~pytest_osfoundry.client.McpClient`).

For each run it records every call (:class:`CallRecord`), the calls per run and how
late it saw the result (:attr:`AgentRun.late`: the time it saw a terminal status
minus the server's ``finished_at``).

Cancels: ``cancel_after`` cancels a run that many seconds after its ticket, once (a
run already seen terminal is not cancelled). A cancel answered ``cancelled`` (the run
was still queued: terminal at once, D8) ends the run there: no read follows it. A
cancel answered ``running`` (R7: the flag is set, the desktop stops it) changes
nothing: the agent polls on until a read shows the status the run ended with.

Retries: when the reply to ``run_graph_session`` is lost
(:class:`~pytest_osfoundry.client._errors.ReplyLost`, or an HTTP status of
``retry_statuses``: a gateway's 503 after the server may have applied the call), the
agent calls again after ``retry_delay`` seconds, with the same idempotency key
(``retry="same-key"``, what the osFoundry CLI guide asks) or a new one
(``retry="new-key"``); :meth:`ScriptedAgent.retry_key` decides. A lost reply to a poll
is simply followed by the next poll.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, ParamSpec, Protocol, TypeVar

from pytest_osfoundry._checks import check_implements, check_positive_int, check_seconds
from pytest_osfoundry._ids import parse_rfc3339
from pytest_osfoundry._vocabulary import CANCELLED, TERMINAL_STATUSES
from pytest_osfoundry.agent._strategies import Strategy, wait_then_every
from pytest_osfoundry.client import HttpStatusError, OsfClientError, ReplyLost, ToolError
from pytest_osfoundry.clock import Clock, ProcessGen, Signal, VirtualClock, Wait

__all__ = ["AgentRun", "CallRecord", "ScriptedAgent", "ToolClient"]


class ToolClient(Protocol):
    """The tool calls a scripted agent makes (:class:`~pytest_osfoundry.client.McpClient`
    has them); each returns the tool's result or raises an ``OsfClientError``."""

    def run_graph_session(
        self,
        graph_session_id: str,
        idempotency_key: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Queue a run; the ticket (R4)."""
        ...

    def get_graph_run(self, command_id: str) -> dict[str, Any]:
        """A run's view (R6)."""
        ...

    def cancel_graph_run(self, command_id: str) -> dict[str, Any]:
        """Cancel a run (R7)."""
        ...


Retry = Literal["same-key", "new-key"]

Tool = Literal["run_graph_session", "get_graph_run", "cancel_graph_run"]
"""The tools a scripted agent calls (a :class:`ToolClient`'s methods)."""

P = ParamSpec("P")
T = TypeVar("T")


class CallRecord(NamedTuple):
    """One tool call: when, which tool, and ``ok``, ``lost`` or ``error`` (immutable)."""

    at: float
    tool: str
    outcome: Literal["ok", "lost", "error"]
    detail: str = ""


@dataclass
class AgentRun:
    """What one scripted run did and saw. ``done`` is set when the agent stops."""

    graph_session_id: str
    keys: list[str]
    done: Signal
    command_id: str | None = None
    ticket: dict[str, Any] | None = None
    view: dict[str, Any] | None = None
    cancel_result: dict[str, Any] | None = None
    cancel_at: float | None = None
    seen_at: float | None = None
    error: str | None = None
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def status(self) -> str | None:
        """The last status the agent saw (``None`` before any answer): a terminal read,
        else a cancel answered ``cancelled``, else the last read or the ticket."""
        if self.view is not None and self.view.get("status") in TERMINAL_STATUSES:
            return str(self.view.get("status"))
        if self.cancel_result is not None and self.cancel_result.get("status") == CANCELLED:
            return CANCELLED
        if self.view is not None:
            return str(self.view.get("status"))
        if self.ticket is not None:
            return str(self.ticket.get("status"))
        return None

    @property
    def start_calls(self) -> int:
        """How many ``run_graph_session`` calls were sent (retries included)."""
        return sum(1 for c in self.calls if c.tool == "run_graph_session")

    @property
    def poll_calls(self) -> int:
        """How many ``get_graph_run`` calls were sent (lost ones included)."""
        return sum(1 for c in self.calls if c.tool == "get_graph_run")

    @property
    def finished_at(self) -> float | None:
        """The server's ``finished_at`` as epoch seconds, once the agent saw it."""
        if self.view is None:
            return None
        stamp = parse_rfc3339(self.view.get("finished_at"))
        return None if stamp is None else stamp.timestamp()

    @property
    def late(self) -> float | None:
        """Seconds between the run finishing on the server and the agent seeing it."""
        finished = self.finished_at
        if self.seen_at is None or finished is None:
            return None
        return max(0.0, self.seen_at - finished)


class ScriptedAgent:
    """An agent that follows a script on a clock (see the module docstring)."""

    def __init__(
        self,
        clock: Clock,
        client: ToolClient,
        *,
        strategy: Strategy | None = None,
        retry: Retry = "same-key",
        retry_delay: float = 1.0,
        max_start_attempts: int = 20,
        max_polls: int = 10_000,
        seed: int | None = None,
        retry_statuses: Collection[int] = (),
    ) -> None:
        check_implements(clock, "clock", Clock)
        check_implements(client, "client", ToolClient)
        if retry not in ("same-key", "new-key"):
            raise ValueError(f"retry must be 'same-key' or 'new-key', got {retry!r}")
        if strategy is not None and not callable(strategy):
            raise TypeError(
                f"strategy must be callable (attempt, elapsed) -> seconds, got {strategy!r}"
            )
        retry_delay = check_seconds(retry_delay, "retry_delay")
        check_positive_int(max_start_attempts, "max_start_attempts")
        check_positive_int(max_polls, "max_polls")
        self.clock = clock
        self.client = client
        self.strategy: Strategy = strategy if strategy is not None else wait_then_every(20, 10)
        self.retry: Retry = retry
        self.retry_delay = retry_delay
        self.max_start_attempts = max_start_attempts
        self.max_polls = max_polls
        self.retry_statuses = frozenset(retry_statuses)
        """HTTP statuses taken as a lost reply (the call may have been applied)."""
        self._rng = random.Random(seed)
        self.runs: list[AgentRun] = []

    def lost(self, err: OsfClientError) -> bool:
        """Whether ``err`` means the reply was lost (the call may or may not have been
        applied): no reply, or an HTTP status of :attr:`retry_statuses`."""
        return isinstance(err, ReplyLost) or (
            isinstance(err, HttpStatusError) and err.status in self.retry_statuses
        )

    def retry_key(self, run: AgentRun, err: OsfClientError) -> str:
        """The key the next start of ``run`` carries after ``err`` lost a reply: the same
        (``retry="same-key"``) or a fresh one (``"new-key"``)."""
        return run.keys[-1] if self.retry == "same-key" else self.new_key()

    def new_key(self) -> str:
        """A fresh idempotency key (32 hex characters, deterministic under ``seed``)."""
        return f"{self._rng.getrandbits(128):032x}"

    # ------------------------------------------------------------------ scripts
    def start(
        self,
        graph_session_id: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
        cancel_after: float | None = None,
        poll: bool = True,
        delay: float = 0.0,
        command_id: str | None = None,
    ) -> AgentRun:
        """Begin a scripted run ``delay`` seconds from now; returns its record at once.

        ``cancel_after`` cancels the run that many seconds after it was queued;
        ``poll=False`` stops after the start call (no ``get_graph_run``).
        ``command_id`` resumes a run already queued under that id (an agent restarted
        after its ticket came): no start, its polls (and ``cancel_after``) count from now.
        """
        if not isinstance(graph_session_id, str) or not graph_session_id:
            raise ValueError(
                f"graph_session_id must be a non-empty string, got {graph_session_id!r}"
            )
        if cancel_after is not None:
            check_seconds(cancel_after, "cancel_after")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise TypeError(f"arguments must be a mapping or None, got {arguments!r}")
        if key is not None and not isinstance(key, str):
            raise TypeError(f"key must be a str or None, got {key!r}")
        check_seconds(delay, "delay")
        if command_id is not None and (not isinstance(command_id, str) or not command_id):
            raise ValueError(f"command_id must be a non-empty string or None, got {command_id!r}")
        run = AgentRun(graph_session_id, [key or self.new_key()], self.clock.signal())
        run.command_id = command_id
        self.runs.append(run)
        args = dict(arguments) if arguments is not None else None
        self.clock.spawn(self._script(run, args, cancel_after, poll), "agent-run", delay)
        return run

    def run(
        self,
        graph_session_id: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
        cancel_after: float | None = None,
        limit: float = 86_400.0,
    ) -> AgentRun:
        """Start a run and move a virtual clock until the agent is done; return the record."""
        if not isinstance(self.clock, VirtualClock):
            raise TypeError("run() moves a VirtualClock; on a real clock use start() and wait")
        record = self.start(graph_session_id, arguments, key=key, cancel_after=cancel_after)
        self.clock.run_until(record.done, limit=limit)
        return record

    # ------------------------------------------------------------------ the process
    def _call(
        self, run: AgentRun, tool: Tool, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """``fn(*args, **kwargs)``, the tool call ``tool``, recorded in ``run.calls``:
        ``ok``, ``lost`` (the reply never came: :class:`ReplyLost`) or ``error`` (any
        other ``OsfClientError``, which goes on up like the lost reply)."""
        try:
            value = fn(*args, **kwargs)
        except ReplyLost as err:
            run.calls.append(CallRecord(self.clock.now(), tool, "lost", str(err)))
            raise
        except OsfClientError as err:
            run.calls.append(CallRecord(self.clock.now(), tool, "error", str(err)))
            raise
        run.calls.append(CallRecord(self.clock.now(), tool, "ok"))
        return value

    def _script(
        self,
        run: AgentRun,
        arguments: dict[str, Any] | None,
        cancel_after: float | None,
        poll: bool,
    ) -> ProcessGen:
        try:
            for attempt in range(self.max_start_attempts if run.command_id is None else 0):
                try:
                    run.ticket = self._call(
                        run,
                        "run_graph_session",
                        self.client.run_graph_session,
                        run.graph_session_id,
                        run.keys[-1],
                        arguments,
                    )
                    break
                except OsfClientError as err:
                    if not self.lost(err):
                        run.error = str(err)
                        return
                    if attempt + 1 == self.max_start_attempts:
                        run.error = f"no reply after {self.max_start_attempts} start calls"
                        return
                    key = self.retry_key(run, err)
                    if key != run.keys[-1]:
                        run.keys.append(key)
                    yield self.retry_delay
            if run.command_id is None:  # queued now, not resumed
                assert run.ticket is not None
                run.command_id = str(run.ticket["command_id"])
            queued = self.clock.now()
            final: Signal | None = None
            if cancel_after is not None:
                final = self.clock.signal()
                cancelled = final
                self.clock.call_at(queued + cancel_after, lambda: self._cancel(run, cancelled))
            if not poll:
                return
            for polls in range(self.max_polls):
                delay = self.strategy(polls, self.clock.now() - queued)
                if final is None:
                    yield delay
                else:
                    yield Wait(final, delay)
                    if final.is_set:
                        return  # the cancel answered `cancelled`: final (D8), no read after it
                try:
                    view = self._call(
                        run, "get_graph_run", self.client.get_graph_run, run.command_id
                    )
                except ToolError as err:
                    run.error = err.message
                    return
                except OsfClientError as err:
                    if self.lost(err):
                        continue
                    run.error = str(err)
                    return
                run.view = view
                if view.get("status") in TERMINAL_STATUSES:
                    run.seen_at = self.clock.now()
                    return
            run.error = f"still not terminal after {self.max_polls} polls"
        finally:
            run.done.set(None)  # not the run itself: that would be a reference cycle

    def _cancel(self, run: AgentRun, final: Signal) -> None:
        """Cancel ``run`` once (unless already seen terminal); set ``final`` when the
        answer is ``cancelled`` (terminal at once: the script stops polling)."""
        if run.command_id is None or (run.done.is_set and run.seen_at is not None):
            return
        run.cancel_at = self.clock.now()
        with contextlib.suppress(OsfClientError):  # recorded in run.calls by _call
            run.cancel_result = self._call(
                run, "cancel_graph_run", self.client.cancel_graph_run, run.command_id
            )
        if run.cancel_result is not None and run.cancel_result.get("status") == CANCELLED:
            if run.seen_at is None:
                run.seen_at = self.clock.now()
            final.set(None)
