"""The Graph sessions the suite shares, the same in every process and every run.

A sync *replaces* a project's shared sessions and answers with *every* queued
command of the project, whoever queued it. So every check, in every process
(xdist workers, or several CI jobs against one server), shares the same fixed list
:func:`fixed_sessions` derived from the project id. The few checks that must share
something else (a longer list, a renamed slug) use sessions from the equally fixed
:func:`extra_sessions`, and checks that read the list accept those.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pytest_osfoundry.conformance.expected import SYNC_MAX_SESSIONS

__all__ = [
    "FIXED",
    "HUNDRED",
    "RENAMED",
    "extra_sessions",
    "fixed_sessions",
    "overflow_sessions",
    "unshared_session_id",
]

HUNDRED = "fixed+extra"
"""The ``sharing`` name of the holds whose blocks sync the fixed sessions and the extra
ones (:func:`extra_sessions`), the largest allowed sync, and nothing else: such
blocks of different checks hold the list together
(:meth:`~pytest_osfoundry.conformance.server._desktop.Desktop.changing_list`)."""

FIXED = "fixed"
"""The ``sharing`` name of a hold whose block syncs the fixed sessions alone -- what
every other check's sync shares too (or the same sessions, one slug renamed): such a
hold keeps out only the holds of other lists, never another check's sync
(D10-sync-replaces' sync leaving the extra sessions out, and the read after it)."""

#: What the re-check's rename appends to the rename session's slug.
RENAMED = "-renamed"
_ROLES = ("general", "rename", "spare")
_EXTRA = SYNC_MAX_SESSIONS - len(_ROLES)  # fixed + extra = the most one sync may carry


def _gsid(project_id: str, role: str) -> str:
    digest = hashlib.sha256(f"osf-conformance:{project_id}:{role}".encode()).hexdigest()
    return f"gs_{digest[:32]}"


def _session(project_id: str, role: str, title: str) -> dict[str, Any]:
    return {
        "graph_session_id": _gsid(project_id, role),
        "name": f"Conformance {title}",
        "description": f"Shared by the pytest-osfoundry conformance suite ({role}).",
        "slug": f"osf-conformance-{role}",
        "version": 1,
        "status": "active",
    }


def fixed_sessions(project_id: str) -> list[dict[str, Any]]:
    """The three sessions every check shares, the same in every process.

    ``[0]`` is where checks queue runs; ``[1]`` is renamed by ``D13-slug-changed``
    only; ``[2]`` is spare.
    """
    return [_session(project_id, role, f"{role} session") for role in _ROLES]


def extra_sessions(project_id: str) -> list[dict[str, Any]]:
    """97 more fixed sessions: with :func:`fixed_sessions`, the largest allowed sync."""
    return [_session(project_id, f"extra-{i:02d}", f"extra session {i:02d}") for i in range(_EXTRA)]


def overflow_sessions(project_id: str, count: int) -> list[dict[str, Any]]:
    """``count`` sessions used only in refused syncs (never shared by a correct server)."""
    return [
        _session(project_id, f"overflow-{i:03d}", f"overflow session {i:03d}") for i in range(count)
    ]


def unshared_session_id(project_id: str) -> str:
    """A well-formed Graph session id the suite never shares."""
    return _gsid(project_id, "never-shared")
