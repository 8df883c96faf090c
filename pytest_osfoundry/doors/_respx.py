"""Mount any :class:`~pytest_osfoundry.http.Handler` into httpx through respx.

Every ``httpx`` client in the process (sync or async) then reaches the handler at
``base_url`` without a socket. It is strict: a request to any other URL raises
``httpx.ConnectError`` naming the door (``door``: ``osf_respx`` for the fixture), so a
test never talks to the network by accident. A reply the handler drops (the
``drop_replies`` fault) raises ``httpx.RemoteProtocolError``, what a real lost reply
raises. What the handler sees is every in-process door's
(:class:`~pytest_osfoundry.server._door.InProcessDoor`).

    >>> server = ReferenceServer()
    >>> with mount(server, "https://osf.test") as router:
    ...     httpx.get("https://osf.test/.well-known/oauth-protected-resource").status_code
    200
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry.http import DropConnection, Handler
from pytest_osfoundry.server._door import InProcessDoor

if TYPE_CHECKING:  # imported where used: the in-process path never loads httpx or respx
    import httpx
    import respx

__all__ = ["mount", "to_httpx_response"]


def _side_effect(door: InProcessDoor) -> respx.types.SideEffectTypes:
    def answer(request: httpx.Request) -> httpx.Response:
        import httpx

        url = str(request.url)
        if not door.serves(url):
            raise httpx.ConnectError(door.no_route(url), request=request)
        try:
            return to_httpx_response(
                door.answer(request.method, url, request.headers.multi_items(), request.read())
            )
        except DropConnection:  # a lost reply (fault injection): what httpx raises for one
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            ) from None

    return answer


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
    """Route every request under ``base_url`` to ``handler``; returns the respx router.

    Use the router as a context manager (``with mount(...):``) or call its
    ``start()``/``stop()``; every other request then raises ``httpx.ConnectError``
    naming ``door``. Pass an existing ``router`` (e.g. the ``respx_mock`` fixture) to
    add the route to it instead: that router's own rules say what other requests do.
    """
    import respx

    served = InProcessDoor(handler, base_url, door)
    if router is None:
        router = respx.mock(assert_all_called=False)
        router.route().mock(side_effect=_side_effect(served))
    else:
        router.route(url__startswith=served.base_url).mock(side_effect=_side_effect(served))
    return router
