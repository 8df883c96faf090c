"""The fake desktop relay: a port of osFoundry's ``useConnectedGraphRelay.ts``.

The rules it follows are conformance/spec.md#d11 to #d18.

:class:`FakeRelay` runs on a clock (virtual or real) and talks to a server only
through a :class:`~pytest_osfoundry.client._relay_client.RelayClient`, so the same relay
drives the in-process fake, a loopback server or a foreign URL.

What it does, rule by rule:

* **D11** A pass every ``interval`` seconds (20) and at once when sharing changes; a
  tick that comes while a pass is busy is skipped (recorded in :attr:`FakeRelay.passes`). A
  sharing change restarts the interval, as re-running the hook's effect does.
* **D12** A pass first re-sends the outbox, then for each enabled project syncs its
  ticked sessions (at most 100) and takes the queued commands from the answer. A
  project's commands are run before the next project is synced.
* **D13** Just before running a command it re-checks that the project is still
  enabled, the session still ticked and its slug unchanged; otherwise it completes
  the command as ``cancelled`` with :data:`NO_LONGER_SHARED` and never runs it.
* **D14** It starts the run (``POST .../start``), runs the Graph on channel
  ``graph:external:<command id>`` with a control poll every ``control_poll`` seconds
  (3), then posts the bounded completion. One command at a time.
* **D15** A command id that is not a UUID is refused before anything is bound or run.
* **D16** When the control poll sees ``cancel_requested`` it calls the engine's cancel
  once, waits for the run to stop, and reports ``cancelled`` whatever the run did.
* **D17** Each completion goes to the outbox before its POST and leaves it only after
  a 2xx; ``outbox=False`` turns the outbox off (a lost POST is then lost for good).
* **D18** Completions are bounded by
  :func:`~pytest_osfoundry.relay._bounded.bounded_completion`.

A command whose completion still waits in the outbox is never run again, even if a
sync hands it out once more (its completion had not arrived yet).

**Offline** (:meth:`FakeRelay.go_offline` to :meth:`FakeRelay.go_online`): the desktop
reaches the server for nothing — no sync, no start, no control poll, no completion.
A completion made meanwhile waits in the outbox for the first pass after it is back
(without an outbox it is lost, as D17 says of a lost POST). Two readings of a Graph
running when the desktop goes away: ``mode="asleep"`` (the default: the machine
sleeps, the Graph stands still and goes on when it wakes) and ``mode="network"`` (the
machine is awake with its network gone: the Graph runs on, its completion waits).

What it did is kept for tests and logs — :attr:`FakeRelay.passes`,
:attr:`FakeRelay.events`, :attr:`FakeRelay.executed` — each the last ``history``
items (10,000 by default; ``None`` keeps all), so a relay running for weeks holds a
fixed amount.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, Protocol, runtime_checkable

from pytest_osfoundry._checks import (
    check_flag,
    check_implements,
    check_positive_int,
    check_seconds,
)
from pytest_osfoundry._vocabulary import (
    CONTROL_POLL_SECONDS,
    MAX_SYNC_SESSIONS,
    NO_LONGER_SHARED,
    RELAY_INTERVAL_SECONDS,
)
from pytest_osfoundry.client._errors import OsfClientError
from pytest_osfoundry.client._relay_client import RelayApiClient
from pytest_osfoundry.clock import Clock, ProcessGen, Timer
from pytest_osfoundry.engine._contract import Engine, StartedRun
from pytest_osfoundry.engine._sessions import SessionInfo
from pytest_osfoundry.relay._commands import CommandRunner
from pytest_osfoundry.relay._outbox import MemoryOutbox, Outbox
from pytest_osfoundry.relay._records import (
    DEFAULT_HISTORY,
    History,
    PassReason,
    PassRecord,
    RelayEvent,
    _pid,
    _ProjectShare,
    _session_dict,
)

__all__ = [
    "NO_LONGER_SHARED",
    "OFFLINE_MODES",
    "FakeRelay",
    "OfflineMode",
    "PassRecord",
    "RelayEvent",
    "check_offline_mode",
]

@runtime_checkable
class _Suspendable(Protocol):
    """An engine run that can stand still while the machine sleeps (the FakeEngine's)."""

    def suspend(self) -> None: ...

    def resume(self) -> None: ...


OfflineMode = Literal["asleep", "network"]
"""How a desktop is offline: the machine asleep, or awake with its network gone."""

#: Every :data:`OfflineMode`, the default first.
OFFLINE_MODES: tuple[OfflineMode, ...] = ("asleep", "network")


def check_offline_mode(value: object, name: str = "mode") -> OfflineMode:
    """``value`` if it is an :data:`OfflineMode`; else a ``ValueError`` naming ``name``."""
    for mode in OFFLINE_MODES:
        if value == mode:
            return mode
    raise ValueError(
        f"{name} must be 'asleep' (the machine sleeps: a running Graph pauses until it "
        f"wakes) or 'network' (awake, its network gone: a running Graph runs on and its "
        f"completion waits in the outbox), got {value!r}"
    )


class FakeRelay(CommandRunner):
    """The owner's desktop relay, faked. Call :meth:`start` to begin polling.

    ``outbox`` is an :class:`~pytest_osfoundry.relay._outbox.Outbox` (in memory by
    default) or ``False`` for no outbox. ``phase`` delays the first pass after
    :meth:`start`. ``seed`` makes execution ids deterministic. ``history`` is how many
    passes, events and executed command ids it keeps of each (the newest; ``None``:
    all).
    """

    def __init__(
        self,
        clock: Clock,
        client: RelayApiClient,
        engine: Engine,
        *,
        interval: float = RELAY_INTERVAL_SECONDS,
        control_poll: float = CONTROL_POLL_SECONDS,
        outbox: Outbox | Literal[False] | None = None,
        max_sessions: int = MAX_SYNC_SESSIONS,
        seed: int | None = None,
        history: int | None = DEFAULT_HISTORY,
    ) -> None:
        check_implements(clock, "clock", Clock)
        check_implements(client, "client", RelayApiClient)
        check_implements(engine, "engine", Engine)
        if outbox is not None and outbox is not False:
            check_implements(outbox, "outbox (or None for in memory, False for off)", Outbox)
        check_positive_int(max_sessions, "max_sessions")
        if history is not None:
            check_positive_int(history, "history")
        self.clock = clock
        self.client = client
        self.engine = engine
        self.interval = check_seconds(interval, "interval", positive=True)
        self.control_poll = check_seconds(control_poll, "control_poll", positive=True)
        self.outbox: Outbox | None = (
            None if outbox is False else (outbox if outbox is not None else MemoryOutbox())
        )
        self.max_sessions = max_sessions
        # A stream of its own: seeded like the server's command ids, the execution ids
        # would otherwise repeat the command ids digit for digit.
        self._rng = random.Random(None if seed is None else f"relay-execution-ids:{seed}")
        self._shares: dict[str, _ProjectShare] = {}
        self._timer: Timer | None = None
        self._busy = False
        self.running = False
        self.online = True
        self.offline_mode: OfflineMode | None = None
        """How the desktop is offline (``None`` while online)."""
        self._slept: _Suspendable | None = None
        self.passes: History[PassRecord] = History(history)
        self.events: History[RelayEvent] = History(history)
        self.executed: History[str] = History(history)
        self.current: str | None = None
        self.current_run: StartedRun | None = None
        """The engine's handle of the run in :attr:`current` (``None`` between runs)."""
        self._listeners: list[Callable[[RelayEvent], None]] = []

    def on_event(self, listener: Callable[[RelayEvent], None]) -> None:
        """Call ``listener(event)`` for every :class:`RelayEvent` from now on."""
        if not callable(listener):
            raise TypeError(f"listener must be callable, got {listener!r}")
        self._listeners.append(listener)

    # ------------------------------------------------------------------ sharing
    def share(
        self, project_id: str, sessions: Iterable[SessionInfo | Mapping[str, Any]] = ()
    ) -> None:
        """Enable ``project_id`` and tick ``sessions`` (added to those already ticked)."""
        pid = _pid(project_id)
        ticked = [_session_dict(session) for session in sessions]  # all valid, or no change
        share = self._shares.setdefault(pid, _ProjectShare())
        share.enabled = True
        for data in ticked:
            share.sessions[data["graph_session_id"]] = data
        self._sharing_changed()

    def enable(self, project_id: str) -> None:
        """Enable a project (its ticked sessions are synced again)."""
        self._shares.setdefault(_pid(project_id), _ProjectShare()).enabled = True
        self._sharing_changed()

    def disable(self, project_id: str) -> None:
        """Disable a project: no more syncs for it; its commands are re-check-cancelled."""
        self._share(project_id).enabled = False
        self._sharing_changed()

    def tick(self, project_id: str, session: SessionInfo | Mapping[str, Any]) -> None:
        """Tick one session for a project."""
        data = _session_dict(session)
        self._share(project_id).sessions[data["graph_session_id"]] = data
        self._sharing_changed()

    def untick(self, project_id: str, graph_session_id: str) -> None:
        """Untick one session (it is no longer shared with the project)."""
        share = self._share(project_id)
        if graph_session_id not in share.sessions:
            raise KeyError(f"session {graph_session_id!r} is not ticked for {project_id!r}")
        del share.sessions[graph_session_id]
        self._sharing_changed()

    def rename(self, project_id: str, graph_session_id: str, slug: str) -> None:
        """Change a ticked session's slug (queued commands with the old slug are refused)."""
        if not isinstance(slug, str) or not slug:
            raise ValueError(f"slug must be a non-empty string, got {slug!r}")
        share = self._share(project_id)
        if graph_session_id not in share.sessions:
            raise KeyError(f"session {graph_session_id!r} is not ticked for {project_id!r}")
        share.sessions[graph_session_id]["slug"] = slug
        self._sharing_changed()

    def shared_sessions(self, project_id: str) -> list[dict[str, Any]]:
        """The sessions a sync for ``project_id`` uploads now (at most ``max_sessions``)."""
        return [dict(s) for s in self._to_sync(self._share(project_id))]

    def _to_sync(self, share: _ProjectShare) -> list[dict[str, Any]]:
        """The ticked sessions a sync uploads (the relay's own dicts: encoded at once)."""
        return list(share.sessions.values())[: self.max_sessions]

    def _share(self, project_id: str) -> _ProjectShare:
        share = self._shares.get(_pid(project_id))
        if share is None:
            raise KeyError(f"project {project_id!r} was never shared; call share() first")
        return share

    def _sharing_changed(self) -> None:
        if self.running and self.online:
            self._restart("sharing")

    # ------------------------------------------------------------------ lifecycle
    def start(self, *, phase: float = 0.0) -> None:
        """Begin polling: the first pass ``phase`` seconds from now, then every interval."""
        if self.running:
            raise RuntimeError("the relay is already started")
        check_seconds(phase, "phase")
        self.running = True
        if self.online:
            self._timer = self.clock.call_later(phase, lambda: self._tick("start"))

    def stop(self) -> None:
        """Stop polling (a pass under way finishes its current command and ends)."""
        self.running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def go_offline(self, *, mode: OfflineMode = "asleep", keep_phase: bool = False) -> None:
        """The desktop goes away: it reaches the server for nothing until :meth:`go_online`.

        No pass, sync, start, control poll or completion POST reaches the server; a
        completion made meanwhile waits in the outbox (lost without one). ``mode``:
        ``"asleep"`` (the machine sleeps: the Graph it is running stands still until it
        wakes; the engine's run must have ``suspend()``/``resume()``, as the kit's
        :class:`~pytest_osfoundry.engine.FakeEngine`'s have) or ``"network"`` (awake,
        its network gone: the Graph runs on). No effect if it is offline already.

        ``keep_phase``: its pass timer keeps running through the outage (the ticks that
        fall in it do nothing), so after it is back it passes at the next tick of its
        old grid instead of at once (the seed's reading of the offline scenario).
        """
        mode = check_offline_mode(mode)
        check_flag(keep_phase, "keep_phase")
        run = self.current_run
        if mode == "asleep" and run is not None and not isinstance(run, _Suspendable):
            raise TypeError(
                "go_offline(mode='asleep') pauses the running Graph, and this engine's run "
                f"{run!r} cannot pause (no suspend()/resume()): use mode='network'"
            )
        if not self.online:
            return
        self.online = False
        self.offline_mode = mode
        if self._timer is not None and not keep_phase:
            self._timer.cancel()
            self._timer = None
        if mode == "asleep" and isinstance(run, _Suspendable):
            run.suspend()
            self._slept = run
        self._event("offline", detail=mode)

    def go_online(self) -> None:
        """The desktop is back: a pass at once, then every interval (unless its timer kept
        its phase through the outage: then at its next tick). A Graph paused by sleep
        goes on from where it stood."""
        if self.online:
            return
        self.online = True
        self.offline_mode = None
        slept, self._slept = self._slept, None
        if slept is not None:
            slept.resume()
        self._event("online")
        if self.running and self._timer is None:
            self._restart("online")

    def pass_now(self) -> None:
        """Tick at once (skipped if a pass is busy), without moving the interval."""
        self._tick("manual", reschedule=False)

    @property
    def busy(self) -> bool:
        """True while a pass is under way."""
        return self._busy

    def _restart(self, reason: PassReason) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._tick(reason)

    def _tick(self, reason: PassReason, *, reschedule: bool = True) -> None:
        if reschedule:
            self._timer = self.clock.call_later(self.interval, lambda: self._tick("interval"))
        if not self.running or not self.online:
            return
        now = self.clock.now()
        if self._busy:
            self.passes.append(PassRecord(now, reason, skipped=True, ended_at=now))
            return
        record = PassRecord(now, reason, skipped=False)
        self.passes.append(record)
        self._busy = True
        self.clock.start(self._pass(record), name="relay-pass")

    # ------------------------------------------------------------------ a pass
    def _pass(self, record: PassRecord) -> ProcessGen:
        try:
            self._flush_outbox()
            for project_id, share in list(self._shares.items()):
                if not share.enabled:
                    continue
                if not self.online:
                    break  # gone offline while the pass was running a command
                try:
                    commands = self.client.sync(project_id, self._to_sync(share))
                except OsfClientError as err:
                    self._event("sync-failed", detail=f"{project_id}: {err}", error=err)
                    continue
                self._event("synced", detail=f"{project_id}: {len(commands)} queued")
                for command in commands:
                    if not (self.running and self.online):
                        break
                    yield from self._handle(project_id, command)
        finally:
            self._busy = False
            record.ended_at = self.clock.now()
