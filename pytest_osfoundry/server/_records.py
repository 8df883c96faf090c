"""The reference server's records and refusals (what ``ServerState`` keeps and raises).

* the principals, :class:`Account` (owns projects and the desktop) and :class:`Agent`
  (one Connected agent); :class:`Project` with its shared sessions; :class:`Run`,
  one queued Graph run and all that is known of it;
* :class:`DomainError` and its kinds, each with the HTTP status the relay API
  answers (:class:`NotFound`, :class:`BadRequest`, :class:`Conflict`, :class:`TooLarge`);
* the field names a sync uploads (:data:`SESSION_FIELDS`) and a completion reports
  (:data:`RELAY_REPORTED`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_osfoundry._vocabulary import QUEUED

__all__ = [
    "RELAY_REPORTED",
    "SESSION_FIELDS",
    "Account",
    "Agent",
    "BadRequest",
    "Conflict",
    "DomainError",
    "KeyEntry",
    "NotFound",
    "Project",
    "Run",
    "TooLarge",
]

SESSION_FIELDS = ("graph_session_id", "name", "description", "slug", "version", "status")
"""The six fields of a shared session, as a sync uploads them (D10)."""

RELAY_REPORTED = (
    "execution_id",
    "result",
    "result_truncated",
    "error",
    "total_tokens",
    "reported_cost",
)
"""What a completion may report besides its status (R11)."""


class DomainError(Exception):
    """A refusal the wire layers turn into a tool error or an HTTP status."""

    http_status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(DomainError):
    """Unknown, or not visible to this caller: the two are never distinguished."""

    http_status = 404


class BadRequest(DomainError):
    """The request's content is wrong (a relay body, a project id of the wrong type)."""

    http_status = 400


class Conflict(DomainError):
    """The request contradicts what is already stored (HTTP 409 on the relay API)."""

    http_status = 409


class TooLarge(DomainError):
    """A completion over the 100,000-character bound (HTTP 413)."""

    http_status = 413


@dataclass
class Account:
    """An osFoundry account: it owns projects and the desktop that runs their Graphs."""

    account_id: str
    desktop_tokens: set[str] = field(default_factory=set)


@dataclass
class Project:
    """A project of one account, with the sessions the desktop last shared for it."""

    project_id: str
    account_id: str
    sessions: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Agent:
    """One Connected agent (one MCP connection): its scopes and connected projects."""

    agent_id: str
    account_id: str
    scopes: frozenset[str]
    project_ids: frozenset[str]


@dataclass
class Run:
    """One queued Graph run and everything known about it."""

    command_id: str
    agent_id: str
    project_id: str
    graph_session_id: str
    slug: str
    arguments: dict[str, Any]
    queued_at: float
    status: str = QUEUED
    started_at: float | None = None
    finished_at: float | None = None
    cancel_requested: bool = False
    cancelled_while_queued: bool = False
    execution_id: str | None = None
    completion: dict[str, Any] | None = None


@dataclass
class KeyEntry:
    """What an idempotency key was first used for: its arguments' fingerprint, its run."""

    fingerprint: str
    command_id: str
