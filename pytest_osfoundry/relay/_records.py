"""What the fake desktop relay records and shares: passes, events, shared projects.

* :class:`PassRecord` is one tick of the relay (run, or skipped as busy);
  :class:`RelayEvent` one thing it did (``kind`` names it); :class:`History` keeps the
  last of them (bounded: a relay running for weeks holds a fixed amount).
* A project's share (enabled or not, its ticked sessions) and
  :func:`_session_dict`, which turns a ticked session into the dict a sync uploads,
  refusing one without a non-empty ``graph_session_id`` and ``slug``.

:class:`~pytest_osfoundry.relay._desktop.FakeRelay` is what uses them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeVar, overload

from pytest_osfoundry.client._errors import OsfClientError
from pytest_osfoundry.engine._sessions import SessionInfo

__all__ = ["DEFAULT_HISTORY", "History", "PassReason", "PassRecord", "RelayEvent"]

DEFAULT_HISTORY = 10_000
"""How many passes, events and executed command ids a relay keeps of each by default."""

T = TypeVar("T")


class History(Sequence[T]):
    """The last ``limit`` items appended, oldest first (every one when ``limit`` is
    ``None``); :attr:`dropped` counts those forgotten to keep to it.

    A read-only sequence besides :meth:`append`: indexing, slicing (a list), ``len``,
    ``in``, ``reversed``, and ``==`` against any sequence of the same items.
    """

    def __init__(self, limit: int | None) -> None:
        if limit is not None and (type(limit) is not int or limit < 1):
            raise ValueError(f"a history keeps at least 1 item or None (all), got {limit!r}")
        self.limit = limit
        self.dropped = 0
        self._items: deque[T] = deque(maxlen=limit)

    def append(self, item: T) -> None:
        """Keep ``item`` as the newest, forgetting the oldest past the limit."""
        if self.limit is not None and len(self._items) == self.limit:
            self.dropped += 1
        self._items.append(item)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __reversed__(self) -> Iterator[T]:
        return reversed(self._items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return list(self._items)[index]
        return self._items[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (History, list, tuple)):
            return list(self._items) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"History({list(self._items)!r}, limit={self.limit!r}, dropped={self.dropped})"

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
