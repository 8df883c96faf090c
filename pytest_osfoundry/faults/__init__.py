"""Faults, each one argument away: wrap a transport or a handler, or schedule a desktop's
outage or death.

* Transport faults (:mod:`pytest_osfoundry.faults._transport`): :class:`FaultyTransport`
  applies :class:`DropReplies`, :class:`LoseRequests`, :class:`ServerErrors` and
  :class:`Latency` to every request of a client; :class:`FaultyHandler` applies them on
  the server side of any door.
* Desktop outages and deaths (:mod:`pytest_osfoundry.faults._desktop`):
  :func:`schedule_offline` takes a relay offline for a window of time;
  :func:`schedule_death` kills its process, with whatever it holds (:class:`Death`).
"""

from __future__ import annotations

from pytest_osfoundry.faults._desktop import Death, schedule_death, schedule_offline
from pytest_osfoundry.faults._transport import (
    DropReplies,
    Fault,
    FaultyHandler,
    FaultyTransport,
    Latency,
    LoseRequests,
    ServerErrors,
)

__all__ = [
    "Death",
    "DropReplies",
    "Fault",
    "FaultyHandler",
    "FaultyTransport",
    "Latency",
    "LoseRequests",
    "ServerErrors",
    "schedule_death",
    "schedule_offline",
]
