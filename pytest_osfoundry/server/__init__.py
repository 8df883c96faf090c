"""The reference server: every server rule of conformance/spec.md, as one HTTP app.

* :class:`ReferenceServer` — the app (a ``Request -> Response`` handler) and its state.
* :class:`LoopbackServer` — serve it over real HTTP on a loopback port.
* :func:`mount` — reach it from any httpx client through respx.
* :class:`Delayed` — any handler answering ``seconds`` later (a far-away server).
* :class:`DomainError` — what :class:`ServerState` raises for a refused call (its
  message is the spec's text).
"""

from __future__ import annotations

from pytest_osfoundry.server._app import Provisioned, ReferenceServer
from pytest_osfoundry.server._latency import Delayed
from pytest_osfoundry.server._loopback import LoopbackServer
from pytest_osfoundry.server._respx_mount import mount
from pytest_osfoundry.server._state import DomainError, ServerState

__all__ = [
    "Delayed",
    "DomainError",
    "LoopbackServer",
    "Provisioned",
    "ReferenceServer",
    "ServerState",
    "mount",
]
