"""Doors: the ways a client reaches any :class:`~pytest_osfoundry.http.Handler`.

A door knows nothing of the handler behind it (the reference server, a wrapped one,
your own app); every door hands the handler a :class:`~pytest_osfoundry.http.Request`
and tells it where it serves (:func:`~pytest_osfoundry.http.announce_origin`). Each is
named for the client stack it serves, ``<Stack>Door``; the loopback one is a real
server on a socket, and is named so:

* :class:`LoopbackServer` -- a real HTTP/1.1 server on a ``127.0.0.1`` port: any client
  with a socket.
* :class:`RespxDoor` -- every httpx client of the process, in-process (through respx).
* :class:`Httpx2Door` -- an httpx2 transport (the official MCP Python SDK's stack),
  in-process; imported on first use, so importing this package never imports httpx2.
* :class:`RequestsDoor` -- every ``requests`` call of the process, in-process;
  imported on first use, like :class:`Httpx2Door`.
* :class:`Delayed` -- any handler answering ``seconds`` later (a far-away server), in
  front of any door.

The in-process doors share one :class:`~pytest_osfoundry.doors._in_process.InProcessDoor`
(where they serve, the request the handler sees, the answer, the refusal naming the
door), so they cannot drift apart. The older names (``mount``, ``Httpx2Mount``,
``RequestsMount``, from :mod:`pytest_osfoundry.server`) are the same doors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_osfoundry.doors._delayed import Delayed
from pytest_osfoundry.doors._loopback import LoopbackServer
from pytest_osfoundry.doors._respx import RespxDoor

if TYPE_CHECKING:
    from pytest_osfoundry.doors._httpx2 import Httpx2Door
    from pytest_osfoundry.doors._requests import RequestsDoor

__all__ = ["Delayed", "Httpx2Door", "LoopbackServer", "RequestsDoor", "RespxDoor"]


def __getattr__(name: str) -> Any:
    """``Httpx2Door`` and ``RequestsDoor`` on first use (they import httpx2, requests)."""
    if name == "Httpx2Door":
        from pytest_osfoundry.doors._httpx2 import Httpx2Door

        return Httpx2Door
    if name == "RequestsDoor":
        from pytest_osfoundry.doors._requests import RequestsDoor

        return RequestsDoor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
