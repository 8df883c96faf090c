"""The process helpers of the kit's clocks: Signal, Wait, Timer and Process.

A *process* is a generator run by a clock (:class:`~pytest_osfoundry.clock.Clock`):
it yields a number (sleep that many seconds), a :class:`Signal` (wait until it is
set; resumes with ``True``) or a :class:`Wait` (a signal with a timeout; resumes with
``True`` if the signal fired, ``False`` on timeout); anything else is a ``TypeError``
naming the process. A :class:`Timer` is both the handle on a scheduled call and the
scheduler's record of it. Import these from :mod:`pytest_osfoundry.clock`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias

from pytest_osfoundry._checks import check_seconds, is_number

if TYPE_CHECKING:
    from pytest_osfoundry._clock_scheduler import _Scheduler

__all__ = ["Process", "ProcessGen", "Signal", "Timer", "Wait", "Yieldable", "check_delay"]


class Signal:
    """A one-shot flag a process can wait on. :meth:`set` wakes every waiter once."""

    __slots__ = ("_clock", "_waiters", "is_set", "value")

    def __init__(self, clock: _Scheduler) -> None:
        self._clock = clock
        self._waiters: list[Callable[[bool], None]] = []
        self.is_set = False
        self.value: Any = None

    def set(self, value: Any = None) -> None:
        """Set the flag (idempotent) and resume every waiting process at the current time."""
        if self.is_set:
            return
        self.is_set = True
        self.value = value
        waiters, self._waiters = self._waiters, []
        clock = self._clock
        for wake in waiters:
            clock._schedule(clock.now(), partial(wake, True))

    def _add_waiter(self, wake: Callable[[bool], None]) -> None:
        self._waiters.append(wake)

    def _remove_waiter(self, wake: Callable[[bool], None]) -> None:
        # Not contextlib.suppress: it costs more than the removal itself.
        try:  # noqa: SIM105
            self._waiters.remove(wake)
        except ValueError:  # already woken: nothing to remove
            pass


@dataclass(frozen=True)
class Wait:
    """Yielded by a process: wait for ``signal`` at most ``timeout`` seconds."""

    signal: Signal
    timeout: float

    def __post_init__(self) -> None:
        if not isinstance(self.signal, Signal):
            raise TypeError(f"Wait needs a Signal (clock.signal()), got {self.signal!r}")
        check_delay(self.timeout, "Wait.timeout")


Yieldable: TypeAlias = float | int | Signal | Wait
ProcessGen: TypeAlias = Generator[Yieldable, Any, Any]


class Timer:
    """A handle on a scheduled call; :meth:`cancel` stops it from running.

    It is also the scheduler's own record of the call (``when``, ``fn``,
    ``cancelled``: read them, do not set them), so scheduling allocates one object.
    """

    __slots__ = ("cancelled", "fn", "when")

    def __init__(self, when: float, fn: Callable[[], None]) -> None:
        self.when = when
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        """Do not run the call (no effect once it has run)."""
        self.cancelled = True


class Process:
    """A running generator process. ``done`` is set with its return value when it ends."""

    def __init__(self, clock: _Scheduler, gen: ProcessGen, name: str = "") -> None:
        self._clock = clock
        self._gen = gen
        self.name = name
        self.done = Signal(clock)
        self.error: BaseException | None = None
        self._timer: Timer | None = None
        # Made once: every sleep reuses them. They refer back to the process, so
        # _release() drops them when it ends (no reference cycle is left for the
        # garbage collector to find).
        self._resume: Callable[[], None] = partial(self._step, None)
        self._fired: Callable[[], None] = partial(self._step, True)

    @property
    def finished(self) -> bool:
        """True once the generator has returned (or raised)."""
        return self.done.is_set

    def _step(self, value: Any) -> None:
        if self.done.is_set:
            return
        try:
            item = self._gen.send(value)
        except StopIteration as stop:
            self._release()
            self.done.set(stop.value)
            return
        except BaseException as exc:
            self._release()
            self.error = exc
            self.done.set(None)
            raise
        clock = self._clock
        if (type(item) is float or type(item) is int) and item >= 0:  # the common case: a sleep
            self._timer = clock._schedule(clock.now() + item, self._resume)
            return
        self._wait_for(item)

    def _wait_for(self, item: Yieldable) -> None:
        clock = self._clock
        if isinstance(item, Signal):
            if item.is_set:
                clock._schedule(clock.now(), self._fired)
            else:
                item._add_waiter(self._step)
            return
        if isinstance(item, Wait):
            sig = item.signal
            if sig.is_set:
                clock._schedule(clock.now(), self._fired)
                return
            _Waiting(self, sig, item.timeout)
            return
        if is_number(item):
            self._timer = clock._schedule(clock.now() + check_delay(item), self._resume)
            return
        raise TypeError(
            f"process {self.name or self._gen!r} yielded {item!r}; "
            "yield a number of seconds, a Signal or a Wait(signal, timeout)"
        )

    def cancel(self) -> None:
        """Stop the process where it waits; ``done`` is set with ``None``."""
        if self.done.is_set:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._release()
        self._gen.close()
        self.done.set(None)

    def _release(self) -> None:
        self._timer = None
        self._resume = self._fired = _nothing


def _nothing() -> None:
    """What a finished process's wake-ups do."""


_SPENT = Timer(0.0, _nothing)
_SPENT.cancelled = True


class _Waiting:
    """A process waiting on a :class:`Wait`: whichever of signal and timeout comes first wins.

    It is itself the signal's waiter (called with ``True``), so that removing it on a
    timeout finds it by identity.
    """

    __slots__ = ("fired", "proc", "signal", "timer")

    def __init__(self, proc: Process, signal: Signal, timeout: float) -> None:
        self.proc = proc
        self.signal = signal
        self.fired = False
        clock = proc._clock
        self.timer = clock._schedule(clock.now() + timeout, self.on_timeout)
        signal._add_waiter(self)

    def __call__(self, _: bool) -> None:
        """The signal fired first."""
        if self.fired:
            return
        self.fired = True
        self.timer.cancel()
        self.timer = _SPENT  # the cancelled timer refers back to us: no cycle
        self.proc._step(True)

    def on_timeout(self) -> None:
        if self.fired:
            return
        self.fired = True
        self.timer = _SPENT
        self.signal._remove_waiter(self)
        self.proc._step(False)


def check_delay(seconds: object, name: str = "a delay") -> float:
    """A delay may be ``inf`` (never), never negative or NaN."""
    return check_seconds(seconds, name, finite=False)
