"""Where an exclusive or ``last`` check waits under ``--osf-concurrency``.

A concurrent batch runs its ordinary checks in a pool. An ``exclusive`` check's
evidence needs the target to itself (a race whose calls must overlap each other
only, latencies); a ``last`` check judges what every other check received. Waiting
outside their body (the exclusive ones one by one after the pool, then the ``last``
ones), they would cost a far-away server's run every round trip of their chains,
set-up included (R5-concurrent-same-key's sync and clients, the wire-schema checks'
own requests).

So each of them gets a :class:`Stage` and a thread of its own when the batch starts,
and waits only where its evidence needs it:

* :meth:`Stage.alone` -- a stretch with the target to itself: it begins when every
  other check of the batch has ended or is waiting at a stage (nothing is left to
  start in the pool), one stretch at a time;
* :meth:`Stage.after_the_rest` -- returns when every check of the batch that is not
  ``last`` has ended.

The batch's concurrency still bounds how many checks work at once: every check holds
one of the batch's ``slots`` while it runs (:meth:`Stage.running`), and lets it go
while it waits at a stage, so those threads never add to what the server sees.

A check declared ``waits_within=True`` calls these itself around the part that needs
them (R5 races alone, its sync and clients made beforehand; a wire-schema check sends
its own requests at once and waits only to judge). Any other exclusive or ``last``
check is wrapped whole, as before. A check that is neither cannot wait: nothing is
left over to make room for it. Outside a concurrent batch (``--osf-concurrency 1``,
a check's own pytest call) every stage is one of :func:`no_stage`, whose waits return at
once: collection order already puts the checks where they must be.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Literal

__all__ = ["Interrupted", "Stage", "Stages", "Treatment", "no_stage"]

Treatment = Literal["pool", "alone", "last"]
"""How a batch runs a check: in the pool, as an exclusive one, as a ``last`` one."""


Idle = Callable[[], AbstractContextManager[object]]
"""A context a waiting check is inside of while it waits."""


class Interrupted(BaseException):
    """The run is stopping (Ctrl-C, the target gone) while a check waited at its stage
    or went on working: what it did is not a result.

    A :class:`BaseException`, like :class:`KeyboardInterrupt`, so that a check catching
    ``Exception`` never turns the stop into a failure of its own."""


class Stages:
    """The waits of one concurrent batch.

    Every check of the batch :meth:`join`\\ s before any of them starts and reports its
    end through its :class:`Stage` (:meth:`Stage.ended`), whatever happened, so a
    wait can tell "nothing else is left" from "not started yet". :meth:`abort` wakes
    every waiter with :class:`Interrupted`.
    """

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"a batch needs at least 1 slot, got {slots!r}")
        self._slots = threading.BoundedSemaphore(slots)
        """How many checks may work at once (the batch's concurrency)."""
        self._cond = threading.Condition()
        self._busy = 0
        """Checks not ended and not waiting at a stage (queued ones included)."""
        self._before_last = 0
        """Checks not ended that are not ``last``."""
        self._alone = False
        """Whether a stretch alone is on."""
        self._aborted = False

    def join(self, treatment: Treatment) -> Stage:
        """A stage for one check of the batch, counted from now until it ends."""
        with self._cond:
            self._busy += 1
            if treatment != "last":
                self._before_last += 1
        return Stage(self, treatment)

    def abort(self) -> None:
        """Wake every waiting check with :class:`Interrupted`; later waits raise too."""
        with self._cond:
            self._aborted = True
            self._cond.notify_all()

    # ------------------------------------------------------------------ for Stage
    def _wait_until(self, ready: Callable[[], bool], idle: Idle) -> None:
        """Wait, not counted as busy nor in ``idle``'s count, until ``ready()`` holds
        (under the condition)."""
        self._busy -= 1
        self._cond.notify_all()  # one fewer busy: an alone stretch may begin now
        try:
            with idle():
                while not self._aborted and not ready():
                    self._cond.wait()
        finally:
            self._busy += 1
        if self._aborted:
            raise Interrupted("the run was interrupted while this check waited for the others")

    def _nobody_else(self) -> bool:
        return self._busy == 0 and not self._alone

    def _rest_ended(self) -> bool:
        return self._before_last == 0

    @contextmanager
    def _alone_stretch(self, idle: Idle) -> Iterator[None]:
        with self._cond:
            self._wait_until(self._nobody_else, idle)
            self._alone = True
        try:
            yield
        finally:
            with self._cond:
                self._alone = False
                self._cond.notify_all()

    def _after_the_rest(self, idle: Idle) -> None:
        with self._cond:
            self._wait_until(self._rest_ended, idle)

    def _ended(self, treatment: Treatment) -> None:
        with self._cond:
            self._busy -= 1
            if treatment != "last":
                self._before_last -= 1
            self._cond.notify_all()


class Stage:
    """One check's place in its batch (see the module's text); made by :meth:`Stages.join`."""

    def __init__(self, stages: Stages | None, treatment: Treatment) -> None:
        self._stages = stages
        self.treatment: Treatment = treatment
        self.idle: Idle = nullcontext
        """What the check's waits are counted as idle by (the runner's count of checks in
        flight, once the check's body runs: see
        :class:`~pytest_osfoundry.conformance.scheduling._in_flight.InFlight`)."""
        self.waited = False
        """Whether the check has waited at this stage (entered :meth:`alone` or
        returned from :meth:`after_the_rest`)."""
        self._ended = False
        self._inside = False
        self._holding = False
        """Whether the check holds one of the batch's slots now."""

    @contextmanager
    def running(self) -> Iterator[None]:
        """Hold one of the batch's slots while the check works (it waits for one first);
        its waits at this stage let the slot go meanwhile."""
        if self._stages is None:
            yield
            return
        self._take_slot()
        try:
            yield
        finally:
            self._let_slot_go()

    @contextmanager
    def alone(self) -> Iterator[None]:
        """A stretch with the target to itself: begins once every other check of the
        batch has ended or waits at a stage, and no other stretch is on. Re-entrant: a
        stretch inside the check's own stretch is part of it."""
        if self._stages is None or self._inside:
            self.waited = True
            yield
            return
        held = self._let_slot_go()
        with self._stages._alone_stretch(self.idle):
            if held:  # a slot is free: nobody else works now
                self._take_slot()
            self.waited = True
            self._inside = True
            try:
                yield
            finally:
                self._inside = False

    def after_the_rest(self) -> None:
        """Return once every check of the batch that is not ``last`` has ended."""
        if self._stages is not None:
            held = self._let_slot_go()
            self._stages._after_the_rest(self.idle)
            if held:
                self._take_slot()
        self.waited = True

    def _take_slot(self) -> None:
        assert self._stages is not None
        self._stages._slots.acquire()
        self._holding = True

    def _let_slot_go(self) -> bool:
        """Let the check's slot go; whether it held one."""
        if not self._holding or self._stages is None:
            return False
        self._holding = False
        self._stages._slots.release()
        return True

    def ended(self) -> None:
        """The check has ended (called once, by the runner; later calls do nothing)."""
        if self._stages is not None and not self._ended:
            self._ended = True
            self._stages._ended(self.treatment)


def no_stage() -> Stage:
    """The stage of a check outside a concurrent batch: its waits return at once."""
    return Stage(None, "pool")
