"""The reference server's records and refusals (what ``ServerState`` keeps and raises).

* the principals, :class:`Account` (owns projects and the desktop) and :class:`Agent`
  (one Connected agent); :class:`Project` with its shared sessions; :class:`Run`,
  one queued Graph run and all that is known of it;
* :class:`DomainError` and its kinds, each with the HTTP status the relay API
  answers (:class:`NotFound`, :class:`BadRequest`, :class:`Conflict`, :class:`TooLarge`);
* the field names a sync uploads (:data:`SESSION_FIELDS`) and a completion reports
  (:data:`RELAY_REPORTED`);
* :class:`Retention`, how much finished work the state keeps (issue 39).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_osfoundry._checks import check_int, check_positive_int, check_seconds
from pytest_osfoundry._vocabulary import QUEUED, RESULT_LIMIT

__all__ = [
    "KEY_SECONDS_MIN",
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
    "Retention",
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


@dataclass(slots=True)
class Run:
    """One queued Graph run and everything known about it.

    ``arguments`` are what a sync hands the desktop: emptied once the run is terminal
    (no answer shows them again). ``key`` is the idempotency key that queued it.
    """

    command_id: str
    agent_id: str
    project_id: str
    graph_session_id: str
    slug: str
    arguments: dict[str, Any]
    queued_at: float
    key: str = ""
    status: str = QUEUED
    started_at: float | None = None
    finished_at: float | None = None
    cancel_requested: bool = False
    cancelled_while_queued: bool = False
    execution_id: str | None = None
    completion: dict[str, Any] | None = None


@dataclass(slots=True)
class KeyEntry:
    """What an idempotency key was first used for: a digest of its session and
    arguments, and its run's ticket (what a replay answers, R4/R5). ``status`` is the
    run's final status once the run itself is no longer kept; ``None`` before."""

    fingerprint: bytes
    command_id: str
    graph_session_id: str
    queued_at: float
    status: str | None = None


KEY_SECONDS_MIN = 86_400.0
"""R5: idempotency keys are remembered at least 24 hours."""


@dataclass(frozen=True)
class Retention:
    """How much finished work a :class:`~pytest_osfoundry.server.ServerState` keeps.

    Queued and running runs are always kept. Terminal runs are kept, oldest-finished
    forgotten first, while there are at most ``finished_runs`` of them and their
    completions weigh at most ``finished_chars`` (each as ``JSON.stringify`` counts
    the completion the relay posted; a run cancelled while queued weighs nothing). A
    forgotten run answers exactly as an unknown id does (D5, R13), and the view of
    one still kept never changes (R6). Idempotency keys are kept ``key_seconds``
    after the run they queued (R5: at least 24 hours), whether or not the run is: a
    replay returns its ticket with the run's status as it last was.

    ``None`` keeps that kind of record for the server's lifetime.
    """

    finished_runs: int | None = 10_000
    finished_chars: int | None = 50_000_000
    key_seconds: float | None = 86_400.0

    def __post_init__(self) -> None:
        if self.finished_runs is not None:
            check_positive_int(self.finished_runs, "finished_runs")
        if self.finished_chars is not None:  # one completion at its bound always fits
            check_int(self.finished_chars, "finished_chars", low=RESULT_LIMIT)
        if self.key_seconds is not None:
            seconds = check_seconds(self.key_seconds, "key_seconds", finite=False)
            if seconds < KEY_SECONDS_MIN:
                raise ValueError(
                    f"key_seconds must be at least {KEY_SECONDS_MIN:g} (R5: keys are kept "
                    f"24 hours), got {self.key_seconds!r}"
                )

    @classmethod
    def unbounded(cls) -> Retention:
        """Keep every run and key for the server's lifetime (what experiments use)."""
        return cls(finished_runs=None, finished_chars=None, key_seconds=None)
