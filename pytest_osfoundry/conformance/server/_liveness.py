"""Telling a target that is gone from one that hangs on one request.

Each exchange is bounded (``--osf-timeout``). A request that runs out of time fails
its check with the transport's message ("no answer within N s ..."); that alone says
nothing about the rest of the target: a server may hang on one tool and answer
everything else. So the target is declared *gone* only when a separate cheap probe
that needs no tool and no credential -- a ``tools/list`` JSON-RPC request to the MCP
endpoint, where any HTTP answer at all (any status) counts -- also gets no answer
within the deadline.

:func:`watch` wraps a check's transport. When one of its exchanges runs out of time:

* if any exchange (of any check) got an answer after this one was sent, the target
  is alive and nothing more is done;
* otherwise one probe is sent (one at a time: checks timing out together share it);
  an answer proves the target alive, no answer declares it gone.

The exchange whose time-out found the target gone fails its check, with a message
saying how long the target was waited for in all (the request's deadline, then the
probe's). Every other exchange from then on -- and each that timed out meanwhile --
raises :class:`~pytest_osfoundry.conformance.scheduling._waits.Interrupted` at once: its check
did not run to an end, so it is reported as not run, not failed. Code that takes a
failed exchange as an answer ("no answer: not served") asks
:func:`no_answer_unless_gone` first, so the finding time-out is not swallowed. :func:`stop_if_gone`
turns that into pytest's ``shouldfail``, so the run ends after the check in hand
(exit status 1, the message printed once, every check not reached reported as not
run by :mod:`~pytest_osfoundry.conformance.reporting._outcome`); a concurrent batch stops the
same way (:mod:`~pytest_osfoundry.conformance.scheduling._runner`).

:meth:`Liveness.stop` is the other end: once the run is stopping (Ctrl-C), every
later exchange raises ``Interrupted`` before anything is sent, so a check in the
middle of its work ends at its next request (its clean-up included: nothing more
reaches the target).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from pytest_osfoundry.client import DeadlineExceeded, OsfClientError, Transport
from pytest_osfoundry.client._internal import ACCEPT, request_body
from pytest_osfoundry.conformance.scheduling._internal import Interrupted
from pytest_osfoundry.http import Response

__all__ = [
    "PROBE_BODY",
    "Liveness",
    "liveness_of",
    "no_answer_unless_gone",
    "stop_if_gone",
    "watch",
]

PROBE_BODY = request_body("tools/list", None, "osf-liveness-probe")
"""What the liveness probe posts: a ``tools/list`` request (no tool, no token)."""
_PROBE_HEADERS = {
    "Content-Type": "application/json",
    "Accept": ACCEPT,
}


@dataclass
class Liveness:
    """What the suite knows about whether one target still answers."""

    url: str = ""
    """The MCP endpoint the probe is posted to."""
    last_answer: float = float("-inf")
    """When (``time.monotonic``) the latest answer of any exchange arrived."""
    probes: int = 0
    """Probes sent so far."""
    gone: str | None = None
    """Why the target is considered gone (``None`` while it answers)."""
    stopping: bool = False
    """Whether the run is stopping (Ctrl-C): no request is sent any more."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def stop(self) -> None:
        """The run is stopping: every later exchange raises ``Interrupted`` unsent."""
        self.stopping = True

    def answered(self) -> None:
        """An answer came back: the target is alive."""
        self.last_answer = time.monotonic()

    def timed_out(self, sent: float, error: DeadlineExceeded, transport: Transport) -> bool:
        """An exchange sent at ``sent`` ran out of time; probe the target (through
        ``transport``) unless something answered since. Whether the time-out is the
        exchange's own finding (its check fails with it): false when the target was
        found gone meanwhile, by another exchange's probe."""
        if self.gone is not None:
            return False
        if self.last_answer > sent:
            return True
        with self._lock:  # checks timing out together wait for one probe
            if self.gone is not None:
                return False
            if self.last_answer > sent:
                return True
            self.probes += 1
            try:
                transport.request("POST", self.url, _PROBE_HEADERS, PROBE_BODY)
            except OsfClientError as probe_error:
                waited = time.monotonic() - sent
                self.gone = (
                    f"the target stopped answering: a request got no answer ({error}) and "
                    f"a tools/list probe sent after it got none either ({probe_error}): "
                    f"{waited:.0f} s without an answer in all; the remaining checks "
                    "were not run"
                )
            else:
                self.answered()
            return True


_ATTRIBUTE = "_osf_liveness"


def liveness_of(target: object) -> Liveness:
    """The :class:`Liveness` record of ``target``, kept on it (made on first use)."""
    record = getattr(target, _ATTRIBUTE, None)
    if not isinstance(record, Liveness):
        record = Liveness(url=str(getattr(target, "mcp_url", "")))
        setattr(target, _ATTRIBUTE, record)
    return record


class _Watched:
    """A check's transport, reporting answers and time-outs to the target's record."""

    def __init__(self, inner: Transport, record: Liveness) -> None:
        self.inner = inner
        self.record = record

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        if self.record.stopping:
            raise Interrupted(f"the run is stopping: {method} {url} was not sent")
        if self.record.gone is not None:
            raise Interrupted(self.record.gone)
        sent = time.monotonic()
        try:
            reply = self.inner.request(method, url, headers, body)
        except DeadlineExceeded as err:
            if not self.record.timed_out(sent, err, self.inner):
                raise Interrupted(str(self.record.gone)) from err
            raise
        self.record.answered()
        return reply

    def __repr__(self) -> str:
        return f"{self.inner!r} (watched)"


def watch(target: object, inner: Transport) -> Transport:
    """``inner``, watched for ``target`` going silent (one wrapper per check)."""
    return _Watched(inner, liveness_of(target))


def no_answer_unless_gone(target: object, error: OsfClientError) -> None:
    """Let a caller take ``error`` as "no answer" (a revision not served, an era not
    settled) -- unless it is the time-out that found ``target`` gone: that one is
    raised again, so the check in hand fails with it instead of ending as not run at
    its next exchange."""
    record = getattr(target, _ATTRIBUTE, None)
    if isinstance(error, DeadlineExceeded) and isinstance(record, Liveness) and record.gone:
        raise error


def stop_if_gone(session: pytest.Session, target: object) -> None:
    """End the run after this check if ``target`` stopped answering."""
    record = getattr(target, _ATTRIBUTE, None)
    if isinstance(record, Liveness) and record.gone is not None and not session.shouldfail:
        session.shouldfail = record.gone
