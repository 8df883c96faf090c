"""HTTP over the network: the one way the kit sends a request to a real server.

:class:`HttpTransport` is the :class:`~pytest_osfoundry.client.Transport` for ``http://``
and ``https://`` URLs, built on the standard library's :mod:`http.client` (which writes
each request and reads each answer's head and framing) with what a tool that judges
other people's servers needs on top:

* **One deadline for the whole exchange** (connect, TLS handshake, request, headers and
  body in all): every read and write of the connection's socket is given only the time
  left, so a server dripping its headers a byte at a time is cut off on time.
* **A size cap**: a declared ``Content-Length`` over it fails before anything is read,
  and a body that grows past it stops being read there (a compressed one as it is
  decoded, never past the cap in memory).
* **An event stream read only until the reply is complete**, as ``stream_end`` says
  from the request's body (by default
  :func:`~pytest_osfoundry.client._jsonrpc.answer_end`: the JSON-RPC answer to the
  request's id, found by the one reply reader; the transport itself reads bytes); the
  stream is then closed, whatever the server meant to send after it (SPEC R1). A
  stream answering nothing we sent (a ``GET``, a notification) ends at its headers.
* **Strict reading**: a malformed status or header line (a name that is not a token, a
  continuation with nothing before it), differing ``Content-Length`` values, a
  ``Transfer-Encoding`` other than ``chunked``, a bad chunk size or a body shorter than
  its length is the server's fault and reported, never guessed around; interim ``1xx``
  answers are skipped; folded header lines are unfolded.
* ``gzip`` and ``deflate`` (zlib-wrapped or raw) bodies are decoded; other codings are
  passed through as they came.
* **Proxies from the environment** (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``,
  ``NO_PROXY``, read when the transport is made): ``http://`` proxies, ``https://``
  targets reached through a ``CONNECT`` tunnel. **TLS** verifies against
  ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set, else certifi's bundle.

What it sends: the caller's headers, plus, where the caller gave none, ``Host``,
``Content-Length`` (``0`` for an empty ``POST``/``PUT``/``PATCH``), ``Accept: */*``,
``Accept-Encoding: gzip, deflate``, ``Connection: keep-alive`` and a ``User-Agent``
naming the kit; credentials in the URL become ``Authorization: Basic`` unless the
caller sent an ``Authorization``. A connection is kept for the next request only when
its answer was read whole and neither side said ``close``; an idle one is used again
only if the server has not closed it and within :data:`IDLE_LIMIT` seconds. Nothing is
retried.
"""

from __future__ import annotations

import base64
import email.errors
import http.client
import os
import re
import socket
import ssl
import threading
import time
import urllib.request
import zlib
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import SplitResult, quote, unquote, urlsplit

from pytest_osfoundry._masking import mask_url, secrets_in
from pytest_osfoundry._vocabulary import VERSION
from pytest_osfoundry.client._errors import (
    ConnectionLost,
    DeadlineExceeded,
    ProtocolViolation,
    ReplyLost,
    ResponseTooLarge,
)
from pytest_osfoundry.client._jsonrpc import answer_end, content_type
from pytest_osfoundry.http import Response

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MAX_BYTES",
    "IDLE_LIMIT",
    "HttpTransport",
    "StreamEnd",
    "format_size",
]

DEFAULT_DEADLINE = 10.0
"""Seconds a whole exchange may take unless told otherwise."""

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Largest response body read unless told otherwise (16 MiB)."""

StreamEnd = Callable[[bytes], Callable[[bytes], bool] | None]
"""From a request's body, where the event stream answering it ends: a function fed the
stream's bytes as they arrive, True once the reply is complete; ``None`` when nothing on
the stream answers the request (its headers are the whole reply)."""

_RECV = 64 * 1024
IDLE_LIMIT = 4.0
"""Seconds a kept connection may sit idle and still be used: servers commonly close
theirs after 5 s (uvicorn, Node), and a request sent as they close is reset."""
_MAX_LINE = 65536
"""Longest status, header or chunk-size line read (http.client's own limit)."""
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_NO_BODY_STATUS = frozenset({204, 304})
_STATUS_LINE = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: ([^\r\n]*))?\r?\n")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""A header name (RFC 9110 token)."""
_FOLD = re.compile(r"\r?\n[ \t]+")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""What a header value may not hold (RFC 9110 field-value: tabs are allowed)."""
_HEAD_DEFECTS = (
    email.errors.MissingHeaderBodySeparatorDefect,  # a line without a colon
    email.errors.FirstHeaderLineIsContinuationDefect,
    email.errors.InvalidHeaderDefect,  # an empty name
)
"""What the email parser under http.client notes of a malformed header line (it also
notes, of a multipart media type, a body it was not given: not the server's fault)."""
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]+)[ \t]*(?:;[^\r\n]*)?\r?\n")
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?"


def format_size(size: int) -> str:
    """``16 MiB``, ``512 KiB`` or ``100 bytes``: a size as a person reads it."""
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} byte{'' if size == 1 else 's'}"


# --------------------------------------------------------------------- the deadline
def _left(deadline: float) -> float:
    """Seconds left before ``deadline``; ``TimeoutError`` once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the exchange's deadline has passed")
    return left


class _Socket(socket.socket):
    """A TCP socket whose every read and write ends by :attr:`deadline`."""

    deadline: float

    def recv_into(self, buffer: WriteableBuffer, nbytes: int = 0, flags: int = 0) -> int:
        self.settimeout(_left(self.deadline))
        return super().recv_into(buffer, nbytes, flags)

    def sendall(self, data: ReadableBuffer, flags: int = 0) -> None:
        self.settimeout(_left(self.deadline))
        super().sendall(data, flags)


class _TlsSocket(ssl.SSLSocket):
    """:class:`_Socket` with TLS: every read and write ends by :attr:`deadline`."""

    deadline: float

    def recv_into(self, buffer: WriteableBuffer, nbytes: int | None = None, flags: int = 0) -> int:
        self.settimeout(_left(self.deadline))
        return super().recv_into(buffer, nbytes, flags)

    def sendall(self, data: ReadableBuffer, flags: int = 0) -> None:
        self.settimeout(_left(self.deadline))
        super().sendall(data, flags)


def _tls_context() -> ssl.SSLContext:
    """A verifying TLS client context with the trust store httpx would use."""
    cafile = os.environ.get("SSL_CERT_FILE") or None
    capath = None if cafile else os.environ.get("SSL_CERT_DIR") or None
    if cafile is None and capath is None:
        import certifi

        cafile = certifi.where()
    context = ssl.create_default_context(cafile=cafile, capath=capath)
    context.set_alpn_protocols(["http/1.1"])
    context.sslsocket_class = _TlsSocket
    return context


# --------------------------------------------------------------------- reading strictly
class _Malformed(http.client.HTTPException):
    """An answer whose head breaks HTTP/1.1's syntax."""


class _Response(http.client.HTTPResponse):
    """http.client's answer, read as strictly as a conformance tool must.

    Overrides two hooks http.client has had since Python 3.0 (``_read_status``,
    ``_read_next_chunk_size``); tests/client/test_client_http_transport.py fails if a
    later Python stops calling them.
    """

    fields: dict[str, str]
    """The headers: lower-case names, repeats joined with ``", "``, folds unfolded."""

    def _read_status(self) -> tuple[str, int, str]:
        """The final answer's status line; interim ``1xx`` answers skipped whole."""
        while True:
            line = self.fp.readline(_MAX_LINE + 1)
            if not line:
                raise http.client.RemoteDisconnected("the server closed the connection")
            match = _STATUS_LINE.fullmatch(line)
            if match is None:
                raise _Malformed("malformed status line")
            status = int(match.group(2))
            if not 100 <= status < 200 or status == 101:
                reason = (match.group(3) or b"").decode("latin-1")
                return f"HTTP/1.{match.group(1).decode()}", status, reason
            http.client.parse_headers(self.fp)  # an interim answer's headers: dropped

    def begin(self) -> None:
        super().begin()
        if any(isinstance(defect, _HEAD_DEFECTS) for defect in self.msg.defects):
            raise _Malformed("malformed header line")
        fields: dict[str, str] = {}
        for name, raw in self.msg.items():
            value = (_FOLD.sub(" ", raw) if "\n" in raw else raw).strip()
            if _TOKEN.fullmatch(name) is None or _CONTROL.search(value):
                raise _Malformed("malformed header line")
            key = name.lower()
            fields[key] = f"{fields[key]}, {value}" if key in fields else value
        self.fields = fields
        coding = fields.get("transfer-encoding")
        if coding is not None:
            if coding.lower() != "chunked":
                raise _Malformed(f"unsupported Transfer-Encoding {coding!r}")
            if not self.chunked:  # " chunked ": http.client compares the raw value
                self.chunked, self.chunk_left = True, None
                if self.length != 0:  # 0: an answer that has no body (HEAD, 204, 304)
                    self.length = None
        lengths = {v.strip() for v in fields.get("content-length", "").split(",") if v.strip()}
        if coding is None and lengths:
            if len(lengths) > 1:
                raise _Malformed("differing Content-Length values")
            declared = lengths.pop()
            if not declared.isdigit():
                raise _Malformed("malformed Content-Length")
            if self.length is None:  # "2, 2": one length said twice, which http.client skips
                self.length = int(declared)

    def _read_next_chunk_size(self) -> int:
        match = _CHUNK_SIZE.fullmatch(self.fp.readline(_MAX_LINE + 1))
        if match is None:
            raise ValueError("malformed chunk size")  # http.client: IncompleteRead
        return int(match.group(1), 16)


def _decoder(encodings: str) -> Callable[[bytes, int], bytes] | None:
    """A function decoding ``gzip``/``deflate`` pieces in order (unknown codings are
    passed through); ``None`` when there is nothing to decode.

    ``decode(piece, room)`` returns at most ``room + 1`` bytes: more than ``room`` means
    the body is past the size cap (at any step), so a small compressed body that would
    decode to gigabytes is stopped without them ever being in memory.
    """
    steps: list[Callable[[bytes, int], bytes]] = []
    for coding in reversed([c.strip().lower() for c in encodings.split(",") if c.strip()]):
        if coding in ("gzip", "x-gzip"):
            steps.append(zlib.decompressobj(zlib.MAX_WBITS | 16).decompress)
        elif coding == "deflate":
            steps.append(_Deflate().decompress)
    if not steps:
        return None

    def decode(piece: bytes, room: int) -> bytes:
        for step in steps:
            piece = step(piece, room + 1)
            if len(piece) > room:
                break  # past the cap: the caller stops reading
        return piece

    return decode


class _Deflate:
    """``deflate`` as servers send it: zlib-wrapped, or raw."""

    def __init__(self) -> None:
        self._first = True
        self._inner = zlib.decompressobj()

    def decompress(self, piece: bytes, limit: int) -> bytes:
        if self._first:
            self._first = False
            try:
                return self._inner.decompress(piece, limit)
            except zlib.error:
                self._inner = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._inner.decompress(piece, limit)


def _tokens(value: str | None) -> set[str]:
    """The comma-separated tokens of a header value, lower-cased."""
    return {t.strip().lower() for t in (value or "").split(",") if t.strip()}


# --------------------------------------------------------------------- where to connect
class _Route(NamedTuple):
    """How requests to one origin travel: what to connect to, and how."""

    host: str
    """Where the TCP connection goes: the origin's host, or the proxy's."""
    port: int
    tls_host: str | None
    """The host whose certificate TLS checks (``None``: plain HTTP)."""
    tunnel: tuple[str, int] | None
    """The origin a proxy's ``CONNECT`` opens (``https://`` through a proxy)."""
    prefix: str
    """Put before the path in the request line: the origin when a proxy forwards it."""
    host_field: str
    """The ``Host`` header: the host (bracketed if IPv6), with its port unless default."""
    headers: tuple[tuple[str, str], ...]
    """Added to each request unless the caller sent the same header (credentials)."""
    tunnel_headers: tuple[tuple[str, str], ...]


class _Unsendable(Exception):
    """A URL (or its proxy) this transport cannot send to; the message says why."""


def _basic(user: str, password: str) -> str:
    pair = f"{unquote(user)}:{unquote(password)}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def _route(parts: SplitResult, proxies: Mapping[str, str]) -> _Route:
    """How to reach the origin of ``parts``, the proxy environment ``proxies`` read."""
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise _Unsendable(f"the scheme {scheme or 'none'!r} is not http or https")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise _Unsendable("its port is not a number") from None
    host = parts.hostname
    if not host:
        raise _Unsendable("it names no host")
    field = f"[{host}]" if ":" in host else host
    if port != (443 if scheme == "https" else 80):
        field += f":{port}"
    headers: tuple[tuple[str, str], ...] = ()
    if parts.username is not None or parts.password is not None:
        headers = (("Authorization", _basic(parts.username or "", parts.password or "")),)
    proxy = proxies.get(scheme) or proxies.get("all")
    bypass: Callable[..., bool] = getattr(urllib.request, "proxy_bypass_environment")  # noqa: B009 - not in typeshed
    tls_host = host if scheme == "https" else None
    if not proxy or bypass(host, proxies):
        return _Route(host, port, tls_host, None, "", field, headers, ())
    proxy = proxy if "://" in proxy else "http://" + proxy
    proxied = urlsplit(proxy)
    if proxied.scheme.lower() != "http" or not proxied.hostname:
        raise _Unsendable(f"its proxy {mask_url(proxy)} is not an http:// proxy")
    try:
        proxy_port = proxied.port or 80
    except ValueError:
        raise _Unsendable(f"its proxy {mask_url(proxy)} has a port that is not a number") from None
    auth: tuple[tuple[str, str], ...] = ()
    if proxied.username is not None or proxied.password is not None:
        auth = (("Proxy-Authorization", _basic(proxied.username or "", proxied.password or "")),)
    if scheme == "https":
        return _Route(proxied.hostname, proxy_port, host, (host, port), "", field, headers, auth)
    return _Route(
        proxied.hostname, proxy_port, None, None, f"http://{field}", field, headers + auth, ()
    )


def _printable(name: str) -> str:
    """A header's name as an error may show it: its visible ASCII characters only."""
    shown = "".join(c for c in name if 0x21 <= ord(c) <= 0x7E)
    return repr(shown[:64])


def _target(parts: SplitResult) -> str:
    """The request target: the path (``/`` if none) and query, percent-encoded where
    they must be (spaces, non-ASCII), percent signs kept."""
    target = quote(parts.path or "/", safe=_PATH_SAFE)
    if parts.query:
        target += "?" + quote(parts.query, safe=_QUERY_SAFE)
    return target


class _Failed(Exception):
    """The connection could not be opened (``ConnectError``: TCP, a proxy's tunnel, TLS)
    or the request not written (``WriteError``); ``cause`` names which."""

    def __init__(self, cause: str, detail: str) -> None:
        super().__init__(detail)
        self.cause = cause
        self.detail = detail


class _Connection(http.client.HTTPConnection):
    """One keep-alive connection of a route, its socket bounded by :attr:`deadline`."""

    response_class = _Response
    idle_since = 0.0
    """When it was last put back in the pool (``time.monotonic()``)."""

    def __init__(self, route: _Route, tls: ssl.SSLContext | None, deadline: float) -> None:
        super().__init__(route.host, route.port)
        self.route = route
        self.deadline = deadline
        self._tls = tls
        # http.client opens its socket through this attribute (since Python 3.0); ours
        # is bounded by the deadline. tests/hostile/test_hostile_client.py fails (a drip
        # of headers hangs) if a later Python stops using it.
        self._create_connection = self._open
        if route.tunnel is not None:
            self.set_tunnel(*route.tunnel, headers=dict(route.tunnel_headers))

    def aim(self, deadline: float) -> None:
        """Bound the next exchange by ``deadline`` (``time.monotonic()``)."""
        self.deadline = deadline
        if isinstance(self.sock, (_Socket, _TlsSocket)):
            self.sock.deadline = deadline

    _holding = False
    _held = b""

    def hold_head(self) -> None:
        """Keep the next write (a request's head) to send it with the one after (its
        body): one write, one segment (http.client writes them apart, waking a server
        twice)."""
        self._holding, self._held = True, b""

    def send(self, data: Any) -> None:
        if self._holding:
            self._holding, self._held = False, data
            return
        if self._held:
            data, self._held = self._held + data, b""
        super().send(data)

    def getresponse(self) -> _Response:
        response = super().getresponse()
        assert isinstance(response, _Response)  # response_class
        return response

    def _open(
        self, address: tuple[str, int], timeout: object, source: object = None
    ) -> socket.socket:
        try:
            raw = socket.create_connection(address, _left(self.deadline))
        except TimeoutError:
            raise
        except OSError as err:
            raise _Failed("ConnectError", str(err)) from err
        sock = _Socket(fileno=raw.detach())
        sock.deadline = self.deadline
        return sock

    def connect(self) -> None:
        try:
            super().connect()  # TCP, then a proxy's CONNECT tunnel if there is one
            if self._tls is not None:
                assert self.route.tls_host is not None
                self.sock.settimeout(_left(self.deadline))  # the whole handshake
                tls = self._tls.wrap_socket(self.sock, server_hostname=self.route.tls_host)
                assert isinstance(tls, _TlsSocket)  # the context's socket class
                tls.deadline = self.deadline
                self.sock = tls
        except (TimeoutError, _Failed):
            raise
        except OSError as err:  # the tunnel refused, or TLS (certificate, protocol)
            raise _Failed("ConnectError", str(err)) from err


def _usable(conn: _Connection) -> bool:
    """Whether an idle connection may carry a request: open, with nothing to read, and
    not idle for :data:`IDLE_LIMIT` or more."""
    sock = conn.sock
    if sock is None or time.monotonic() - conn.idle_since >= IDLE_LIMIT:
        return False
    try:
        sock.settimeout(0.0)
        sock.recv(1)  # b"": closed by the server; bytes: an answer nobody asked for
    except (BlockingIOError, ssl.SSLWantReadError):
        return True  # nothing to read (TLS: only the handshake's own records)
    except OSError:
        return False
    return False


# --------------------------------------------------------------------- one exchange
class _Reading:
    """One exchange being read: how far it came, and what to say if it fails."""

    def __init__(
        self,
        transport: HttpTransport,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes,
    ) -> None:
        self.transport = transport
        self.method = method
        self.body = body
        self._url = url
        self._headers = headers
        self.phase = "headers"  # then "body", or "stream" for an unanswered event stream

    @property
    def where(self) -> str:
        """The URL with token-like values masked (worked out only for an error)."""
        return mask_url(self._url, secrets_in(self._url, self._headers))

    def too_slow(self) -> DeadlineExceeded:
        """The error for a deadline that passed, worded by how far the reply had come."""
        seconds = f"{self.transport.timeout:g} s"
        what = {
            "headers": f"no answer within {seconds}",
            "body": f"the response body did not arrive within {seconds}",
            "stream": f"the event stream stayed open without an answer for {seconds}",
        }[self.phase]
        return DeadlineExceeded(f"{what} ({self.method} {self.where})", url=self.where)

    def too_large(self) -> ResponseTooLarge:
        size = format_size(self.transport.max_bytes)
        return ResponseTooLarge(
            f"the response exceeded {size} ({self.method} {self.where})", url=self.where
        )

    def lost(self, cause: str, detail: str = "") -> ReplyLost:
        """No reply: :class:`ConnectionLost` before the answer's headers, else ``ReplyLost``."""
        kind = ConnectionLost if self.phase == "headers" else ReplyLost
        message = f"no reply from {self.method} {self.where}: {cause} (failed)"
        return kind(message + (f": {detail}" if detail else ""), url=self.where)


class HttpTransport:
    """The kit's :class:`~pytest_osfoundry.client.Transport` over HTTP/1.1 (``http://``
    and ``https://``), every exchange bounded.

    * ``timeout``: seconds for the whole exchange (connect, headers and body);
    * ``max_bytes``: the largest body read (after decoding);
    * ``keep``: idle connections kept open per origin for later requests;
    * ``stream_end``: where an event stream answering a request ends (:data:`StreamEnd`;
      by default the JSON-RPC answer to the request's id).

    Failures raise ``ReplyLost`` naming the URL (token-like query values masked):
    :class:`~pytest_osfoundry.client.DeadlineExceeded` ("no answer within 10 s",
    "the response body did not arrive within 10 s", "the event stream stayed open
    without an answer for 10 s"), :class:`~pytest_osfoundry.client.ResponseTooLarge`
    ("the response exceeded 16 MiB"), and
    :class:`~pytest_osfoundry.client.ConnectionLost` for a connection refused, reset or
    answered with malformed HTTP before the answer's headers, the cause named as httpx
    names it (``ConnectError``, ``ReadError``, ``WriteError``, ``RemoteProtocolError``);
    a body that cannot be decoded is a ``ProtocolViolation``. A server that answers
    from the request's head (a 413) and closes before reading its body: the failed
    write is followed by a read of that answer.

    Safe to share between threads (each request has a connection to itself).
    :meth:`close` closes the kept connections.
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_DEADLINE,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: int = 20,
        stream_end: StreamEnd = answer_end,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes!r}")
        if keep < 0:
            raise ValueError(f"keep must be 0 or more, got {keep!r}")
        self.timeout = float(timeout)
        self.max_bytes = max_bytes
        self.keep = keep
        self.stream_end = stream_end
        self._proxies = urllib.request.getproxies()
        self._routes: dict[tuple[str, str], _Route] = {}
        self._idle: dict[_Route, list[_Connection]] = {}
        self._lock = threading.Lock()
        self._tls: ssl.SSLContext | None = None
        self._agent = f"pytest-osfoundry/{VERSION}"

    # ------------------------------------------------------------------ public
    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Send the request and read the reply, within the deadline and the size cap."""
        deadline = time.monotonic() + self.timeout
        reading = _Reading(self, method, url, headers, body)
        parts = urlsplit(url)
        try:
            route = self._route_of(parts)
        except _Unsendable as err:
            raise ReplyLost(
                f"no reply from {method} {reading.where}: cannot send to this URL ({err})",
                url=reading.where,
            ) from None
        target, fields, closing = self._head(method, parts, route, headers, body)
        conn = self._checkout(route, deadline)
        try:
            reply, reusable = self._exchange(conn, method, target, fields, body, reading)
        except TimeoutError:
            conn.close()
            raise reading.too_slow() from None
        except _Failed as err:
            conn.close()
            raise reading.lost(
                err.cause, err.detail if err.cause == "ConnectError" else ""
            ) from err
        except http.client.HTTPException as err:  # RemoteDisconnected too
            conn.close()
            raise reading.lost("RemoteProtocolError") from err
        except OSError as err:
            conn.close()
            raise reading.lost("ReadError") from err
        except BaseException:
            conn.close()
            raise
        if reusable and not closing:
            self._checkin(route, conn)
        else:
            conn.close()
        return reply

    def close(self) -> None:
        """Close every kept connection (idempotent)."""
        with self._lock:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()

    def __enter__(self) -> HttpTransport:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HttpTransport(timeout={self.timeout:g}, max_bytes={self.max_bytes})"

    # ------------------------------------------------------------------ internals
    def _route_of(self, parts: SplitResult) -> _Route:
        key = (parts.scheme, parts.netloc)
        route = self._routes.get(key)
        if route is None:
            route = self._routes[key] = _route(parts, self._proxies)
        return route

    def _head(
        self,
        method: str,
        parts: SplitResult,
        route: _Route,
        headers: Mapping[str, str],
        body: bytes,
    ) -> tuple[str, list[tuple[str, str]], bool]:
        """The request target, the headers to send (as written), and whether they ask
        for the connection to be closed after the answer."""
        fields: dict[str, tuple[str, str]] = {"host": ("Host", route.host_field)}
        if body or method.upper() in _BODY_METHODS:
            fields["content-length"] = ("Content-Length", str(len(body)))
        fields["accept"] = ("Accept", "*/*")
        fields["accept-encoding"] = ("Accept-Encoding", "gzip, deflate")
        fields["connection"] = ("Connection", "keep-alive")
        fields["user-agent"] = ("User-Agent", self._agent)
        for name, value in route.headers:
            fields[name.lower()] = (name, value)
        for name, value in headers.items():
            fields[name.lower()] = (name, value)
        closing = "close" in _tokens(fields["connection"][1])
        return route.prefix + _target(parts), list(fields.values()), closing

    def _checkout(self, route: _Route, deadline: float) -> _Connection:
        while True:
            with self._lock:
                conns = self._idle.get(route)
                conn = conns.pop() if conns else None
            if conn is None:
                if route.tls_host is not None and self._tls is None:
                    self._tls = _tls_context()  # made once, when first needed
                return _Connection(route, self._tls if route.tls_host else None, deadline)
            if _usable(conn):
                conn.aim(deadline)
                return conn
            conn.close()

    def _checkin(self, route: _Route, conn: _Connection) -> None:
        conn.idle_since = time.monotonic()
        with self._lock:
            conns = self._idle.setdefault(route, [])
            if len(conns) < self.keep:
                conns.append(conn)
                return
        conn.close()

    def _exchange(
        self,
        conn: _Connection,
        method: str,
        target: str,
        fields: list[tuple[str, str]],
        body: bytes,
        reading: _Reading,
    ) -> tuple[Response, bool]:
        """Send the request and read its answer; the reply and whether the connection
        may carry another request."""
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        except ValueError:  # a method or target http.client cannot write (CR/LF, ...)
            raise ValueError(
                f"{method} {reading.where} cannot be sent: its method or target holds a "
                "character a request line cannot carry"
            ) from None
        for name, value in fields:
            try:
                conn.putheader(name, value)
            except ValueError:  # UnicodeEncodeError too
                # Named, never shown: the value may be a credential (http.client's own
                # message repeats it whole).
                raise ValueError(
                    f"the {_printable(name)} header of {method} {reading.where} cannot be "
                    "sent: its value holds a character a header cannot carry (CR, LF or "
                    "another control character, or one outside Latin-1)"
                ) from None
        if body:
            conn.hold_head()
        try:
            conn.endheaders(body or None)  # connects first when the connection is new
        except (TimeoutError, _Failed):
            raise
        except OSError as unsent:
            # A server may answer (413, 400) and close before it has read the whole
            # request; its answer is still there to read.
            try:
                response = conn.getresponse()
            except Exception:
                raise _Failed("WriteError", str(unsent)) from unsent
            reply, _ = self._answer(conn, response, method, reading)
            return reply, False
        return self._answer(conn, conn.getresponse(), method, reading)

    def _answer(
        self, conn: _Connection, response: _Response, method: str, reading: _Reading
    ) -> tuple[Response, bool]:
        """The reply read from ``response``, and whether its connection may be reused."""
        try:
            return self._read(conn, response, method, reading)
        finally:
            response.close()  # its connection stays open only if the transport keeps it

    def _read(
        self, conn: _Connection, response: _Response, method: str, reading: _Reading
    ) -> tuple[Response, bool]:
        status, headers = response.status, response.fields
        reusable = response.version == 11 and "close" not in _tokens(headers.get("connection"))
        if method.upper() == "HEAD" or status in _NO_BODY_STATUS or status < 200:
            return Response(status, headers, b""), reusable and status != 101
        cap = self.max_bytes
        if response.length is not None and response.length > cap:
            raise reading.too_large()
        ended = None
        if content_type(headers) == "text/event-stream":
            ended = self.stream_end(reading.body)
            if ended is None:  # nothing of ours can come on it: its headers are the answer
                return Response(status, headers, b""), False
        reading.phase = "stream" if ended is not None else "body"
        decode = _decoder(headers.get("content-encoding", ""))
        parts: list[bytes] = []
        size = 0
        while True:
            piece = response.read1(_RECV)
            if not piece:
                break
            if decode is not None:
                try:
                    piece = decode(piece, cap - size)
                except zlib.error as err:
                    raise ProtocolViolation(
                        f"reply from {reading.method} {reading.where} could not be decoded: "
                        "DecodingError"
                    ) from err
            size += len(piece)
            if size > cap:
                raise reading.too_large()
            parts.append(piece)
            if ended is not None and ended(piece):
                reading.phase = "body"
                return Response(status, headers, b"".join(parts)), False
            if time.monotonic() >= conn.deadline:
                raise reading.too_slow()
        if response.length:  # the connection closed before the declared length came
            raise http.client.IncompleteRead(b"", response.length)
        reading.phase = "body"
        return Response(status, headers, b"".join(parts)), reusable and conn.sock is not None
