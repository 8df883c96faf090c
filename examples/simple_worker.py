"""A user's own worker (a desktop relay of their own), written against the relay API.

``test_example_worker.py`` tests it against the kit's fake server. It pulls queued
commands, starts each, "runs" it with a function and posts the result.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx

PREFIX = "/external-assistants/graph-relays"


class SimpleWorker:
    """Pull, start, run, complete: one pass at a time."""

    def __init__(
        self,
        base_url: str,
        desktop_token: str,
        project_id: str,
        sessions: list[dict[str, Any]],
        run: Callable[[dict[str, Any]], Any],
    ) -> None:
        self.http = httpx.Client(
            base_url=base_url, headers={"Authorization": f"Bearer {desktop_token}"}
        )
        self.project_id = project_id
        self.sessions = sessions
        self.run = run

    def poll_once(self) -> int:
        """One pass: sync, then run every queued command. Returns how many ran."""
        reply = self.http.post(
            f"{PREFIX}/sync", json={"project_id": self.project_id, "sessions": self.sessions}
        )
        reply.raise_for_status()
        ran = 0
        for command in reply.json()["commands"]:
            cid = command["command_id"]
            execution_id = str(uuid.uuid4())
            started = self.http.post(
                f"{PREFIX}/commands/{cid}/start", json={"execution_id": execution_id}
            )
            if started.json()["status"] != "running":
                continue
            result = self.run(command)
            done = self.http.post(
                f"{PREFIX}/commands/{cid}/complete",
                json={
                    "execution_id": execution_id,
                    "status": "completed",
                    "result": result,
                    "total_tokens": 0,
                    "reported_cost": 0,
                },
            )
            done.raise_for_status()
            ran += 1
        return ran
