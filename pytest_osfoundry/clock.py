"""Time for everything in the kit: a virtual clock with a scheduler, and a real one.

Both clocks share one interface:

* :meth:`Clock.now` — seconds since the Unix epoch (a float).
* :meth:`Clock.call_at` / :meth:`Clock.call_later` — run a callable at a time.
* :meth:`Clock.spawn` — run a *process*: a generator that yields what it waits for.
  A process may yield a number (sleep that many seconds), a :class:`Signal` (wait
  until it is set; resumes with ``True``) or a :class:`Wait` (a signal with a timeout;
  resumes with ``True`` if the signal fired, ``False`` on timeout).

On the :class:`VirtualClock` nothing sleeps: :meth:`VirtualClock.advance` and
:meth:`VirtualClock.run_until` run every due event in time order, ties in the order
they were scheduled. The :class:`RealClock` runs the same events on wall-clock time
from :meth:`RealClock.run`, so one relay implementation serves both.

This is the public module; the clocks live in :mod:`pytest_osfoundry._clock_process`
(the process helpers), :mod:`pytest_osfoundry._clock_scheduler` (the protocol and
the shared queue), :mod:`pytest_osfoundry._clock_virtual` and
:mod:`pytest_osfoundry._clock_real`.
"""

from __future__ import annotations

from pytest_osfoundry._clock_process import Process, ProcessGen, Signal, Timer, Wait
from pytest_osfoundry._clock_real import RealClock
from pytest_osfoundry._clock_scheduler import Clock
from pytest_osfoundry._clock_virtual import DEFAULT_START, VirtualClock

__all__ = [
    "DEFAULT_START",
    "Clock",
    "Process",
    "ProcessGen",
    "RealClock",
    "Signal",
    "Timer",
    "VirtualClock",
    "Wait",
]
