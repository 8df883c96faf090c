"""Desktop outages and deaths, scheduled on the kit's clock (not transport faults).

:func:`schedule_offline` takes a relay offline for a window of (virtual) time (asleep,
or its network gone); :func:`schedule_death` kills its process at a chosen time, with
whatever it holds (:class:`Death` records what that was). Both act on a
:class:`~pytest_osfoundry.relay.FakeRelay` through its clock, never on its requests:
what a request meets on the way is :mod:`pytest_osfoundry.faults._transport`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_osfoundry._checks import check_flag, check_number, check_seconds
from pytest_osfoundry.clock import Clock, ProcessGen

if TYPE_CHECKING:
    from pytest_osfoundry.relay import FakeRelay
    from pytest_osfoundry.relay._internal import OfflineMode

__all__ = ["Death", "schedule_death", "schedule_offline"]


def schedule_offline(
    clock: Clock,
    relay: FakeRelay,
    at: float,
    duration: float,
    *,
    mode: OfflineMode = "asleep",
    keep_phase: bool = False,
) -> None:
    """Take ``relay`` offline at absolute time ``at`` for ``duration`` seconds.

    Meanwhile it reaches the server for nothing (no sync, start, control poll or
    completion). ``mode="asleep"`` (the default): the machine sleeps, and a Graph it is
    running stands still until it wakes; ``mode="network"``: awake with its network
    gone, the Graph runs on and its completion waits in the outbox
    (:meth:`~pytest_osfoundry.relay.FakeRelay.go_offline`). It passes the moment it is
    back, unless ``keep_phase``: then its timer keeps its phase through the outage and
    the first pass is its next tick.
    """
    from pytest_osfoundry.relay._internal import check_offline_mode

    start = check_number(at, "at")
    length = check_seconds(duration, "duration")
    how = check_offline_mode(mode)
    check_flag(keep_phase, "keep_phase")
    clock.call_at(start, lambda: relay.go_offline(mode=how, keep_phase=keep_phase))
    clock.call_at(start + length, relay.go_online)


# ---------------------------------------------------------------------- the desktop dies
@dataclass(frozen=True)
class Death:
    """What a relay held when it died (see :func:`schedule_death`).

    ``running``: the command it was running (left ``running`` on the server for
    good); ``outbox_kept``: completions not yet delivered that survive in its file
    outbox (a relay started later on the same file re-sends them);
    ``outbox_lost``: those that died with an in-memory outbox.
    """

    at: float
    running: str | None
    outbox_kept: tuple[str, ...]
    outbox_lost: tuple[str, ...]


class _MortalClock:
    """The relay's view of the clock: its processes end silently once it is dead."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.dead = False

    def start(self, gen: ProcessGen, name: str = "") -> Any:
        return self._clock.start(self._mortal(gen), name)

    def spawn(self, gen: ProcessGen, name: str = "", delay: float = 0.0) -> Any:
        return self._clock.spawn(self._mortal(gen), name, delay)

    def _mortal(self, gen: ProcessGen) -> ProcessGen:
        """``gen``, closed (its ``finally`` blocks run, nothing else) when it would resume
        after the death."""
        sent: Any = None
        while True:
            try:
                item = gen.send(sent)
            except StopIteration as stop:
                return stop.value
            sent = yield item
            if self.dead:
                gen.close()
                return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._clock, name)


def schedule_death(clock: Clock, relay: FakeRelay, at: float) -> list[Death]:
    """Kill ``relay``'s process at absolute time ``at``, with whatever it holds.

    From then on it makes no request at all: no pass, no control poll, no
    completion, no outbox re-send. The command it was running stays ``running`` on
    the server for good (the documented relay has no lease; SPEC D11), and the
    Graph it ran stops with it. Completions still in its outbox survive only if the
    outbox is a :class:`~pytest_osfoundry.relay._outbox.FileOutbox` (a relay started
    later on the same file delivers them); an in-memory outbox is emptied.

    Call it before the passes it should end begin (the world does so when built).
    Returns a list that holds the :class:`Death` record once it happened.
    """
    when = check_number(at, "at")
    from pytest_osfoundry.relay import FileOutbox, RelayEvent

    mortal = _MortalClock(relay.clock)
    relay.clock = mortal
    record: list[Death] = []

    def die() -> None:
        mortal.dead = True
        running, handle = relay.current, relay.current_run
        relay.stop()
        relay.online = False
        if handle is not None:
            handle.cancel()  # the Graph dies with the desktop process
        pending = tuple(command_id for command_id, _ in (relay.outbox or _NoOutbox()).items())
        kept = pending if isinstance(relay.outbox, FileOutbox) else ()
        if relay.outbox is not None and not kept:
            for command_id in pending:
                relay.outbox.remove(command_id)
        death = Death(clock.now(), running, kept, () if kept else pending)
        record.append(death)
        relay.events.append(
            RelayEvent(clock.now(), "died", running, f"{len(pending)} completion(s) pending")
        )

    clock.call_at(when, die)
    return record


class _NoOutbox:
    def items(self) -> list[tuple[str, Any]]:
        return []
