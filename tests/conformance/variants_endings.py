"""A server that presses Ctrl-C itself, for the tests of how a stopped run ends.

Factories for ``--osf-target=embedded:tests.conformance.variants_endings:NAME``.
:func:`ctrl_c_at_once` presses it at the first request (the preflight's), holding
every answer. :func:`ctrl_c_at_the_race` answers as the reference server does, until a third
``run_graph_session`` call with one idempotency key arrives: the race of
``R5-concurrent-same-key`` (eight callers, one key; no other check sends a key more
than twice), which runs alone once every other check of the batch has ended (the
wire-schema checks wait for it). Then it interrupts the main thread, as Ctrl-C would,
and holds the race's later answers until :data:`RELEASE` is set (or for :data:`HOLD`
seconds): so when Ctrl-C comes, every pool check has ended, the race is in flight,
and the ``last`` checks wait.
"""

from __future__ import annotations

import signal
import threading
from collections import Counter

from pytest_osfoundry.http import Request, Response
from tests.conformance.osf_variant_kit import Wrapped, tool_call

__all__ = [
    "HOLD",
    "RACE_CALL",
    "RELEASE",
    "ctrl_c_at_once",
    "ctrl_c_at_the_race",
    "interrupt_main_thread",
]

HOLD = 60.0
"""The longest a held answer waits (far beyond what a stopped run may take)."""
RELEASE = threading.Event()
"""Set by the test once the run is over: the held answers go out."""
RACE_CALL = 3
"""The call with one key that presses Ctrl-C (and from which on answers are held)."""


def interrupt_main_thread() -> None:
    """What Ctrl-C does: SIGINT to the main thread (a call it is blocked in returns)."""
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


class _CtrlCAtTheRace(Wrapped):
    def __init__(self) -> None:
        super().__init__()
        self._keys: Counter[str] = Counter()
        self._keys_lock = threading.Lock()

    def __call__(self, request: Request, /) -> Response:
        call = tool_call(request)
        key = call[1].get("idempotency_key") if call and call[0] == "run_graph_session" else None
        if isinstance(key, str):
            with self._keys_lock:
                self._keys[key] += 1
                seen = self._keys[key]
            if seen == RACE_CALL:
                interrupt_main_thread()
            if seen >= RACE_CALL:
                RELEASE.wait(HOLD)
        return super().__call__(request)


class _CtrlCAtOnce(Wrapped):
    def __init__(self) -> None:
        super().__init__()
        self._first = threading.Lock()

    def __call__(self, request: Request, /) -> Response:
        if self._first.acquire(blocking=False):
            interrupt_main_thread()
        RELEASE.wait(HOLD)
        return super().__call__(request)


def ctrl_c_at_once() -> Wrapped:
    """Ctrl-C at the first request (the preflight's); every answer held meanwhile."""
    return _CtrlCAtOnce()


def ctrl_c_at_the_race() -> Wrapped:
    """Ctrl-C when ``R5-concurrent-same-key`` races; its answers held meanwhile."""
    return _CtrlCAtTheRace()
