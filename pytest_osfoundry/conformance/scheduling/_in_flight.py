"""Saying when concurrency may be why a check got no answer (issue 23, item 5).

Under ``--osf-concurrency N`` the suite holds up to ``N`` requests open at once. A
server with a small listen backlog or worker pool may then refuse or reset
connections, and a check failing with "no reply" reads as a server defect. This
module tells that case apart without retrying anything:

* :class:`InFlight` counts the checks running at this moment (the concurrent runner
  enters it around each pre-run check);
* :func:`amend` adds :func:`hint` to the message of a check that failed at the
  connection level (:class:`~pytest_osfoundry.client.ConnectionLost`: refused or
  reset before any answer) while other checks were in flight, naming the concurrency
  and the option that lowers it;
* :func:`summary_line` says it once more under the run's summary, listing those checks.

A check that failed so while running alone (serially, or an exclusive check) gets no
hint: concurrency cannot be its cause.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from pytest_osfoundry.client import ConnectionLost

__all__ = ["MARK", "InFlight", "amend", "connection_failure", "hint", "summary_line"]

MARK = "concurrency may be the cause"
"""The phrase every hint carries: how the summary finds the checks that got one."""


class InFlight:
    """How many checks are running right now (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    @contextmanager
    def running(self) -> Iterator[None]:
        """Count one check as in flight for the ``with`` block."""
        with self._lock:
            self._count += 1
        try:
            yield
        finally:
            with self._lock:
                self._count -= 1

    @contextmanager
    def idle(self) -> Iterator[None]:
        """Count the caller's check as not in flight for the ``with`` block (while it
        waits for the others at its stage, sending nothing)."""
        with self._lock:
            self._count -= 1
        try:
            yield
        finally:
            with self._lock:
                self._count += 1

    @property
    def count(self) -> int:
        """The checks in flight now, the caller's own included."""
        with self._lock:
            return self._count


def connection_failure(error: BaseException | None) -> ConnectionLost | None:
    """The refused or reset connection ``error`` is, or was raised from; else ``None``."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, ConnectionLost):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def hint(others: int, concurrency: int) -> str:
    """The words added to a check's message: ``others`` checks were in flight."""
    checks = "check was" if others == 1 else "checks were"
    return (
        f"{MARK}: the connection was refused or reset before any answer while {others} "
        f"other {checks} in flight (--osf-concurrency {concurrency}); a server with a "
        "small listen backlog or worker pool does that under load: run again with a "
        "lower --osf-concurrency (1 runs the checks one at a time) to tell"
    )


def amend(error: BaseException | None, others: int, concurrency: int) -> bool:
    """Append :func:`hint` to ``error``'s message if it failed at the connection level
    while ``others`` (at least one) other checks were in flight; whether it did.

    The exception keeps its type and traceback: only its message grows, so the
    check's report line, its JSON entry and pytest's own summary all carry the hint.
    """
    lost = connection_failure(error)
    if error is None or lost is None or others < 1 or MARK in str(error):
        return False
    words = hint(others, concurrency)
    first, *rest = [str(a) for a in error.args] or [""]
    error.args = (f"{first} ({words})", *rest)
    if isinstance(getattr(error, "message", None), str):  # ReplyLost keeps it apart
        error.message = error.args[0]  # type: ignore[attr-defined]
    return True


def summary_line(messages: Iterable[tuple[str, str]], concurrency: int) -> str | None:
    """The line under the run's summary naming the checks whose message carries the
    hint (``(check_id, message)`` pairs) and the run's ``concurrency``, or ``None``
    when no message does."""
    ids = [check_id for check_id, message in messages if MARK in message]
    if not ids:
        return None
    checks = "check" if len(ids) == 1 else "checks"
    return (
        f"{len(ids)} {checks} got no answer at the connection level while other checks "
        f"were in flight ({', '.join(ids)}): {MARK} (--osf-concurrency {concurrency}), "
        "not the server's logic; run them again with a lower --osf-concurrency "
        "(--osf-concurrency 1 runs the checks one at a time)"
    )
