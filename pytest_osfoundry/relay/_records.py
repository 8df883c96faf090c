"""What the fake desktop relay records and shares: passes, events, shared projects.

* :class:`PassRecord` is one tick of the relay (run, or skipped as busy);
  :class:`RelayEvent` one thing it did (``kind`` names it).
* A project's share (enabled or not, its ticked sessions) and
  :func:`_session_dict`, which turns a ticked session into the dict a sync uploads,
  refusing one without a non-empty ``graph_session_id`` and ``slug``.

:class:`~pytest_osfoundry.relay._desktop.FakeRelay` is what uses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from pytest_osfoundry.client._errors import OsfClientError
from pytest_osfoundry.engine._sessions import SessionInfo

__all__ = ["PassReason", "PassRecord", "RelayEvent"]

PassReason = Literal["start", "interval", "sharing", "online", "manual"]


@dataclass
class PassRecord:
    """One tick of the relay: when, why, whether it ran or was skipped as busy."""

    at: float
    reason: PassReason
    skipped: bool
    ended_at: float | None = None


class RelayEvent(NamedTuple):
    """One thing the relay did, for tests and logs (``kind`` names it; immutable).

    ``error`` is the client error behind a failure (``sync-failed``), for a caller
    that must tell a refusal (:class:`~pytest_osfoundry.client.HttpStatusError`)
    from a lost reply; ``detail`` is its text.
    """

    at: float
    kind: str
    command_id: str | None = None
    detail: str = ""
    error: OsfClientError | None = None


@dataclass
class _ProjectShare:
    enabled: bool = True
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)


def _session_dict(session: SessionInfo | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(session, SessionInfo):
        return session.to_dict()
    if not isinstance(session, Mapping):
        raise TypeError(f"a session must be a SessionInfo or a mapping, got {session!r}")
    data = dict(session)
    for key in ("graph_session_id", "slug"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ValueError(f"a shared session needs a non-empty string {key!r}: {data!r}")
    return {
        "graph_session_id": data["graph_session_id"],
        "name": data.get("name", data["slug"]),
        "description": data.get("description", ""),
        "slug": data["slug"],
        "version": data.get("version", 1),
        "status": data.get("status", "active"),
    }


def _pid(project_id: object) -> str:
    if not isinstance(project_id, str) or not project_id:
        raise ValueError(f"project_id must be a non-empty string, got {project_id!r}")
    return project_id
