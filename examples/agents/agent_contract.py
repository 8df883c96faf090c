"""The part of the agent contract no MCP client stack changes (docs/agent-conformance.md).

:class:`ContractAgent` reads the ``OSF_AGENT_*`` variables, keeps its runs in
``OSF_AGENT_STATE_DIR`` (one fresh random key per intended run saved before the start,
the command id saved once the ticket arrives; a restart of the same task resumes from
them, a finished task leaves nothing), does the task (``run``, ``run-by-name``,
``run-and-cancel``, ``run-items``: the items one run after another), reads each run one
interval (``poll_after_seconds``) after its ticket and then every interval until a
terminal answer, cancels once ``cancel_after_seconds`` after the ticket, writes the
report and returns the exit status: 0 every run terminal and reported, 1 a failure,
3 the deadline, 128 + n signal n.

A stack's agent (``mcp_sdk_agent.py``, ``fastmcp_client_agent.py``) adds the wire:
:meth:`ContractAgent.tool` (one tool call; :class:`Final` for a tool error) and
:meth:`ContractAgent.in_sessions` (run :meth:`ContractAgent.do` on a session, and on a
new one after a lost reply: every step of ``do`` resumes where the last one stopped,
so a lost start is the same start again, a lost read the same read).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import signal
import time
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio

STARTED = time.monotonic()
"""About when this start of the agent began (``OSF_AGENT_DEADLINE`` counts from it):
the stack's imports that follow this module's count against the deadline."""
TERMINAL = ("completed", "failed", "cancelled")
Session = TypeVar("Session")


class Final(Exception):
    """A refusal or an error that asking again cannot fix."""


def describe(err: BaseException) -> str:
    """``err`` in one line (a group of one error: that error)."""
    while len(getattr(err, "exceptions", ())) == 1:
        err = err.exceptions[0]  # type: ignore[attr-defined]
    return f"{type(err).__name__}: {err}" if not isinstance(err, Final) else str(err)


class ContractAgent(Generic[Session]):
    """One start of the agent: its task, its saved runs (see the module)."""

    def __init__(self, env: dict[str, str], plain: bool) -> None:
        self.url = env["OSF_AGENT_MCP_URL"]
        self.token = env["OSF_AGENT_TOKEN"]
        self.project_id = env["OSF_AGENT_PROJECT_ID"]
        self.task: dict[str, Any] = json.loads(env["OSF_AGENT_TASK"])
        self.interval = float(env["OSF_AGENT_PICKUP_INTERVAL"])
        self.ends = STARTED + float(env["OSF_AGENT_DEADLINE"]) - 2.0  # time to report
        self.report_path = Path(env["OSF_AGENT_REPORT"])
        self.state_path = Path(env["OSF_AGENT_STATE_DIR"]) / "runs.json"
        self.plain = plain  # the stack's defaults: no retry, no saved state
        self.runs: list[dict[str, Any]] = [] if plain else self.load()
        self.error: str | None = None

    # ------------------------------------------------------------ the wire (a stack's)
    async def tool(self, session: Session, name: str, **args: Any) -> dict[str, Any]:
        """Call tool ``name``; its structured answer (a tool error raises :class:`Final`)."""
        raise NotImplementedError

    async def in_sessions(self) -> None:
        """Run :meth:`do` on a session, on a new one after each lost reply."""
        raise NotImplementedError

    # ------------------------------------------------------------ saved state
    def load(self) -> list[dict[str, Any]]:
        """The runs a previous start of the same task left (none: a fresh start)."""
        try:
            saved = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return list(saved["runs"]) if saved.get("task") == self.task else []

    def save(self) -> None:
        """Keep the runs (keys, command ids) for a restart, before acting on them."""
        if self.plain:
            return
        kept = [{k: v for k, v in run.items() if k != "view"} for run in self.runs]
        part = self.state_path.with_suffix(".part")
        part.write_text(json.dumps({"task": self.task, "runs": kept}), encoding="utf-8")
        os.replace(part, self.state_path)

    # ------------------------------------------------------------ the task
    async def do(self, session: Session) -> None:
        """The task from where the saved state and this start left it."""
        task = self.task
        if not self.runs and task["kind"] == "run-by-name":
            listing = await self.tool(
                session, "list_graph_sessions", project_id=self.project_id, limit=50
            )
            named = [s for s in listing["sessions"] if s.get("name") == task["session_name"]]
            if not named:
                raise Final(f"no shared Graph session is named {task['session_name']!r}")
            task = {**task, "graph_session_id": named[0]["graph_session_id"]}
        items = task["items"] if task["kind"] == "run-items" else [task.get("arguments") or {}]
        for index, arguments in enumerate(items):
            if index == len(self.runs):
                key = secrets.token_hex(16)  # one fresh key per intended run
                self.runs.append(
                    {"graph_session_id": task["graph_session_id"], "arguments": arguments,
                     "key": key}
                )
                self.save()
            await self.follow(session, self.runs[index])

    async def follow(self, session: Session, run: dict[str, Any]) -> None:
        """Start ``run`` (unless it was), read it on the interval until it is terminal."""
        if "command_id" not in run:
            ticket = await self.tool(
                session, "run_graph_session", graph_session_id=run["graph_session_id"],
                idempotency_key=run["key"], arguments=run["arguments"],
            )
            run.update(command_id=ticket["command_id"], status=ticket.get("status"),
                       ticket_at=time.time(),
                       every=float(ticket.get("poll_after_seconds") or self.interval))
            self.save()
        every = float(run.get("every", self.interval))
        run.setdefault("next_read", run["ticket_at"] + every)
        cancel = float(self.task.get("cancel_after_seconds") or 0)
        while "view" not in run or run["status"] not in TERMINAL:
            cancel_at = (
                run["ticket_at"] + cancel
                if self.task["kind"] == "run-and-cancel" and not run.get("cancel_sent")
                else math.inf
            )
            await anyio.sleep(max(0.0, min(run["next_read"], cancel_at) - time.time()))
            if cancel_at <= run["next_read"]:
                await self.tool(session, "cancel_graph_run", command_id=run["command_id"])
                run["cancel_sent"] = True
                self.save()
                continue
            view = await self.tool(session, "get_graph_run", command_id=run["command_id"])
            run.update(view=view, status=view.get("status"), next_read=time.time() + every)

    # ------------------------------------------------------------ the report
    def entry(self, run: dict[str, Any]) -> dict[str, Any]:
        """What the report says of one run (a truncated result: ``null``)."""
        view = run.get("view") or {}
        truncated = bool(view.get("result_truncated"))
        done = run.get("status") in TERMINAL and "view" in run
        return {
            "command_id": run.get("command_id"),
            "status": run.get("status"),
            "result": None if truncated else view.get("result"),
            "result_truncated": truncated,
            "error": view.get("error") if done else (self.error or view.get("error")),
        }

    def write_report(self) -> bool:
        """Write the report; whether every run is terminal."""
        entries = [self.entry(run) for run in self.runs]
        done = bool(entries) and self.error is None and all(
            e["status"] in TERMINAL for e in entries
        )
        if not entries:  # no run was started: no session of that name
            entries.append({"command_id": None, "status": None, "result": None,
                            "result_truncated": False, "error": self.error})
        report: Any = entries if self.task["kind"] == "run-items" else entries[-1]
        part = self.report_path.with_suffix(".part")
        part.write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
        os.replace(part, self.report_path)
        return done

    async def main(self) -> int:
        """Do the task within the deadline, stopping on SIGTERM/SIGINT; the exit status."""
        code = 0
        async with anyio.create_task_group() as group:

            async def on_signal() -> None:
                nonlocal code
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for number in signals:
                        code, self.error = 128 + number, f"stopped by signal {number}"
                        group.cancel_scope.cancel()

            group.start_soon(on_signal)
            with anyio.move_on_after(self.ends - time.monotonic()) as late:
                try:
                    await self.in_sessions()
                except Exception as err:
                    code, self.error = 1, describe(err)
            if late.cancelled_caught:
                code, self.error = 3, "the deadline passed before every run was terminal"
            group.cancel_scope.cancel()
        if self.write_report() and code == 0:
            self.state_path.unlink(missing_ok=True)  # done: the next start is a new run
            return 0
        if code == 1:
            self.state_path.unlink(missing_ok=True)  # final: nothing to resume
        return code or 1
