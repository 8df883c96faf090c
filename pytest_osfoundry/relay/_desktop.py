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
* **R14** A start with no definitive answer (no reply, a 5xx, an answer that is not
  the API's, or the token refused) may have been applied: the command is kept
  (:class:`UnansweredStart`) and, on every following pass, right after the outbox,
  re-checked (D13) and started again with the same execution id until an answer
  comes — ``running``: it runs, once; ``cancelled``: it is not run and nothing is
  posted; a refusal (404, 409, 400, ...): it is dropped, with a ``start-refused``
  event. A sync that hands it out meanwhile does not start it a second time that pass.
* **R15** A 401 or 403 on any relay call (the desktop token refused) ends the pass
  there: nothing more is sent until the next pass, so a refused token costs at most
  one sync a pass; the outbox keeps what was not delivered, and a ``token-refused``
  event (logged) says so once a pass.

A command whose completion still waits in the outbox is never run again, even if a
sync hands it out once more (its completion had not arrived yet). Every tick is a
:class:`PassRecord` (:attr:`FakeRelay.passes`), every step a :class:`RelayEvent`
(:attr:`FakeRelay.events`, :meth:`FakeRelay.on_event`).

What it did is kept for tests and logs — :attr:`FakeRelay.passes`,
:attr:`FakeRelay.events`, :attr:`FakeRelay.executed` — each the last ``history``
items (10,000 by default; ``None`` keeps all), so a relay running for weeks holds a
fixed amount (a :class:`History`).

**Offline** (:meth:`FakeRelay.go_offline` to :meth:`FakeRelay.go_online`): the desktop
reaches the server for nothing — no sync, no start, no control poll, no completion.
A completion made meanwhile waits in the outbox for the first pass after it is back
(without an outbox it is lost, as D17 says of a lost POST). Two readings of a Graph
running when the desktop goes away: ``mode="asleep"`` (the default: the machine
sleeps, the Graph stands still and goes on when it wakes) and ``mode="network"`` (the
machine is awake with its network gone: the Graph runs on, its completion waits).
"""

from __future__ import annotations

import logging
import random
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import (
    Any,
    Literal,
    NamedTuple,
    Protocol,
    TypeGuard,
    TypeVar,
    overload,
    runtime_checkable,
)

from pytest_osfoundry._checks import (
    check_flag,
    check_implements,
    check_positive_int,
    check_seconds,
)
from pytest_osfoundry._ids import is_uuid, uuid4_hex
from pytest_osfoundry._vocabulary import (
    CANCELLED,
    COMPLETED,
    CONTROL_POLL_SECONDS,
    FAILED,
    MAX_SYNC_SESSIONS,
    NO_LONGER_SHARED,
    RELAY_INTERVAL_SECONDS,
    RUNNING,
)
from pytest_osfoundry.client import HttpStatusError, OsfClientError, RelayApiClient
from pytest_osfoundry.clock import Clock, ProcessGen, Timer, Wait
from pytest_osfoundry.engine import Engine, SessionInfo, StartedRun
from pytest_osfoundry.relay._bounded import bounded_completion
from pytest_osfoundry.relay._outbox import MemoryOutbox, Outbox

__all__ = [
    "DEFAULT_HISTORY",
    "NO_LONGER_SHARED",
    "OFFLINE_MODES",
    "FakeRelay",
    "History",
    "OfflineMode",
    "PassReason",
    "PassRecord",
    "RelayEvent",
    "UnansweredStart",
    "check_offline_mode",
]

log = logging.getLogger("pytest_osfoundry.relay")

DEFAULT_HISTORY = 10_000
"""How many passes, events and executed command ids a relay keeps of each by default."""

TOKEN_REFUSED = (401, 403)
"""R15: the statuses that mean the desktop token is refused (unknown, or not the desktop's)."""

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
"""Why a pass ticked: the start, the interval, a sharing change, back online, asked for."""


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


class UnansweredStart(NamedTuple):
    """R14: a start sent with no definitive answer, kept to be asked again next pass."""

    project_id: str
    command: Mapping[str, Any]
    execution_id: str


def start_unanswered(err: OsfClientError) -> bool:
    """R14: whether a start that raised ``err`` may have been applied and must be asked
    again: no reply, a 5xx, a body that is not the API's, or the token refused (R15:
    asked again once it is accepted). Any other refusal (404, 409, 400, ...) is final."""
    if isinstance(err, HttpStatusError):
        return err.status >= 500 or token_refused(err)
    return True


def token_refused(err: OsfClientError) -> TypeGuard[HttpStatusError]:
    """R15: whether ``err`` is the desktop token refused (a 401 or 403)."""
    return isinstance(err, HttpStatusError) and err.status in TOKEN_REFUSED


@dataclass
class ProjectShare:
    """A project as the desktop shares it: enabled or not, its ticked sessions by id."""

    enabled: bool = True
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)


def session_dict(session: SessionInfo | Mapping[str, Any]) -> dict[str, Any]:
    """A ticked session as the dict a sync uploads; refused without a non-empty
    ``graph_session_id`` and ``slug``."""
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


class FakeRelay:
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
        self._shares: dict[str, ProjectShare] = {}
        self._timer: Timer | None = None
        self._busy = False
        self._refused = False
        """R15: the desktop token was refused during the current pass (it sends no more)."""
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
        self.unanswered: dict[str, UnansweredStart] = {}
        """R14: the starts with no definitive answer yet, by command id, oldest first
        (asked again each pass until answered)."""
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
        ticked = [session_dict(session) for session in sessions]  # all valid, or no change
        share = self._shares.setdefault(pid, ProjectShare())
        share.enabled = True
        for data in ticked:
            share.sessions[data["graph_session_id"]] = data
        self._sharing_changed()

    def enable(self, project_id: str) -> None:
        """Enable a project (its ticked sessions are synced again)."""
        self._shares.setdefault(_pid(project_id), ProjectShare()).enabled = True
        self._sharing_changed()

    def disable(self, project_id: str) -> None:
        """Disable a project: no more syncs for it; its commands are re-check-cancelled."""
        self._share(project_id).enabled = False
        self._sharing_changed()

    def tick(self, project_id: str, session: SessionInfo | Mapping[str, Any]) -> None:
        """Tick one session for a project."""
        data = session_dict(session)
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

    def _to_sync(self, share: ProjectShare) -> list[dict[str, Any]]:
        """The ticked sessions a sync uploads (the relay's own dicts: encoded at once)."""
        return list(share.sessions.values())[: self.max_sessions]

    def _share(self, project_id: str) -> ProjectShare:
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

    def delivered_at(self, command_id: str) -> float | None:
        """When the completion of ``command_id`` was last delivered (a 2xx), if ever."""
        for event in reversed(self.events):
            if event.kind == "delivered" and event.command_id == command_id:
                return event.at
        return None

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
        self._refused = False
        try:
            self._flush_outbox()
            for lost in list(self.unanswered.values()):
                if not (self.running and self.online) or self._refused:
                    break
                yield from self._handle(lost.project_id, lost.command)
            for project_id, share in list(self._shares.items()):
                if not share.enabled:
                    continue
                if not self.online or self._refused:
                    break  # gone offline while the pass was running a command; R15
                try:
                    commands = self.client.sync(project_id, self._to_sync(share))
                except OsfClientError as err:
                    self._event("sync-failed", detail=f"{project_id}: {err}", error=err)
                    self._token_refused(err)
                    continue
                self._event("synced", detail=f"{project_id}: {len(commands)} queued")
                for command in commands:
                    if not (self.running and self.online) or self._refused:
                        break
                    command_id = command.get("command_id") if isinstance(command, Mapping) else None
                    if isinstance(command_id, str) and command_id in self.unanswered:
                        self._event("skipped", command_id, "its start was asked again this pass")
                        continue
                    yield from self._handle(project_id, command)
        finally:
            self._busy = False
            record.ended_at = self.clock.now()

    # ------------------------------------------------------------------ a command
    def _handle(self, project_id: str, command: Mapping[str, Any]) -> ProcessGen:
        """Run one queued command: refused if its id is no UUID (D15), skipped while its
        completion waits in the outbox, re-checked (D13), started, run with a control poll
        every ``control_poll`` seconds (D14), cancelled once when asked (D16), and its
        bounded completion (D18) delivered through the outbox (D17)."""
        is_mapping = isinstance(command, (dict, Mapping))  # dict first: no ABC check
        command_id = command.get("command_id") if is_mapping else None
        if not is_uuid(command_id):
            self._event("refused", detail=f"command id {command_id!r} is not a UUID (D15)")
            return
        assert isinstance(command_id, str)
        if self.outbox is not None and any(cid == command_id for cid, _ in self.outbox.items()):
            self._event("skipped", command_id, "its completion waits in the outbox")
            return
        lost = self.unanswered.get(command_id)
        execution_id = (
            lost.execution_id if lost else f"exec_{uuid4_hex(self._rng.getrandbits(128))}"
        )
        if not self._still_shared(project_id, command):
            self.unanswered.pop(command_id, None)
            self._event("recheck-cancelled", command_id, NO_LONGER_SHARED)
            self._complete(
                command_id,
                bounded_completion(
                    execution_id=execution_id, status=CANCELLED, error=NO_LONGER_SHARED
                ),
            )
            return
        try:
            status = self.client.start(command_id, execution_id)
        except OsfClientError as err:
            if not start_unanswered(err):
                self.unanswered.pop(command_id, None)
                self._event("start-refused", command_id, f"{err}: the command is dropped")
                return
            self.unanswered[command_id] = UnansweredStart(project_id, command, execution_id)
            self._event("start-unanswered", command_id, f"{err}: asked again next pass")
            self._token_refused(err)
            return
        self.unanswered.pop(command_id, None)
        if status != RUNNING:
            self._event("not-started", command_id, f"server answered {status!r}")
            return
        gsid = str(command.get("graph_session_id", ""))
        arguments = command.get("arguments")
        try:
            run = self.engine.start(
                gsid,
                dict(arguments) if isinstance(arguments, Mapping) else {},
                f"graph:external:{command_id}",
            )
        except (KeyError, TypeError, ValueError) as err:
            # The desktop could not start the Graph: report it instead of leaving the
            # run ``running`` on the server for ever.
            message = f"the desktop could not start the Graph: {err}"
            self._event("engine-refused", command_id, message)
            self._complete(
                command_id,
                bounded_completion(execution_id=execution_id, status=FAILED, error=message),
            )
            return
        self.executed.append(command_id)
        self.current = command_id
        self.current_run = run
        self._event("started", command_id, run.channel)
        cancelled = False
        poll = Wait(run.done, self.control_poll)  # immutable: one for every control poll
        try:
            while True:
                finished = yield poll
                if finished:
                    break
                if self._cancel_requested(command_id):
                    cancelled = True
                    run.cancel()
                    yield run.done
                    break
        finally:
            self.current = None
            self.current_run = None
        outcome = run.outcome
        assert outcome is not None
        body = bounded_completion(
            execution_id=execution_id,
            status=CANCELLED if cancelled else outcome.status,
            result=outcome.result if not cancelled and outcome.status == COMPLETED else None,
            total_tokens=outcome.total_tokens,
            reported_cost=outcome.reported_cost,
            error=outcome.error if not cancelled else None,
        )
        self._event("finished", command_id, body["status"])
        self._complete(command_id, body)

    def _still_shared(self, project_id: str, command: Mapping[str, Any]) -> bool:
        """D13: the project enabled, the session ticked, its slug unchanged."""
        share = self._shares.get(project_id)
        if share is None or not share.enabled:
            return False
        session = share.sessions.get(str(command.get("graph_session_id")))
        return session is not None and session["slug"] == command.get("slug")

    def _cancel_requested(self, command_id: str) -> bool:
        if not self.online:
            return False  # no control poll reaches the server while offline
        try:
            control = self.client.control(command_id)
        except OsfClientError as err:
            self._event("control-failed", command_id, str(err))
            self._token_refused(err)
            return False
        return bool(control.get("cancel_requested"))

    def _complete(self, command_id: str, body: dict[str, Any]) -> None:
        if self.outbox is not None:
            self.outbox.put(command_id, body)
        self._post(command_id, body)

    def _flush_outbox(self) -> None:
        if self.outbox is None:
            return
        for command_id, body in self.outbox.items():
            if self._refused:
                break  # R15: the rest waits for the next pass
            self._post(command_id, body)

    def _post(self, command_id: str, body: dict[str, Any]) -> None:
        if not self.online:
            if self.outbox is None:
                self._event("complete-lost", command_id, "offline, and there is no outbox")
            else:
                self._event("complete-held", command_id, "offline: it waits in the outbox")
            return
        try:
            self.client.complete(command_id, body)
        except HttpStatusError as err:
            self._event("complete-refused", command_id, f"HTTP {err.status}")
            self._token_refused(err)
            return
        except OsfClientError as err:
            self._event("complete-lost", command_id, str(err))
            return
        if self.outbox is not None:
            self.outbox.remove(command_id)
        self._event("delivered", command_id, body["status"])

    def _token_refused(self, err: OsfClientError) -> bool:
        """R15: whether ``err`` is the desktop token refused (401, 403). If so the pass
        sends nothing more (:attr:`_refused`), and the first refusal of the pass is
        logged as a ``token-refused`` event."""
        if not token_refused(err):
            return False
        if not self._refused:
            self._refused = True
            self._event(
                "token-refused",
                detail=f"HTTP {err.status}: the desktop token is refused; nothing more is "
                "sent this pass, the outbox is kept, the next pass tries again",
            )
        return True

    def _event(
        self,
        kind: str,
        command_id: str | None = None,
        detail: str = "",
        error: OsfClientError | None = None,
    ) -> None:
        event = RelayEvent(self.clock.now(), kind, command_id, detail, error)
        self.events.append(event)
        log.info("%s %s %s", kind, command_id or "-", detail)
        for listener in self._listeners:
            listener(event)
