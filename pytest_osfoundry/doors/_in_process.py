"""What every in-process door shares: where it serves, the request the app sees, the answer.

An in-process door hands a client library's requests to a
:class:`~pytest_osfoundry.http.Handler` without a socket: the respx door (httpx), the
httpx2 door (the official MCP SDK's stack) and the requests door. Each translates
its library's request and response types; everything else is this one
:class:`InProcessDoor`, so the doors cannot drift apart:

* **Where.** A door serves one ``base_url``: its scheme, host and port, and the paths
  at or below its path. :meth:`InProcessDoor.serves` says whether a URL is one of them;
  any other URL is refused with :meth:`InProcessDoor.no_route`, a message naming the
  door (the fixture a test uses), the URL and what the door serves. Nothing leaves the
  process.
* **The request the app sees.** The path as sent (still percent-encoded), the raw
  query, lower-case header names, a field sent several times as its values joined by
  ``", "`` in order (RFC 9110 §5.3, as the loopback server hands it: two ``Origin``
  fields are then no valid origin, not the last one), and ``x-forwarded-proto`` set
  to the URL's scheme
  (the app sees no scheme otherwise), as the loopback server and a proxy would.
* **The answer.** The handler must return a :class:`~pytest_osfoundry.http.Response`
  (anything else is a ``TypeError`` naming it); a
  :class:`~pytest_osfoundry.http.DropConnection` (the ``drop_replies`` fault) goes
  through, and each door raises what its library raises for a connection closed
  without a reply.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from pytest_osfoundry.http import Handler, Request, Response, announce_origin

__all__ = ["InProcessDoor"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


class InProcessDoor:
    """``handler`` served at ``base_url`` by the door called ``name`` (see the module)."""

    def __init__(self, handler: Handler, base_url: str, name: str) -> None:
        if not callable(handler):
            raise TypeError(f"handler must be a Request -> Response callable, got {handler!r}")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.handler = handler
        self.name = name
        self.base_url = base_url.rstrip("/")
        scheme, host, port, path = _parts(self.base_url)
        self._origin = (scheme, host, port)
        self._prefix = path.rstrip("/")
        self.requests = 0
        """How many requests the door has handed to the handler (answered or dropped)."""
        announce_origin(handler, self.base_url)  # the app names it as its public URL

    def serves(self, url: str) -> bool:
        """Whether ``url`` is at or below :attr:`base_url` (same scheme, host and port)."""
        scheme, host, port, path = _parts(url)
        if (scheme, host, port) != self._origin:
            return False
        prefix = self._prefix
        return not prefix or path == prefix or path.startswith(prefix + "/")

    def no_route(self, url: str) -> str:
        """What a request to ``url``, which this door does not serve, is told."""
        shown = url.split("?", 1)[0]
        return (
            f"no route to {shown}: {self.name} serves {self.base_url} only, in-process (no "
            "request leaves the process); send this client's requests there, or reach "
            "other hosts another way"
        )

    def answer(
        self,
        method: str,
        url: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
    ) -> Response:
        """The handler's answer to the request (``url`` as sent: the path percent-encoded).

        Raises :class:`~pytest_osfoundry.http.DropConnection` when the handler drops the
        reply, and ``TypeError`` when it returns something other than a ``Response``.
        """
        split = urlsplit(url)
        lowered: dict[str, str] = {}
        for name, value in headers:  # a repeated field: its values joined, in order
            key = name.lower()
            lowered[key] = f"{lowered[key]}, {value}" if key in lowered else value
        lowered.setdefault("x-forwarded-proto", split.scheme)
        request = Request(method.upper(), split.path or "/", lowered, body, split.query)
        self.requests += 1
        reply = self.handler(request)
        if not isinstance(reply, Response):
            raise TypeError(f"the handler must return a Response, got {reply!r}")
        return reply


def _parts(url: str) -> tuple[str, str, int | None, str]:
    """Scheme, lower-case host, port (the scheme's default filled in) and path of ``url``."""
    split = urlsplit(url)
    scheme = split.scheme.lower()
    try:
        port = split.port
    except ValueError:  # a port that is not a number: matches no door
        port = -1
    if port is None:
        port = _DEFAULT_PORTS.get(scheme)
    return scheme, (split.hostname or "").lower(), port, split.path
