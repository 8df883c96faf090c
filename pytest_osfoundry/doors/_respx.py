"""Any :class:`~pytest_osfoundry.http.Handler` as a door into httpx, through respx.

While a :class:`RespxDoor` is started, every ``httpx`` client in the process (sync or
async) reaches the handler at ``base_url`` without a socket. It is strict: a request
to any other URL raises ``httpx.ConnectError`` naming the door (``door``:
``osf_respx`` for the fixture), so a test never talks to the network by accident. A
reply the handler drops (the ``drop_replies`` fault) raises
``httpx.RemoteProtocolError``, what a real lost reply raises. What the handler sees is
every in-process door's (:class:`~pytest_osfoundry.doors._in_process.InProcessDoor`).

    >>> server = ReferenceServer()
    >>> with RespxDoor(server, "https://osf.test"):
    ...     httpx.get("https://osf.test/.well-known/oauth-protected-resource").status_code
    200

:func:`mount` is the older spelling: the same door, returning its respx router.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from pytest_osfoundry.doors._in_process import InProcessDoor
from pytest_osfoundry.http import DropConnection, Handler

if TYPE_CHECKING:  # imported where used: the in-process path never loads httpx or respx
    import httpx
    import respx

__all__ = ["RespxDoor", "mount", "to_httpx_response"]


class RespxDoor:
    """``handler`` served to every httpx client at ``base_url`` while started (``with``
    block, or :meth:`start`/:meth:`stop`); ``door`` names it in refusals.

    Pass an existing ``router`` (e.g. the ``respx_mock`` fixture) to add the route to it
    instead of a router of the door's own: that router's rules then say what other
    requests do, and starting it is the router owner's business.
    """

    def __init__(
        self,
        handler: Handler,
        base_url: str,
        *,
        router: respx.MockRouter | None = None,
        door: str = "RespxDoor",
    ) -> None:
        import respx

        self._door = InProcessDoor(handler, base_url, door)
        self.handler = handler
        self.base_url = self._door.base_url
        if router is None:
            router = respx.mock(assert_all_called=False)
            router.route().mock(side_effect=self._answer)
        else:
            router.route(url__startswith=self.base_url).mock(side_effect=self._answer)
        self.router: respx.MockRouter = router
        """The respx router holding the door's route (``osf_respx`` is this router)."""

    @property
    def requests(self) -> int:
        """How many requests the door has answered or dropped."""
        return self._door.requests

    def start(self) -> None:
        """Answer every httpx request from now on (its router started)."""
        self.router.start()

    def stop(self) -> None:
        """Stop answering: httpx reaches the network again."""
        self.router.stop()

    def __enter__(self) -> RespxDoor:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _answer(self, request: httpx.Request) -> httpx.Response:
        import httpx

        url = str(request.url)
        if not self._door.serves(url):
            raise httpx.ConnectError(self._door.no_route(url), request=request)
        try:
            reply = self._door.answer(
                request.method, url, request.headers.multi_items(), request.read()
            )
        except DropConnection:  # a lost reply (fault injection): what httpx raises for one
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            ) from None
        return to_httpx_response(reply)


def to_httpx_response(response: object) -> httpx.Response:
    """Turn a kit :class:`~pytest_osfoundry.http.Response` into an ``httpx.Response``."""
    import httpx

    from pytest_osfoundry.http import Response

    if not isinstance(response, Response):
        raise TypeError(f"the handler must return a Response, got {response!r}")
    return httpx.Response(response.status, headers=response.headers, content=response.body)


def mount(
    handler: Handler,
    base_url: str,
    router: respx.MockRouter | None = None,
    *,
    door: str = "pytest_osfoundry.server.mount",
) -> respx.MockRouter:
    """The older spelling of :class:`RespxDoor`: the door's respx router.

    Use the router as a context manager (``with mount(...):``) or call its
    ``start()``/``stop()``; every other request then raises ``httpx.ConnectError``
    naming ``door``. Pass an existing ``router`` to add the route to it instead.
    """
    return RespxDoor(handler, base_url, router=router, door=door).router
