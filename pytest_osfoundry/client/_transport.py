"""Transports: how a client's request reaches a server and its reply comes back.

A :class:`Transport` takes an absolute URL and returns a
:class:`~pytest_osfoundry.http.Response` whose header names are lower-case. A
transport that gets no reply raises :class:`~pytest_osfoundry.client._errors.ReplyLost`;
any HTTP status, 4xx and 5xx included, is a reply and is returned, not raised.
Transports never mutate the ``headers`` mapping they are given.

Here: the protocol, :class:`DirectTransport` (a handler called in-process),
:class:`RecordingTransport` (a wrapper keeping the exchanges) and :func:`json_call`
(one JSON-over-HTTP exchange through any transport: the relay client's and the relay
driver client's). Over the network it is
:class:`~pytest_osfoundry.client._http_transport.HttpTransport`.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol
from urllib.parse import urlsplit

from pytest_osfoundry._masking import mask_token, mask_url
from pytest_osfoundry._wirejson import dumps, loads
from pytest_osfoundry.client._errors import HttpStatusError, ProtocolViolation, ReplyLost
from pytest_osfoundry.client._exchange import Exchange
from pytest_osfoundry.http import Handler, Request, Response

__all__ = [
    "DirectTransport",
    "FixedHeaders",
    "RecordingTransport",
    "Transport",
    "json_call",
    "split_target",
]


class Transport(Protocol):
    """Sends one HTTP request to an absolute URL and returns the reply."""

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Send the request; return the reply (any status) or raise ``ReplyLost``."""
        ...


def split_target(url: str) -> tuple[str, str]:
    """``(path, query)`` of an absolute URL, as an HTTP server would see them.

    The path stays percent-encoded as on the wire and is ``/`` when empty; the
    query is raw (no ``?``); a fragment is dropped.
    """
    parts = urlsplit(url)  # urlsplit keeps its own cache of recent URLs
    return parts.path or "/", parts.query


def json_call(
    transport: Transport,
    method: str,
    url: str,
    headers: Mapping[str, str],
    payload: Any = None,
    secrets: Iterable[str | None] = (),
) -> Any:
    """One JSON-over-HTTP exchange: ``payload`` sent as the JSON body (``None``: no
    body), the 2xx answer's body read as JSON and returned.

    ``headers`` are sent as given (a body's ``Content-Type`` included); ``secrets`` are
    masked in every message.

    Raises:
        HttpStatusError: the status is not 2xx (the URL and the body masked).
        ProtocolViolation: the answer's body is not JSON.
        ReplyLost: no reply (from the transport).
    """
    body = b"" if payload is None else dumps(payload)
    reply = transport.request(method, url, headers, body)
    if reply.status < 200 or reply.status > 299:
        raise HttpStatusError(
            reply.status,
            reply.headers,
            reply.body,
            url=mask_url(url, secrets),
            body_text=mask_token(reply.body.decode("utf-8", "replace"), secrets),
        )
    try:
        return loads(reply.body, json.loads)
    except ValueError:
        raise ProtocolViolation(
            f"{method} {mask_url(url, secrets)} answered {reply.status} with a body that is "
            "not JSON"
        ) from None


class FixedHeaders(dict[str, str]):
    """Request headers a client builds once and sends with many requests.

    The mapping holds the headers as written (what exchange logs and reports show);
    :attr:`lowered` is the read-only view with lower-case names that
    :class:`DirectTransport` hands its handler, made once here rather than on every
    request (lower-casing a copy per request showed in ``osfoundry-sim``'s CPU). It
    cannot be changed by item once built (that
    would leave :attr:`lowered` behind): build a new one; ``dict(headers)`` is a
    plain, changeable copy.
    """

    __slots__ = ("lowered",)

    def __init__(self, headers: Mapping[str, str]) -> None:
        super().__init__(headers)
        self.lowered: Mapping[str, str] = MappingProxyType(
            {k.lower(): v for k, v in headers.items()}
        )

    def __setitem__(self, key: str, value: str) -> None:
        raise TypeError("FixedHeaders cannot change once built; build new ones")

    def __delitem__(self, key: str) -> None:
        raise TypeError("FixedHeaders cannot change once built; build new ones")

    def __reduce__(self) -> tuple[type[FixedHeaders], tuple[dict[str, str]]]:
        """Copied and pickled by building anew from the headers as written."""
        return (FixedHeaders, (dict(self),))


class DirectTransport:
    """Calls a :class:`~pytest_osfoundry.http.Handler` in-process: the fast path.

    No sockets: the URL is split into path and query, header names
    are lower-cased (a :class:`FixedHeaders` comes with its lower-cased view), and
    the handler's :class:`Response` is returned as it is.
    Whatever the handler raises propagates (it is a bug in the handler, not a lost
    reply); only fault-injecting wrappers raise ``ReplyLost``. The handler gets the
    headers as a read-only mapping.
    """

    __slots__ = ("handler",)

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Build a :class:`Request` and hand it to the handler."""
        path, query = split_target(url)
        if isinstance(headers, FixedHeaders):
            lowered = headers.lowered
        else:
            lowered = MappingProxyType({k.lower(): v for k, v in headers.items()})
        return self.handler(Request(method.upper(), path, lowered, body, query))

    def __repr__(self) -> str:
        return f"DirectTransport({self.handler!r})"


class RecordingTransport:
    """Wraps a transport and keeps the last ``keep`` exchanges, lost replies included.

    A request whose reply was lost is recorded with ``status=0`` and the error
    message, then the ``ReplyLost`` is re-raised. Any other exception propagates
    unrecorded.
    """

    def __init__(self, inner: Transport, *, keep: int = 50) -> None:
        if keep < 1:
            raise ValueError("keep must be at least 1")
        self.inner = inner
        self._log: deque[Exchange] = deque(maxlen=keep)

    def forget_last(self) -> None:
        """Drop the latest recorded exchange (one that proved nothing); none: no-op."""
        if self._log:
            self._log.pop()

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Forward to the inner transport and record what happened."""
        sent = dict(headers)
        start = time.perf_counter()
        try:
            reply = self.inner.request(method, url, headers, body)
        except ReplyLost as exc:
            elapsed = time.perf_counter() - start
            self._log.append(
                Exchange(method, url, sent, body, 0, {}, b"", elapsed, error=exc.message)
            )
            raise
        elapsed = time.perf_counter() - start
        self._log.append(
            Exchange(
                method, url, sent, body, reply.status, dict(reply.headers), reply.body, elapsed
            )
        )
        return reply

    @property
    def exchanges(self) -> list[Exchange]:
        """The recorded exchanges, oldest first (a copy)."""
        return list(self._log)

    def clear(self) -> None:
        """Forget every recorded exchange."""
        self._log.clear()

    def __repr__(self) -> str:
        return f"RecordingTransport({self.inner!r}, recorded={len(self._log)})"
