"""The reference server: every server rule of docs/spec.md, as one HTTP app.

* :class:`ReferenceServer` — the app (a ``Request -> Response`` handler) and its state.
* :class:`LoopbackServer` — serve it over real HTTP on a loopback port.
* :func:`mount` — reach it from any httpx client through respx.
* :class:`Delayed` — any handler answering ``seconds`` later (a far-away server).

``LoopbackServer`` and ``mount`` are loaded on first use: the in-process path never
needs :mod:`http.server`, httpx or respx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_osfoundry.server._app import Provisioned, ReferenceServer
from pytest_osfoundry.server._state import ServerState

if TYPE_CHECKING:
    from pytest_osfoundry.server._latency import Delayed
    from pytest_osfoundry.server._loopback import LoopbackServer
    from pytest_osfoundry.server._respx_mount import mount

__all__ = ["Delayed", "LoopbackServer", "Provisioned", "ReferenceServer", "ServerState", "mount"]

_LAZY = {
    "Delayed": "pytest_osfoundry.server._latency",
    "LoopbackServer": "pytest_osfoundry.server._loopback",
    "mount": "pytest_osfoundry.server._respx_mount",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
