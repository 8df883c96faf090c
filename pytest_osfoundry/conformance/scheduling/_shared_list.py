"""What one check holds while the others run: the project's shared session list.

Under ``--osf-concurrency`` the checks run alongside each other (only those whose
evidence is timing run alone: the race of R5-concurrent-same-key and the opt-in
timing check). A sync *replaces* the project's shared sessions (D10), and every sync
of the other checks puts the fixed list back
(:mod:`~pytest_osfoundry.conformance.server._sessions`). So a check that shares a list of its
own (a hundred sessions, an overflow) and then reads what it shared *holds* the list
for those few requests (``with c.desktop.changing_list():``) instead of running
alone: meanwhile the other checks' syncs wait, and their other requests go on -- the
fixed sessions stay shared in every list a hold shares, so queueing and listing are
not disturbed. A list that may leave the fixed sessions unshared on a broken server
(the refused overflow of D10-sync-max-100) is held with ``everything=True``: the
other checks' reads that depend on the list (``run_graph_session``,
``list_graph_sessions``) wait as well, so such a server fails only the check about it.

Which requests a hold excludes is read off each request at the one transport every
check's requests pass (:func:`kind_of`), so no check can forget to wait. A hold
belongs to the check's context, not to a thread: the requests of the holding check
pass, from any of its threads. A waiting hold goes before new requests it excludes
(it is never starved), and holds begin in the order they came. Holds do not overlap
each other, but for those that share one list (``sharing``: R8-default-limit and the
first steps of D10-sync-replaces and D10-sync-max-100 all share the same hundred
sessions): they hold together, and a waiting hold of another kind goes before new ones
joining them. A hold whose block syncs the fixed list itself (``sharing=FIXED``:
D10-sync-replaces' sync leaving the extra sessions out, and the read after it) keeps
out only the other holds: the other checks' syncs share that very list.

Holds are per process: under xdist, or with several CI jobs against one server,
checks of another process may still sync meanwhile, which is why the checks that read
the list after changing it try again a few times when they see the fixed list.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Literal

from pytest_osfoundry._wirejson import loads as _fast_loads
from pytest_osfoundry.client import Transport
from pytest_osfoundry.conformance.expected import RELAY_PREFIX
from pytest_osfoundry.conformance.scheduling._per_target import kept_on
from pytest_osfoundry.http import Response

__all__ = [
    "LIST_TOOLS",
    "Guarded",
    "Holds",
    "Kind",
    "ListUse",
    "Scope",
    "guarded",
    "holds_of",
    "kind_of",
]

LIST_TOOLS = frozenset({"run_graph_session", "list_graph_sessions"})
"""The tools whose answer depends on the project's shared sessions."""

ListUse = Literal["sync", "read"]
"""How a request depends on the shared sessions: a relay sync replaces them, a read's
answer depends on them."""

Kind = Literal["sync", "read", "other"]
"""A request as the holds see it: a :data:`ListUse`, or any other request (which no
hold excludes)."""

Scope = Literal["holds", "syncs", "list"]
"""What a hold keeps the other checks from sending: nothing (it only keeps other holds
out: its block syncs the list every other check syncs); their syncs; their syncs and
reads of the list."""

_EXCLUDES: dict[Scope, frozenset[ListUse]] = {
    "holds": frozenset(),
    "syncs": frozenset({"sync"}),
    "list": frozenset({"sync", "read"}),
}
_SYNC_PATH = RELAY_PREFIX + "/sync"


class Holds:
    """One target's holds: requests of every check, or the checks holding the list.

    :meth:`request` surrounds one request of a check (``owner``: its context's
    token); :meth:`hold` a stretch of one check's work (re-entrant; the outermost
    block's scope counts). Holds with the same ``sharing`` name share one list (every
    holder syncs exactly that list), so they hold at once; any other hold is alone.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._in_flight: dict[str, int] = {"sync": 0, "read": 0}
        self._holders: dict[object, int] = {}
        """Who holds now, and how deep: several only when they share one list."""
        self._scope: Scope = "syncs"
        self._sharing: str | None = None
        self._waiting: list[tuple[object, Scope, str | None]] = []
        """The holds waiting to begin, first come first: (a token, scope, sharing)."""

    def _excluded(self, kind: ListUse) -> bool:
        """Whether a new request of ``kind`` must wait (under the condition)."""
        if self._holders and kind in _EXCLUDES[self._scope]:
            return True
        return any(kind in _EXCLUDES[scope] for _, scope, _ in self._waiting)

    def _may_hold(self, token: object, scope: Scope, sharing: str | None) -> bool:
        """Whether the waiting hold ``token`` may begin now (under the condition): no
        hold of another kind waits before it; nobody holds, or the holders share its
        list and no hold of another kind waits at all; and no request it excludes is in
        flight."""
        kind = (scope, sharing)
        order = [entry[0] for entry in self._waiting]
        ahead = self._waiting[: order.index(token)]
        if any((other_scope, other) != kind for _, other_scope, other in ahead):
            return False
        if self._holders:
            joins = sharing is not None and kind == (self._scope, self._sharing)
            others = any((s, o) != kind for _, s, o in self._waiting)
            if not joins or others:
                return False
        return not any(self._in_flight[use] for use in _EXCLUDES[scope])

    @contextmanager
    def request(self, owner: object, kind: ListUse) -> Iterator[None]:
        """Around one request of ``owner``'s check that depends on the list: waits while
        another check's hold (or one waiting) excludes it; the holders' own pass."""
        with self._cond:
            own = owner in self._holders
            if not own:
                while self._excluded(kind):
                    self._cond.wait()
                self._in_flight[kind] += 1
        try:
            yield
        finally:
            if not own:
                with self._cond:
                    self._in_flight[kind] -= 1
                    self._cond.notify_all()

    @contextmanager
    def hold(self, owner: object, scope: Scope, sharing: str | None = None) -> Iterator[None]:
        """Hold for ``owner``'s check: wait until no other hold is on (but those sharing
        its list) and no request it excludes is in flight, then keep new ones waiting
        until the block ends."""
        with self._cond:
            if owner in self._holders:
                self._holders[owner] += 1
            else:
                token = object()
                self._waiting.append((token, scope, sharing))  # excluded requests wait now
                try:
                    while not self._may_hold(token, scope, sharing):
                        self._cond.wait()
                finally:
                    self._waiting = [entry for entry in self._waiting if entry[0] is not token]
                    self._cond.notify_all()
                if not self._holders:
                    self._scope, self._sharing = scope, sharing
                self._holders[owner] = 1
        try:
            yield
        finally:
            with self._cond:
                self._holders[owner] -= 1
                if not self._holders[owner]:
                    del self._holders[owner]
                    self._cond.notify_all()


def kind_of(method: str, url: str, mcp_url: str, body: bytes) -> Kind:
    """What a request is to the holds: ``"sync"`` (a relay sync, which replaces the
    shared sessions), ``"read"`` (a ``tools/call`` of :data:`LIST_TOOLS` at the MCP
    endpoint), or ``"other"``."""
    if method != "POST":
        return "other"
    if url.endswith(_SYNC_PATH):
        return "sync"
    if url != mcp_url or b"tools/call" not in body:
        return "other"
    try:
        message = _fast_loads(body, json.loads)
    except ValueError:
        return "other"
    params = message.get("params") if isinstance(message, dict) else None
    return "read" if isinstance(params, dict) and params.get("name") in LIST_TOOLS else "other"


class Guarded:
    """A check's transport: each request waits while another check's hold excludes it."""

    def __init__(self, inner: Transport, holds: Holds, mcp_url: str) -> None:
        self.inner = inner
        self.holds = holds
        self.mcp_url = mcp_url

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        kind = kind_of(method, url, self.mcp_url, body)
        if kind == "other":  # no hold excludes it: straight on, no lock taken
            return self.inner.request(method, url, headers, body)
        with self.holds.request(self, kind):
            return self.inner.request(method, url, headers, body)

    def hold(self, scope: Scope, sharing: str | None = None) -> AbstractContextManager[None]:
        """Hold ``scope`` for this check (its requests pass, from any thread); holds
        ``sharing`` one list go together."""
        return self.holds.hold(self, scope, sharing)

    def __repr__(self) -> str:
        return f"{self.inner!r} (held for a check's holds)"


def holds_of(target: object) -> Holds:
    """The :class:`Holds` of ``target``, kept on it (made on first use)."""
    return kept_on(target, "_osf_holds", Holds, Holds)


def guarded(target: object, inner: Transport) -> Guarded:
    """``inner`` for one check, its requests waiting while another check's hold
    excludes them; its :meth:`Guarded.hold` holds for the check."""
    return Guarded(inner, holds_of(target), str(getattr(target, "mcp_url", "")))
