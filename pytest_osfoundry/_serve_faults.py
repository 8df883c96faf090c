"""The world's faults on a running ``osfoundry-fake serve``, set over its admin door.

:class:`ServeFaults` is what ``serve``'s fault flags set at start and what
``POST /_osf/faults`` sets later (through
:class:`~pytest_osfoundry.server._clock_admin.ClockAdmin`): the ``osf`` marker's faults,
with the marker's meanings and checks (:func:`~pytest_osfoundry.world.faults_config`,
:func:`~pytest_osfoundry.world.agent_faults`): one validation path for both.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from pytest_osfoundry._checks import is_number
from pytest_osfoundry.clock import Clock, VirtualClock
from pytest_osfoundry.doors._internal import MAX_LATENCY
from pytest_osfoundry.faults import (
    Fault,
    FaultyHandler,
    FaultyTransport,
    Latency,
    LoseRequests,
    ServerErrors,
    schedule_death,
    schedule_offline,
)
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server._internal import ADMIN_PREFIX, MAX_ADVANCE, shown
from pytest_osfoundry.world import agent_faults, faults_config

if TYPE_CHECKING:
    from pytest_osfoundry.relay import FakeRelay

__all__ = ["MAX_ERROR_PATH", "MAX_LOST_COMPLETIONS", "MAX_SEED", "ServeFaults", "check_ranges"]

#: The faults that act on the fake desktop (serve --relay, on the virtual clock).
_DESKTOP_FAULTS = ("lose_completions", "offline", "desktop_dies")
#: The most completions ``lose_completions`` may lose.
MAX_LOST_COMPLETIONS = 1_000_000
#: The largest ``seed``: the largest whole number every JSON client sends exactly
#: (JavaScript's ``Number.MAX_SAFE_INTEGER``).
MAX_SEED = 2**53 - 1
#: The longest path substring ``server_errors`` takes.
MAX_ERROR_PATH = 2048


def check_ranges(fields: dict[str, Any]) -> None:
    """Refuse a number ``serve`` cannot use, naming the field and its range.

    The ranges ``serve`` adds to the marker's checks (run first, on the JSON as sent,
    so that no value reaches a conversion it would break, an integer past a float
    included): ``drop_replies`` 0 to 1; ``latency`` 0 to :data:`MAX_LATENCY` seconds
    on either clock (on the virtual clock it is the clock's move for one request, far
    inside :data:`~pytest_osfoundry.server._clock_admin.MAX_ADVANCE`); ``offline``'s
    offset and duration and ``desktop_dies`` 0 to ``MAX_ADVANCE`` seconds (a schedule
    the admin door can reach); ``lose_completions`` 0 to :data:`MAX_LOST_COMPLETIONS`;
    ``seed`` 0 to :data:`MAX_SEED`; ``server_errors`` a path substring of 1 to
    :data:`MAX_ERROR_PATH` characters (``""`` would match every path, the relay API's
    too) and a status from 400 to 599. A value of another shape is left to the
    marker's checks, which name it.

    Raises:
        ValueError: ``"<field>: <range>, got <value>"``.
    """
    seconds = " of seconds"
    _bounded(fields.get("drop_replies"), "drop_replies", 0, 1)
    _bounded(fields.get("latency"), "latency", 0, MAX_LATENCY, unit=seconds)
    _bounded(fields.get("desktop_dies"), "desktop_dies", 0, MAX_ADVANCE, unit=seconds)
    _bounded(fields.get("lose_completions"), "lose_completions", 0, MAX_LOST_COMPLETIONS,
             whole=True)
    _bounded(fields.get("seed"), "seed", 0, MAX_SEED, whole=True)
    offline = fields.get("offline")
    if isinstance(offline, list) and len(offline) in (2, 3):
        _bounded(offline[0], "offline offset", 0, MAX_ADVANCE, unit=seconds)
        _bounded(offline[1], "offline duration", 0, MAX_ADVANCE, unit=seconds)
    errors = fields.get("server_errors")
    if isinstance(errors, list) and len(errors) == 2:
        path, status = errors
        if isinstance(path, str) and not 1 <= len(path) <= MAX_ERROR_PATH:
            raise ValueError(
                f"server_errors path: a path substring of 1 to {MAX_ERROR_PATH} characters "
                f"(\"/\" for every path), got {shown(path)}"
            )
        _bounded(status, "server_errors status", 400, 599, whole=True,
                 unit=" (an HTTP error status)")


def _bounded(
    value: object, name: str, low: float, high: float, *, whole: bool = False, unit: str = ""
) -> None:
    """Refuse ``value`` (unless ``None``: not given) unless a number (a whole one with
    ``whole``) from ``low`` to ``high``, compared exactly (no conversion to overflow)."""
    if value is None:
        return
    if is_number(value) and (isinstance(value, int) or not whole) and low <= value <= high:
        return
    what = ("a whole number" if whole else "a number") + unit
    raise ValueError(f"{name}: {what} from {_plain(low)} to {_plain(high)}, got {shown(value)}")


def _plain(bound: float) -> str:
    """A bound as typed: ``60``, ``31622400``, ``0.5``."""
    return str(int(bound)) if bound == int(bound) else repr(bound)


class ServeFaults:
    """The world's faults on a running ``serve``, set and shown over the admin door.

    ``door`` is the :class:`~pytest_osfoundry.faults.FaultyHandler` in front of the
    server (its fault list is replaced in place): the agent-side faults
    (``drop_replies``, ``latency``, ``server_errors``) act there, ``drop_replies`` and
    ``latency`` on the MCP endpoint (``mcp_path``: an agent's calls, not the desktop's
    relay API). ``desktop`` is the in-process fake desktop's transport and ``relay``
    the desktop (``serve --virtual-clock --relay``): ``lose_completions`` loses its next
    completions, ``offline`` and ``desktop_dies`` are scheduled at their offsets from
    the moment they are set (a later setting adds to that schedule; nothing unschedules
    a window already set). On real time (not a :class:`VirtualClock`) only the
    agent-side faults are taken, and the desktop faults are refused saying why;
    ``latency`` is then waited out at the loopback door, holding no worker
    (:meth:`delay`). On the virtual clock ``latency`` moves the clock under
    :attr:`moving`, the lock the admin door moves it under, so the clock is moved by
    one thread at a time. ``latency`` (``serve --latency``) delays every request but
    the admin door's, on either clock, in real seconds, at the door too. Every number
    is checked by :func:`check_ranges` first.
    """

    def __init__(
        self,
        clock: Clock,
        door: FaultyHandler,
        mcp_path: str,
        *,
        desktop: FaultyTransport | None = None,
        relay: FakeRelay | None = None,
        latency: float = 0.0,
    ) -> None:
        self.clock = clock
        self.latency = latency
        self.door = door
        self.mcp_path = mcp_path
        self.desktop = desktop
        self.relay = relay
        self.fields: dict[str, Any] = {}
        self.scheduled: list[dict[str, Any]] = []
        self.moving = threading.Lock()
        """Held while the virtual clock moves (the admin door's moves, ``latency``'s)."""
        self._lock = threading.Lock()
        self._waits: list[ServerErrors | Latency] = []
        """On real time, the faults :meth:`delay` reads, in the door's order."""

    def delay(self, request: Request) -> float:
        """The real seconds the loopback door holds ``request`` before a worker serves
        it, holding no thread: :attr:`latency` for every request but the admin door's,
        plus the ``latency`` fault's on real time where it applies (the MCP endpoint),
        none when ``server_errors`` answers it (in the door's order, errors come first)."""
        if request.path.startswith(ADMIN_PREFIX):
            return 0.0
        url = request.path + (f"?{request.query}" if request.query else "")
        for fault in self._waits:
            if fault.applies(request.method, url):
                if isinstance(fault, ServerErrors):
                    return 0.0
                return self.latency + fault.seconds
        return self.latency

    def set(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Replace the faults with ``fields`` (``{}``: none); what :meth:`view` then shows.

        Raises ``ValueError``/``TypeError`` naming the field, changing nothing: first
        :func:`check_ranges`, then the marker's checks.
        """
        check_ranges(fields)
        cfg = faults_config(fields)
        virtual = isinstance(self.clock, VirtualClock)
        for name in _DESKTOP_FAULTS:
            if name in fields and fields[name] not in (None, 0):
                if not virtual:
                    raise ValueError(
                        f"{name}: a desktop fault, which serve takes on the virtual clock only "
                        "(serve --virtual-clock --relay); on real time set the agent-side "
                        "faults (drop_replies, latency, server_errors)"
                    )
                if self.relay is None or self.desktop is None:
                    raise ValueError(
                        f"{name}: a desktop fault, and no desktop runs in this serve (add --relay)"
                    )
        with self._lock:
            faults = agent_faults(cfg, self.clock, seed=cfg.seed, match=self.mcp_path)
            if virtual:  # a request's latency moves the clock: one mover at a time
                faults = [_Moving(f, self.moving) if isinstance(f, Latency) else f
                          for f in faults]
            else:  # waited out at the door (delay), not in a worker
                self._waits = [f for f in faults if isinstance(f, (ServerErrors, Latency))]
                faults = [f for f in faults if not isinstance(f, Latency)]
            self.door.faults[:] = faults
            if self.desktop is not None:
                lose = cfg.lose_completions
                self.desktop.faults[:] = [LoseRequests("/complete", count=lose)] if lose else []
            now = self.clock.now()
            if cfg.offline is not None and self.relay is not None:
                offset, duration, *mode = cfg.offline
                how = mode[0] if mode else "asleep"
                schedule_offline(self.clock, self.relay, now + offset, duration, mode=how)
                self.scheduled.append({"offline": [now + offset, now + offset + duration],
                                       "mode": how})
            if cfg.desktop_dies is not None and self.relay is not None:
                schedule_death(self.clock, self.relay, now + cfg.desktop_dies)
                self.scheduled.append({"desktop_dies": now + cfg.desktop_dies})
            self.fields = dict(fields)
        return self.view()

    def view(self) -> dict[str, Any]:
        """What is set, what is scheduled, and what the faults did so far."""
        did: dict[str, int] = {}
        for fault in [*self.door.faults, *(self.desktop.faults if self.desktop else [])]:
            for name in ("dropped", "served", "lost"):
                if hasattr(fault, name):
                    did[name] = did.get(name, 0) + int(getattr(fault, name))
        return {"faults": self.fields, "scheduled": self.scheduled, "counts": did,
                "clock": "virtual" if isinstance(self.clock, VirtualClock) else "real"}


class _Moving:
    """A fault (``Latency`` on a virtual clock) applied while holding ``lock``."""

    def __init__(self, fault: Fault, lock: threading.Lock) -> None:
        self.fault = fault
        self.lock = lock

    def before(self, method: str, url: str) -> Response | None:
        with self.lock:
            return self.fault.before(method, url)

    def after(self, method: str, url: str, response: Response) -> None:
        self.fault.after(method, url, response)
