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

from pytest_osfoundry.clock import Clock, VirtualClock
from pytest_osfoundry.doors._delayed import MAX_LATENCY
from pytest_osfoundry.faults import (
    Fault,
    FaultyHandler,
    FaultyTransport,
    Latency,
    LoseRequests,
    schedule_death,
    schedule_offline,
)
from pytest_osfoundry.http import Response
from pytest_osfoundry.world import agent_faults, faults_config

if TYPE_CHECKING:
    from pytest_osfoundry.relay._desktop import FakeRelay

__all__ = ["ServeFaults"]

#: The faults that act on the fake desktop (serve --relay, on the virtual clock).
_DESKTOP_FAULTS = ("lose_completions", "offline", "desktop_dies")


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
    agent-side faults are taken, ``latency`` at most ``MAX_LATENCY`` seconds (a worker
    thread waits it out), and the desktop faults are refused saying why. On the virtual
    clock ``latency`` moves the clock under :attr:`moving`, the lock the admin door
    moves it under, so the clock is moved by one thread at a time.
    """

    def __init__(
        self,
        clock: Clock,
        door: FaultyHandler,
        mcp_path: str,
        *,
        desktop: FaultyTransport | None = None,
        relay: FakeRelay | None = None,
    ) -> None:
        self.clock = clock
        self.door = door
        self.mcp_path = mcp_path
        self.desktop = desktop
        self.relay = relay
        self.fields: dict[str, Any] = {}
        self.scheduled: list[dict[str, Any]] = []
        self.moving = threading.Lock()
        """Held while the virtual clock moves (the admin door's moves, ``latency``'s)."""
        self._lock = threading.Lock()

    def set(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Replace the faults with ``fields`` (``{}``: none); what :meth:`view` then shows.

        Raises ``ValueError``/``TypeError`` naming the field, changing nothing.
        """
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
        if not virtual and cfg.latency > MAX_LATENCY:
            raise ValueError(f"latency: at most {MAX_LATENCY:g} seconds on real time, "
                             f"got {cfg.latency!r}")
        with self._lock:
            faults = agent_faults(cfg, self.clock, seed=cfg.seed, match=self.mcp_path)
            if virtual:  # a request's latency moves the clock: one mover at a time
                faults = [_Moving(f, self.moving) if isinstance(f, Latency) else f
                          for f in faults]
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
