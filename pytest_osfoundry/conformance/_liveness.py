"""Ending the run early when the target stops answering altogether.

Each exchange is bounded (``--osf-timeout``), so a target that stops answering
costs one time-out per request: minutes for the whole suite, with the same failure
repeated a hundred times. :func:`watch` wraps a check's transport and counts the
exchanges that ran out of time in a row, across checks. Once :data:`STREAK`
exchanges in a row, spread over at least two checks, got no answer, the target is
declared gone: every later exchange fails at once with one message saying so, and
:func:`stop_if_gone` turns that into pytest's ``shouldfail`` so the run ends after
the check in hand (exit status 1, the message printed once as the reason).

Any answer at all (any status) resets the count; an exchange that failed another
way (a refused connection, a response too large) does not count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from pytest_osfoundry.client import DeadlineExceeded, Transport
from pytest_osfoundry.http import Response

__all__ = ["STREAK", "Liveness", "liveness_of", "stop_if_gone", "watch"]

STREAK = 3
"""Exchanges in a row without an answer (over two checks or more) that end the run."""


@dataclass
class Liveness:
    """What the suite knows about whether one target still answers."""

    streak: int = 0
    checks: set[int] = field(default_factory=set)
    gone: str | None = None
    """Why the target is considered gone (``None`` while it answers)."""

    def answered(self) -> None:
        """An answer came back: the target is alive."""
        self.streak = 0
        self.checks.clear()

    def timed_out(self, check: int, error: DeadlineExceeded) -> None:
        """One more exchange of check ``check`` ran out of time."""
        self.streak += 1
        self.checks.add(check)
        if self.streak >= STREAK and len(self.checks) >= 2 and self.gone is None:
            self.gone = (
                f"the target stopped answering: {self.streak} requests in a row over "
                f"{len(self.checks)} checks got no answer (last: {error.message}); "
                "the remaining checks were not run"
            )


_ATTRIBUTE = "_osf_liveness"


def liveness_of(target: object) -> Liveness:
    """The :class:`Liveness` record of ``target``, kept on it (made on first use)."""
    record = getattr(target, _ATTRIBUTE, None)
    if not isinstance(record, Liveness):
        record = Liveness()
        setattr(target, _ATTRIBUTE, record)
    return record


class _Watched:
    """A check's transport, reporting answers and time-outs to the target's record."""

    def __init__(self, inner: Transport, record: Liveness) -> None:
        self.inner = inner
        self.record = record

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        if self.record.gone is not None:
            raise DeadlineExceeded(self.record.gone, url=None)
        try:
            reply = self.inner.request(method, url, headers, body)
        except DeadlineExceeded as err:
            self.record.timed_out(id(self), err)
            raise
        self.record.answered()
        return reply

    def __repr__(self) -> str:
        return f"{self.inner!r} (watched)"


def watch(target: object, inner: Transport) -> Transport:
    """``inner``, watched for ``target`` going silent (one wrapper per check)."""
    return _Watched(inner, liveness_of(target))


def stop_if_gone(session: pytest.Session, target: object) -> None:
    """End the run after this check if ``target`` stopped answering."""
    record = getattr(target, _ATTRIBUTE, None)
    if isinstance(record, Liveness) and record.gone is not None and not session.shouldfail:
        session.shouldfail = record.gone
