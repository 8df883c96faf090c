"""The HTTP exchange every door into the kit speaks: a plain request and response.

The reference server's HTTP app is one function from :class:`Request` to
:class:`Response`; the loopback server, the respx mount and the direct in-process
transport all build a :class:`Request` and hand it to that function, so behaviour
cannot drift between them. Header names are stored lower-cased.

A door also tells the handler where it is served (:func:`announce_origin`), so the
reference server names its real public URL (SPEC R1: the challenge and the metadata
never follow ``Host``). A handler that answers through another one subclasses
:class:`HandlerWrapper`, which passes that announcement on.

A handler may answer a :class:`KeptOpen`: its body is sent and its stream then left
open (as MCP servers may leave an event stream open after the answer), which the
loopback door honours and the other doors send whole.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from pytest_osfoundry._wirejson import dumps

__all__ = [
    "DropConnection",
    "Handler",
    "HandlerWrapper",
    "KeptOpen",
    "Request",
    "Response",
    "announce_origin",
    "json_response",
]


_NO_HEADERS: Mapping[str, str] = MappingProxyType({})


class DropConnection(Exception):
    """Raised by a handler to end the connection without any reply.

    The loopback server closes the socket unanswered and the respx mount raises
    httpx's ``RemoteProtocolError``, so the client sees what a real lost reply looks
    like: a transport error, not an HTTP status (fault injection uses it).
    """


class Request(NamedTuple):
    """One HTTP request as the app sees it (immutable; cheap to make).

    ``path`` excludes the query string, which is kept raw in ``query``.
    ``headers`` keys are lower-case; use :meth:`header` for lookups.
    """

    method: str
    path: str
    headers: Mapping[str, str] = _NO_HEADERS
    body: bytes = b""
    query: str = ""

    def header(self, name: str, default: str | None = None) -> str | None:
        """Return the value of header ``name`` (case-insensitive), or ``default``."""
        return self.headers.get(name.lower(), default)

    @staticmethod
    def build(
        method: str,
        path: str,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        query: str = "",
    ) -> Request:
        """Make a request, lower-casing header names."""
        lowered = {k.lower(): v for k, v in (headers or {}).items()}
        return Request(method.upper(), path, lowered, body, query)


@dataclass
class Response:
    """One HTTP response: status, headers (lower-case names) and a byte body."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        """Decode the body as JSON (raises ``ValueError`` when it is not JSON)."""
        return json.loads(self.body)


@dataclass
class KeptOpen(Response):
    """A response whose body is sent and whose stream is then left open.

    The loopback door frames it chunked, sends the body as one chunk, and ends
    neither the answer nor the connection until ``until`` is set (then it closes the
    connection, within a second), the client closes it, or the door's
    ``request_deadline`` passes; nothing more is read from that connection. Doors that
    cannot keep a stream open (respx, in-process) send it as a whole response.
    """

    until: threading.Event = field(default_factory=threading.Event)


class Handler(Protocol):
    """Anything that answers a :class:`Request` with a :class:`Response`."""

    def __call__(self, request: Request, /) -> Response: ...


def announce_origin(handler: object, origin: str) -> None:
    """Tell ``handler`` the origin a door serves it at, if it has ``serve_at(origin)``.

    Every door (the loopback server, the respx mount) calls this once, when it starts
    serving. The reference server takes the first origin it is told as its public URL
    unless it was given one; a handler without ``serve_at`` is left alone.
    """
    adopt = getattr(handler, "serve_at", None)
    if callable(adopt):
        adopt(origin)


H = TypeVar("H", bound=Handler)


class HandlerWrapper(Generic[H]):
    """Base of a handler that answers through another one, ``inner``.

    Promises: :meth:`serve_at` passes a door's announcement on to ``inner`` (so a
    wrapped :class:`~pytest_osfoundry.server.ReferenceServer` names the origin it is
    really served at, however many wrappers stand in front of it), and calling the
    wrapper answers as ``inner`` does until a subclass overrides :meth:`__call__`.
    Subclass it for fault injection, latency, logging or a server broken on purpose;
    a wrapper written without it must forward ``serve_at`` itself.
    """

    def __init__(self, inner: H) -> None:
        self.inner: H = inner

    def serve_at(self, origin: str) -> None:
        """A door announces where it serves this wrapper: pass it on to ``inner``."""
        announce_origin(self.inner, origin)

    def __call__(self, request: Request, /) -> Response:
        """Answer as ``inner`` does (override to change requests or answers)."""
        return self.inner(request)


def json_response(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> Response:
    """A ``application/json`` response with ``payload`` encoded compactly (UTF-8)."""
    out = {"content-type": "application/json"}
    if headers:
        out.update({k.lower(): v for k, v in headers.items()})
    return Response(status, out, dumps(payload))
