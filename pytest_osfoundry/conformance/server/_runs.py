"""Run tracking and clean-up: every run a check queued is ended when the check ends.

Checks only ever act on runs they queued themselves, and each check brings those
runs to a terminal state on teardown (:meth:`Runs.close`, called whether the check
passed or failed), so the desktop's sync answers stay small for every other check.
A run a broken target queued although it should have refused is tracked too.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

from pytest_osfoundry.client import McpClient, OsfClientError
from pytest_osfoundry.conformance.expected import CANCELLED, TERMINAL
from pytest_osfoundry.conformance.server._roles import Roles
from pytest_osfoundry.conformance.server._wire import Wire

__all__ = ["Runs", "new_execution_id"]


def new_execution_id() -> str:
    """A fresh execution id, recognisably the suite's own."""
    return f"osf-conf-exec-{uuid.uuid4().hex}"


@dataclass
class _Tracked:
    client: McpClient
    command_id: str
    execution_id: str | None = None
    done: bool = False


class Runs:
    """The runs one check queued: who queued each, how it was started, whether it ended."""

    def __init__(self, wire: Wire, roles: Roles) -> None:
        self._wire = wire
        self._roles = roles
        self._tracked: dict[str, _Tracked] = {}

    def track(self, client: McpClient, command_id: str) -> None:
        """Remember a run queued by ``client`` so that :meth:`close` ends it."""
        if command_id not in self._tracked:
            self._tracked[command_id] = _Tracked(client, command_id)

    def started(self, command_id: str, execution_id: str) -> None:
        """Note that the desktop started the tracked run ``command_id`` as ``execution_id``."""
        tracked = self._tracked.get(command_id)
        if tracked is not None:
            tracked.execution_id = execution_id

    def execution_id(self, command_id: str) -> str:
        """The execution id the check started ``command_id`` with (a fresh one if none)."""
        tracked = self._tracked.get(command_id)
        if tracked is not None and tracked.execution_id:
            return tracked.execution_id
        return new_execution_id()

    def done(self, command_id: str) -> None:
        """Note that the check brought ``command_id`` to a terminal state itself."""
        if command_id in self._tracked:
            self._tracked[command_id].done = True

    def close(self) -> None:
        """End every run the check queued and left open: the agent that queued it
        cancels it, and a run still running is completed ``cancelled`` by the desktop.

        Best effort: errors are ignored, so that a broken target never turns into
        teardown errors. Once one of the check's requests ran out of time (in the
        check or here), nothing more is sent: a target hanging on a tool costs each
        check one deadline, not one per run to end (``docs/choices.md``).
        """
        for tracked in self._tracked.values():
            if tracked.done:
                continue
            if self._wire.timed_out:
                return
            try:
                reply = self._wire.call(
                    tracked.client, "cancel_graph_run", {"command_id": tracked.command_id}
                )
                status = (reply.structured or {}).get("status") if reply.kind == "result" else None
                if status in TERMINAL:
                    continue
                self._roles.desktop.complete(
                    tracked.command_id,
                    {"execution_id": self.execution_id(tracked.command_id), "status": CANCELLED},
                )
            except (OsfClientError, AssertionError, pytest.skip.Exception):
                continue
