"""Mount any :class:`~pytest_osfoundry.http.Handler` into httpx through respx.

Every ``httpx`` client in the process (sync or async) then reaches the handler at
``base_url`` without a socket. respx stays strict: a request to any other host
raises, so a test never talks to the network by accident.

    >>> server = ReferenceServer()
    >>> with mount(server, "https://osf.test") as router:
    ...     httpx.get("https://osf.test/.well-known/oauth-protected-resource").status_code
    200
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry.http import DropConnection, Handler, Request, announce_origin

if TYPE_CHECKING:  # imported where used: the in-process path never loads httpx or respx
    import httpx
    import respx

__all__ = ["mount", "to_httpx_response"]


def _side_effect(handler: Handler) -> respx.types.SideEffectTypes:
    def answer(request: httpx.Request) -> httpx.Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        # The handler sees no URL scheme: pass it on as a proxy would.
        headers.setdefault("x-forwarded-proto", request.url.scheme)
        # The path as sent, still percent-encoded (``url.path`` is decoded): the same
        # string the loopback server and the direct transport hand to the handler.
        raw_path = request.url.raw_path.split(b"?", 1)[0].decode("ascii", "replace")
        req = Request(
            request.method,
            raw_path or "/",
            headers,
            request.read(),
            request.url.query.decode("ascii", "replace"),
        )
        try:
            return to_httpx_response(handler(req))
        except DropConnection:  # a lost reply (fault injection): what httpx raises for one
            import httpx

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
    handler: Handler, base_url: str, router: respx.MockRouter | None = None
) -> respx.MockRouter:
    """Route every request under ``base_url`` to ``handler``; returns the respx router.

    Use the router as a context manager (``with mount(...):``) or call its
    ``start()``/``stop()``. Pass an existing ``router`` (e.g. the ``respx_mock``
    fixture) to add the route to it instead.
    """
    import respx

    if not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
    announce_origin(handler, base_url)  # the app names it as its public URL unless told one
    if router is None:
        router = respx.mock(base_url=base_url, assert_all_called=False)
        router.route().mock(side_effect=_side_effect(handler))
    else:
        router.route(url__startswith=base_url.rstrip("/")).mock(side_effect=_side_effect(handler))
    return router
