"""Any :class:`~pytest_osfoundry.http.Handler` as an httpx2 transport (sync and async).

httpx2 is the HTTP stack of the official MCP Python SDK (``mcp`` 2.x), which respx
(it patches httpx) cannot reach. :class:`Httpx2Door` is an httpx2 transport that
answers requests under ``base_url`` by calling the handler in the caller's own thread
(in an event loop: inside the loop, with no socket and no thread), so::

    door = Httpx2Door(world.faulty_server(), world.base_url)
    async with door.async_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(world.mcp_url, http_client=http) as streams:
            ...

Promises, as for every in-process door (:mod:`pytest_osfoundry.doors._in_process`):

* the handler sees the path as sent (still percent-encoded), the raw query, lower-case
  header names and ``x-forwarded-proto`` (the handler sees no scheme otherwise);
* a reply the handler drops (:class:`~pytest_osfoundry.http.DropConnection`, which the
  agent-side fault ``drop_replies`` raises) reaches the client as
  ``httpx2.RemoteProtocolError``, what a real lost reply looks like;
* strict: a request to any other URL raises ``httpx2.ConnectError`` naming the door
  (``door``: ``osf_httpx2`` for the fixture) and what it serves, so a test never talks
  to the network by accident.

This module imports httpx2; nothing else in the kit imports this module until it is
used. httpx2 comes with the official MCP SDK (``mcp`` 2.x), which the kit does not
depend on: without it, importing this module raises :data:`MISSING_HTTPX2` as a
one-line ``ModuleNotFoundError`` naming the ``sdk`` extra.
"""

from __future__ import annotations

from typing import Any

from pytest_osfoundry.doors._in_process import InProcessDoor
from pytest_osfoundry.http import DropConnection, Handler

#: What a user without httpx2 is told (the ``osf_httpx2`` fixture prints it alone).
MISSING_HTTPX2 = (
    "osf_httpx2 (Httpx2Door) needs httpx2, the HTTP stack of the official MCP Python SDK, "
    "and it is not installed: install the kit's sdk extra, pytest-osfoundry[sdk] "
    "(pip install -e '.[sdk]' in its clone; it brings mcp>=2.3 and httpx2)"
)

try:
    import httpx2
except ModuleNotFoundError as err:
    if err.name != "httpx2":
        raise
    raise ModuleNotFoundError(MISSING_HTTPX2, name="httpx2") from None

__all__ = ["MISSING_HTTPX2", "Httpx2Door", "Httpx2Mount"]


class Httpx2Door(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """An httpx2 transport serving ``handler`` at ``base_url`` (see the module's docstring);
    ``door`` is the name a refused request is told (the fixture's, ``osf_httpx2``)."""

    def __init__(self, handler: Handler, base_url: str, *, door: str = "Httpx2Door") -> None:
        self._door = InProcessDoor(handler, base_url, door)
        self.handler = handler
        self.base_url = self._door.base_url

    @property
    def requests(self) -> int:
        """How many requests the door has answered or dropped."""
        return self._door.requests

    # ------------------------------------------------------------------ clients
    def client(self, **options: Any) -> httpx2.Client:
        """A sync ``httpx2.Client`` on this door (``options`` go to the client)."""
        return httpx2.Client(transport=self, **options)

    def async_client(self, **options: Any) -> httpx2.AsyncClient:
        """An ``httpx2.AsyncClient`` on this door: pass it to ``streamable_http_client``."""
        return httpx2.AsyncClient(transport=self, **options)

    # ------------------------------------------------------------------ transport
    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Answer a sync client's request by calling the handler."""
        return self._answer(request, request.read())

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Answer an async client's request by calling the handler (inside the loop)."""
        return self._answer(request, await request.aread())

    def _answer(self, request: httpx2.Request, body: bytes) -> httpx2.Response:
        url = str(request.url)
        if not self._door.serves(url):
            raise httpx2.ConnectError(self._door.no_route(url), request=request)
        try:
            reply = self._door.answer(request.method, url, request.headers.multi_items(), body)
        except DropConnection:  # a lost reply (fault injection): what httpx2 raises for one
            raise httpx2.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            ) from None
        return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)


Httpx2Mount = Httpx2Door
"""The older name of :class:`Httpx2Door` (deprecated: the same class)."""
