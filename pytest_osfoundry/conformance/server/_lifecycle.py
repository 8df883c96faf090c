"""A run's usual life in one call: queued and started, or queued, started and finished.

Checks that need a run in some status, rather than the steps that put it there,
use these; each step fails the check as its part does (the agent's queue, the
desktop's start and completion).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pytest_osfoundry.conformance.expected import RUNNING
from pytest_osfoundry.conformance.server._harness import Conformance

__all__ = ["FinishedRun", "finished_run", "started_run"]


class FinishedRun(NamedTuple):
    """A run the check finished: its id, the completion posted and the relay's answer."""

    command_id: str
    completion: dict[str, Any]
    answer: dict[str, Any]


def started_run(c: Conformance) -> str:
    """Queue a run and start it as the desktop; fail unless the start answers running."""
    __tracebackhide__ = True
    command_id: str = c.agent.queue()["command_id"]
    c.expect.equal(c.desktop.start(command_id), RUNNING, "the desktop's start")
    return command_id


def finished_run(c: Conformance, status: str, **fields: Any) -> FinishedRun:
    """Queue a run, start it, and complete it with ``status`` and ``fields`` as the relay
    would; fail unless the completion is accepted."""
    __tracebackhide__ = True
    command_id: str = c.agent.queue()["command_id"]
    c.desktop.start(command_id)
    completion = c.desktop.completion(command_id, status, **fields)
    answer = c.desktop.complete(command_id, completion)
    return FinishedRun(command_id, completion, answer)
