"""The reference server: every server rule of conformance/spec.md, as one HTTP app.

* :class:`ReferenceServer` — the app (a ``Request -> Response`` handler) and its state.
* :class:`DomainError` — what :class:`ServerState` raises for a refused call (its
  message is the spec's text).
* :class:`Retention` — how much finished work a :class:`ServerState` keeps (terminal
  runs, their completions, idempotency keys): bounded by default.

The ways to reach it (or any handler) are :mod:`pytest_osfoundry.doors`; their names
stay importable from here as well:

* :class:`LoopbackServer` — serve it over real HTTP on a loopback port.
* :func:`mount` — reach it from any httpx client through respx (the router of a
  :class:`~pytest_osfoundry.doors.RespxDoor`).
* :class:`Httpx2Mount` — :class:`~pytest_osfoundry.doors.Httpx2Door`, its older name:
  reach it from httpx2 clients (the official MCP Python SDK's stack); imported on first
  use, so importing this package never imports httpx2.
* :class:`RequestsMount` — :class:`~pytest_osfoundry.doors.RequestsDoor`, its older
  name: reach it from every ``requests`` call; imported on first use.
* :class:`Delayed` — any handler answering ``seconds`` later (a far-away server).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_osfoundry.doors import Delayed, LoopbackServer
from pytest_osfoundry.doors._internal import mount
from pytest_osfoundry.server._app import Provisioned, ReferenceServer
from pytest_osfoundry.server._records import Run
from pytest_osfoundry.server._state import DomainError, Retention, ServerState

if TYPE_CHECKING:
    from pytest_osfoundry.doors._internal import Httpx2Mount, RequestsMount

__all__ = [
    "Delayed",
    "DomainError",
    "Httpx2Mount",
    "LoopbackServer",
    "Provisioned",
    "ReferenceServer",
    "RequestsMount",
    "Retention",
    "Run",
    "ServerState",
    "mount",
]


#: The doors' older names read on first use (they import httpx2, requests): the new name.
_LAZY_DOORS = {"Httpx2Mount": "Httpx2Door", "RequestsMount": "RequestsDoor"}


def __getattr__(name: str) -> Any:
    """``Httpx2Mount`` and ``RequestsMount``: the doors of :mod:`pytest_osfoundry.doors`."""
    if name in _LAZY_DOORS:
        from pytest_osfoundry import doors

        return getattr(doors, _LAZY_DOORS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
