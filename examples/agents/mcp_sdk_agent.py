"""An agent on the official MCP Python SDK that follows the agent contract.

``pytest --osf-agent-command="python examples/agents/mcp_sdk_agent.py"`` grades it
(docs/agent-conformance.md). It reads the task from ``OSF_AGENT_*``, does it over
``ClientSession`` on ``streamable_http_client`` and writes its report. What the SDK
does not do by itself, and this file adds:

* one fresh random key per intended run, saved in ``OSF_AGENT_STATE_DIR`` before the
  start, the command id saved once the ticket arrives; a restart resumes from them;
* a lost reply (the connection dropped, HTTP 502/503/504, no answer within three
  intervals) or a session the server ended (404) ends the SDK's session: the agent
  opens a new one and asks the same call again (a start: the same key and arguments);
* the first read one interval (``poll_after_seconds``) after the ticket, then one every
  interval, none after a terminal answer; ``run-and-cancel``: one cancel
  ``cancel_after_seconds`` after the ticket, then reads until the run is terminal;
* a tool error (D5, an unknown session), 401 and 403 are final: reported, exit 1.

``--plain`` leaves all of that out but the cadence (the SDK's defaults: one session,
its own HTTP client, no retry, no saved state): what the doc's table of each stack's
defaults measures. Exit 0: every run terminal and reported; 1: a failure; 3: the
deadline; 128 + n: signal n (the report is written in every case).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

TERMINAL = ("completed", "failed", "cancelled")
LOST_STATUSES = (404, 502, 503, 504)  # 404: the server ended the MCP session


class Lost(Exception):
    """No usable reply: ask again on a new session."""


class Final(Exception):
    """A refusal or an error that asking again cannot fix."""


def is_lost(err: BaseException) -> bool:
    """Whether ``err`` (every error of a group) is a lost reply."""
    inner = getattr(err, "exceptions", None)
    if inner:
        return all(is_lost(e) for e in inner)
    if isinstance(err, MCPError):
        return err.error.code == CONNECTION_CLOSED
    return isinstance(err, (Lost, httpx2.TransportError))


async def refuse_lost_statuses(response: httpx2.Response) -> None:
    """httpx2 response hook: a POST answered 404/502/503/504 is a lost reply."""
    if response.request.method == "POST" and response.status_code in LOST_STATUSES:
        raise Lost(f"HTTP {response.status_code}")


class Agent:
    """One start of the agent: its task, its saved state, its runs."""

    def __init__(self, env: dict[str, str], plain: bool) -> None:
        self.url = env["OSF_AGENT_MCP_URL"]
        self.token = env["OSF_AGENT_TOKEN"]
        self.project_id = env["OSF_AGENT_PROJECT_ID"]
        self.task: dict[str, Any] = json.loads(env["OSF_AGENT_TASK"])
        self.interval = float(env["OSF_AGENT_PICKUP_INTERVAL"])
        self.deadline = float(env["OSF_AGENT_DEADLINE"]) - 0.5
        self.report_path = Path(env["OSF_AGENT_REPORT"])
        self.state_path = Path(env["OSF_AGENT_STATE_DIR"]) / "runs.json"
        self.plain = plain
        self.runs: list[dict[str, Any]] = [] if plain else self.load()
        self.error: str | None = None

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

    # ------------------------------------------------------------ the wire
    async def tool(self, session: ClientSession, name: str, **args: Any) -> dict[str, Any]:
        """Call tool ``name``; its structured answer (a tool error is final)."""
        result = await session.call_tool(name, args)
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            raise Final(f"{name}: {text}")
        return dict(result.structured_content or {})

    async def in_sessions(self) -> None:
        """Do the task, on a new session after every lost reply (plain: on one session)."""
        auth = {"Authorization": f"Bearer {self.token}"}
        http = (
            # the timeouts of the client the SDK makes when given none: 300 s to read
            httpx2.AsyncClient(headers=auth, timeout=httpx2.Timeout(30.0, read=300.0))
            if self.plain
            else httpx2.AsyncClient(
                headers=auth,
                timeout=httpx2.Timeout(3 * self.interval),  # no answer in 3 I: lost
                event_hooks={"response": [refuse_lost_statuses]},
            )
        )
        async with http:
            while True:
                try:
                    async with (
                        streamable_http_client(self.url, http_client=http) as (read, write),
                        ClientSession(read, write) as session,
                    ):
                        await session.initialize()
                        await self.do(session)
                        return
                except Exception as err:
                    if self.plain or not is_lost(err):
                        raise
                await anyio.sleep(min(1.0, self.interval / 4))

    # ------------------------------------------------------------ the task
    async def do(self, session: ClientSession) -> None:
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

    async def follow(self, session: ClientSession, run: dict[str, Any]) -> None:
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
        """What the report says of one run."""
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
        """Write the report; whether every run is terminal (and none failed to start)."""
        entries = [self.entry(run) for run in self.runs]
        done = bool(entries) and self.error is None and all(
            e["status"] in TERMINAL for e in entries
        )
        if not entries:  # no run was started: the session name was not found
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
            with anyio.move_on_after(self.deadline) as late:
                try:
                    await self.in_sessions()
                except Exception as err:
                    code, self.error = 1, f"{type(err).__name__}: {err}"
            if late.cancelled_caught:
                code, self.error = 3, "the deadline passed before every run was terminal"
            group.cancel_scope.cancel()
        if self.write_report() and code == 0:
            self.state_path.unlink(missing_ok=True)  # done: the next start is a new run
            return 0
        if code == 1:
            self.state_path.unlink(missing_ok=True)  # final: nothing to resume
        return code or 1


if __name__ == "__main__":
    sys.exit(anyio.run(Agent(dict(os.environ), "--plain" in sys.argv[1:]).main))
