"""The reference server: every server rule of conformance/spec.md, as one HTTP app.

* :class:`ReferenceServer` — the app (a ``Request -> Response`` handler) and its state.
* :class:`LoopbackServer` — serve it over real HTTP on a loopback port.
* :func:`mount` — reach it from any httpx client through respx.
* :class:`Httpx2Mount` — reach it from httpx2 clients (the official MCP Python SDK's
  stack); imported on first use, so importing this package never imports httpx2.
* :class:`RequestsMount` — reach it from every ``requests`` call; imported on first
  use, like :class:`Httpx2Mount`.
* :class:`Delayed` — any handler answering ``seconds`` later (a far-away server).
* :class:`DomainError` — what :class:`ServerState` raises for a refused call (its
  message is the spec's text).
* :class:`Retention` — how much finished work a :class:`ServerState` keeps (terminal
  runs, their completions, idempotency keys): bounded by default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_osfoundry.server._app import Provisioned, ReferenceServer
from pytest_osfoundry.server._latency import Delayed
from pytest_osfoundry.server._loopback import LoopbackServer
from pytest_osfoundry.server._respx_mount import mount
from pytest_osfoundry.server._state import DomainError, Retention, ServerState

if TYPE_CHECKING:
    from pytest_osfoundry.server._httpx2_mount import Httpx2Mount
    from pytest_osfoundry.server._requests_mount import RequestsMount

__all__ = [
    "Delayed",
    "DomainError",
    "Httpx2Mount",
    "LoopbackServer",
    "Provisioned",
    "ReferenceServer",
    "RequestsMount",
    "Retention",
    "ServerState",
    "mount",
]


def __getattr__(name: str) -> Any:
    """``Httpx2Mount`` and ``RequestsMount`` on first use (they import httpx2, requests)."""
    if name == "Httpx2Mount":
        from pytest_osfoundry.server._httpx2_mount import Httpx2Mount

        return Httpx2Mount
    if name == "RequestsMount":
        from pytest_osfoundry.server._requests_mount import RequestsMount

        return RequestsMount
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
