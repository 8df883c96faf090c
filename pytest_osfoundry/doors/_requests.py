"""Any :class:`~pytest_osfoundry.http.Handler` mounted into ``requests``, in-process.

While a :class:`RequestsDoor` is started, every ``requests`` call in the process
(``requests.get``, any ``Session``, made before or after) that reaches the network
through requests' ``HTTPAdapter`` is answered by the handler at ``base_url`` instead,
without a socket::

    with RequestsDoor(world.faulty_server(), world.base_url, door="osf_requests"):
        reply = requests.post(world.mcp_url, json=body, headers=headers)

Promises, as for every in-process door (:mod:`pytest_osfoundry.doors._in_process`): the
handler sees the request as sent; a reply the handler drops (the ``drop_replies``
fault) raises ``requests.ConnectionError`` wrapping urllib3's ``ProtocolError``
(``RemoteDisconnected``), what requests raises when a server closes the connection
without an answer; a request to any other URL raises ``requests.ConnectionError``
naming the door and what it serves (strict: nothing leaves the process). The answer is
built by requests' own ``HTTPAdapter.build_response`` from a urllib3 response, so
cookies, encodings, ``raw`` and streaming behave as over the network.

Why not a mocking library (``responses``, ``requests-mock``): both answer registered
URLs with canned or callback replies and refuse the rest in their own words; a whole
app mounted at a prefix, strict with a message naming the fixture, is the few lines
below (the same seam those libraries use: ``HTTPAdapter.send``).
"""

from __future__ import annotations

import http.client
import io
from types import TracebackType
from typing import Any

from pytest_osfoundry.doors._in_process import InProcessDoor
from pytest_osfoundry.http import DropConnection, Handler

#: What a user without requests is told (the ``osf_requests`` fixture prints it alone).
MISSING_REQUESTS = (
    "osf_requests (RequestsDoor) needs the requests library, and it is not installed: "
    "pip install requests"
)

try:
    import requests
    import requests.adapters
    import urllib3
    import urllib3.exceptions
except ModuleNotFoundError as err:  # pragma: no cover - requests is in the test extra
    if err.name not in ("requests", "urllib3"):
        raise
    raise ModuleNotFoundError(MISSING_REQUESTS, name="requests") from None

__all__ = ["MISSING_REQUESTS", "RequestsDoor", "RequestsMount"]


class RequestsDoor:
    """``handler`` served to every ``requests`` call at ``base_url`` while started
    (``with`` block, or :meth:`start`/:meth:`stop`); ``door`` names it in refusals."""

    def __init__(self, handler: Handler, base_url: str, *, door: str = "RequestsDoor") -> None:
        self._door = InProcessDoor(handler, base_url, door)
        self.handler = handler
        self.base_url = self._door.base_url
        self._original: Any = None

    @property
    def requests(self) -> int:
        """How many requests the door has answered or dropped."""
        return self._door.requests

    def start(self) -> None:
        """Answer every ``requests`` call from now on (refused if already started)."""
        if self._original is not None:
            raise RuntimeError("this RequestsDoor is already started")
        adapter = requests.adapters.HTTPAdapter
        self._original = adapter.send
        door = self._door

        def send(
            self: requests.adapters.HTTPAdapter,
            request: requests.PreparedRequest,
            *args: Any,
            **kwargs: Any,
        ) -> requests.Response:
            return _answer(self, door, request)

        adapter.send = send  # type: ignore[method-assign]

    def stop(self) -> None:
        """Give ``requests`` its network back (a door not started is left alone)."""
        if self._original is not None:
            requests.adapters.HTTPAdapter.send = self._original  # type: ignore[method-assign]
            self._original = None

    def __enter__(self) -> RequestsDoor:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _answer(
    adapter: requests.adapters.HTTPAdapter, door: InProcessDoor, request: requests.PreparedRequest
) -> requests.Response:
    url = request.url or ""
    if not door.serves(url):
        raise requests.ConnectionError(door.no_route(url), request=request)
    body = request.body or b""
    if isinstance(body, str):
        body = body.encode("utf-8")
    elif not isinstance(body, bytes):  # a file or a generator: read it as requests would send it
        body = b"".join(
            chunk.encode("utf-8") if isinstance(chunk, str) else bytes(chunk)
            for chunk in ([body.read()] if hasattr(body, "read") else body)
        )
    try:
        reply = door.answer(request.method or "GET", url, request.headers.items(), body)
    except DropConnection:  # a lost reply (fault injection): what requests raises for one
        lost = http.client.RemoteDisconnected("Remote end closed connection without response")
        raise requests.ConnectionError(
            urllib3.exceptions.ProtocolError("Connection aborted.", lost), request=request
        ) from None
    raw = urllib3.HTTPResponse(
        body=io.BytesIO(reply.body),
        headers=reply.headers,
        status=reply.status,
        reason=http.client.responses.get(reply.status, ""),
        preload_content=False,
        decode_content=False,
    )
    return adapter.build_response(request, raw)


RequestsMount = RequestsDoor
"""The older name of :class:`RequestsDoor` (deprecated: the same class)."""
