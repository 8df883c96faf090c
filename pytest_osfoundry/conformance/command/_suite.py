"""The run's part of a suite that drives an outside command: what every check shares.

:class:`CommandSuite` is what the relay and agent suites' run objects have in common:
the contexts their checks opened (each closed with the run), the Ctrl-C flag that
wakes every check's wait, and the watch on the suite's own process
(:attr:`CommandSuite.stalls`): it asks to wake every :data:`STALL_TICK` seconds, and a
wake-up more than :data:`STALL_LATE` late is a stall (a GIL hand-off or a busy core is
less). An upper bound on the command's lateness ("no gap over N intervals") is judged
less the stalls within it: on a machine too busy to run the suite on time, the command
it drives is kept waiting too, and the suite stamps each request only when it gets to
run. A command late while the suite runs on time is not excused; lower bounds and
medians are judged as measured.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from pytest_osfoundry._lateness import LatenessProbe
from pytest_osfoundry.conformance.command._process import kill_all

__all__ = ["STALL_LATE", "STALL_TICK", "CommandSuite"]

STALL_TICK = 0.01
STALL_LATE = 0.05


class _Closes(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closes)


class CommandSuite(Generic[C]):
    """The contexts, the Ctrl-C flag and the stall watch of one run (see the module);
    ``wake_all()`` wakes every wait on the suite's server."""

    def __init__(self, wake_all: Callable[[], None], *, thread: str) -> None:
        self.interrupted = threading.Event()
        """Set by :meth:`interrupt`: every check's wait ends at once."""
        self.stalls = LatenessProbe(STALL_TICK, late=STALL_LATE, now=time.time)
        """When the suite's own process was kept from running, in ``time.time``, the
        epoch the server stamps requests in."""
        threading.Thread(target=self.stalls.run, name=thread, daemon=True).start()
        self._wake_all = wake_all
        self._live: set[C] = set()
        self._lock = threading.Lock()

    def _opened(self, conf: C) -> C:
        """``conf``, kept to be closed with the run."""
        with self._lock:
            self._live.add(conf)
        return conf

    def closed(self, conf: C) -> None:
        """``conf`` has closed: the run no longer closes it."""
        with self._lock:
            self._live.discard(conf)

    def interrupt(self) -> None:
        """Ctrl-C: kill every command at once and wake every check's wait, which raises
        :class:`~pytest_osfoundry.conformance.scheduling._waits.Interrupted`."""
        self.interrupted.set()
        kill_all()
        self._wake_all()

    def close(self) -> None:
        """Close what the checks left open; stop the stall watch."""
        with self._lock:
            live = list(self._live)
        for conf in live:
            conf.close()
        self.stalls.stop()
