"""HTTP/1.1 over plain sockets: the conformance suite's transport for ``http://`` URLs.

:class:`SocketTransport` keeps every promise of
:class:`~pytest_osfoundry.client.HttpxTransport` (one deadline for the whole exchange,
the size cap, an event stream read only until the answer to the request's id, the
same errors in the same words) with a few hundred lines of standard library instead
of httpx, httpcore and h11. It exists for speed on the path users wait for: a
conformance run is some 500 requests, and through httpx each round trip takes 2.4x
as long (``benchmarks/bench_http_paths.py``; the whole suite against ``embedded``
1.35x: README, "Speed"). What it does not do, it hands to ``fallback`` (an ``HttpxTransport``):
``https://`` URLs, URLs with credentials in them, and hosts the environment sends
through a proxy (``HTTP_PROXY``/``ALL_PROXY``/``NO_PROXY``, read as httpx reads them).

What it sends: the caller's headers, plus those httpx would add when the caller gave
none (``Host``, ``Content-Length``, ``Accept: */*``, ``Accept-Encoding: gzip,
deflate``, ``Connection: keep-alive`` and a ``User-Agent`` naming the kit). What it
reads: a status line (interim ``1xx`` answers skipped), headers (lower-cased names,
repeated ones joined with ``", "``, folded ones unfolded), then a body framed by ``Content-Length``,
``chunked``, or the connection's close; ``gzip`` and ``deflate`` bodies are decoded.
Malformed framing is the server's fault and is reported as httpx's
``RemoteProtocolError`` was. A connection is kept for the next request only when its
answer was read whole; an idle one the server has closed is dropped before use.
Nothing is retried.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time
import urllib.request
import zlib
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import NamedTuple
from urllib.parse import quote, urlsplit

from pytest_osfoundry.client._errors import ProtocolViolation, ReplyLost
from pytest_osfoundry.client._jsonrpc import AnswerWatch, content_type, request_id_of
from pytest_osfoundry.client._transport import (
    ConnectionLost,
    HttpxTransport,
    Transport,
    _Reading,
)
from pytest_osfoundry.http import Response

__all__ = ["SocketTransport", "serves_directly"]

_MAX_HEAD = 100 * 1024
"""Largest status line and headers read (httpcore's limit for h11)."""

_RECV = 64 * 1024
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_NO_BODY_STATUS = frozenset({204, 304})
_STATUS_LINE = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: [^\r\n]*)?")
_BLANK_LINE = re.compile(rb"\n\r?\n")
"""The end of a head: a line end, then an empty line (CRLF or bare LF, as h11 reads)."""
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""A header name (RFC 9110 token): anything else is malformed, as h11 says."""
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?"


def _user_agent() -> str:
    from pytest_osfoundry import __version__

    return f"pytest-osfoundry/{__version__}"


def _proxied(host: str) -> bool:
    """Whether httpx (which reads the environment) would send ``host`` through a proxy."""
    names = ("http_proxy", "all_proxy")
    if not any(os.environ.get(n) or os.environ.get(n.upper()) for n in names):
        return False
    bypass: Callable[[str], bool] = getattr(urllib.request, "proxy_bypass_environment")  # noqa: B009 - not in typeshed
    return not bypass(host)


class _Direct(NamedTuple):
    """What a request to a URL served directly needs of it, read once."""

    host: str
    port: int
    target: str
    """The request target: the path (``/`` if none) and query, percent-encoded."""
    host_field: str
    """The ``Host`` header: the host (bracketed if IPv6), with its port unless 80."""


def _direct(url: str) -> _Direct | None:
    """``url`` read for :class:`SocketTransport`, or ``None`` when it goes to the
    fallback (:func:`serves_directly`)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a port that is not a number
        return None
    host = parts.hostname
    if parts.scheme.lower() != "http" or not host or "@" in parts.netloc or _proxied(host):
        return None
    target = quote(parts.path or "/", safe=_PATH_SAFE)
    if parts.query:
        target += "?" + quote(parts.query, safe=_QUERY_SAFE)
    field = f"[{host}]" if ":" in host else host
    if port is not None and port != 80:
        field += f":{port}"
    return _Direct(host, port or 80, target, field)


def serves_directly(url: str) -> bool:
    """Whether :class:`SocketTransport` sends to ``url`` itself rather than through its
    fallback: a plain ``http://`` URL, no credentials in it, and no proxy for its host."""
    return _direct(url) is not None


class _Failure(Exception):
    """A transport-level failure, named as httpx names it (``ConnectError``...)."""

    def __init__(self, name: str, detail: str = "") -> None:
        super().__init__(detail or name)
        self.name = name


class _Conn:
    """One TCP connection: its socket and the bytes read past the last answer."""

    __slots__ = ("buf", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()

    def alive(self) -> bool:
        """Whether an idle connection is still usable: nothing to read (no close, no
        stray bytes) and nothing left over from the last answer."""
        if self.buf:
            return False
        try:
            self.sock.setblocking(False)
            try:
                self.sock.recv(1, socket.MSG_PEEK)
            finally:
                self.sock.setblocking(True)
        except BlockingIOError:
            return True  # nothing to read: still open, and quiet
        except OSError:
            return False
        return False  # b"": closed by the server; bytes: an answer nobody asked for

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class _Exchange:
    """One request on one connection, every socket operation bounded by ``at``."""

    def __init__(self, conn: _Conn, at: float) -> None:
        self.conn = conn
        self.at = at

    def _timeout(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise TimeoutError("the exchange's deadline has passed")
        return left

    def send(self, data: bytes) -> None:
        try:
            self.conn.sock.settimeout(self._timeout())
            self.conn.sock.sendall(data)
        except TimeoutError:
            raise
        except OSError as err:
            raise _Failure("WriteError", str(err)) from err

    def _fill(self) -> bool:
        """Read more bytes into the buffer; False at the end of the stream."""
        try:
            self.conn.sock.settimeout(self._timeout())
            data = self.conn.sock.recv(_RECV)
        except TimeoutError:
            raise
        except OSError as err:
            raise _Failure("ReadError", str(err)) from err
        if not data:
            return False
        self.conn.buf += data
        return True

    def _take(self, n: int) -> bytes:
        buf = self.conn.buf
        out = bytes(buf[:n])
        del buf[:n]
        return out

    def line(self, limit: int, what: str) -> bytes:
        """One line without its line end; ``what`` names it in a framing error."""
        start = 0
        while True:
            end = self.conn.buf.find(b"\n", start)
            if end >= 0:
                return self._take(end + 1).rstrip(b"\r\n")
            if len(self.conn.buf) > limit:
                raise _Failure("RemoteProtocolError", f"{what} is too long")
            start = len(self.conn.buf)
            if not self._fill():
                raise _Failure("RemoteProtocolError", "the server closed the connection")

    def _head_lines(self) -> list[bytes]:
        """The lines of the next head (status line first), read up to its blank line."""
        start = 0
        while True:
            found = _BLANK_LINE.search(self.conn.buf, start)
            if found is not None:
                lines = self._take(found.end()).split(b"\n")[:-2]
                return [line[:-1] if line.endswith(b"\r") else line for line in lines]
            if len(self.conn.buf) > _MAX_HEAD:
                raise _Failure("RemoteProtocolError", "the response head is too long")
            start = max(0, len(self.conn.buf) - 3)
            if not self._fill():
                raise _Failure("RemoteProtocolError", "the server closed the connection")

    def head(self) -> tuple[int, int, list[tuple[str, str]]]:
        """``(minor version, status, headers)`` of the final answer (1xx skipped)."""
        while True:
            status_line, *lines = self._head_lines()
            match = _STATUS_LINE.fullmatch(status_line)
            if match is None:
                raise _Failure("RemoteProtocolError", "malformed status line")
            minor, status = int(match.group(1)), int(match.group(2))
            fields: list[tuple[str, str]] = []
            for raw in lines:
                if raw[:1] in (b" ", b"\t") and fields:  # obs-fold: unfolded, as h11 does
                    name_, value_ = fields[-1]
                    fields[-1] = (name_, f"{value_} {raw.strip().decode('latin-1')}".strip())
                    continue
                name, sep, value = raw.partition(b":")
                if not sep or _TOKEN.fullmatch(name) is None:
                    raise _Failure("RemoteProtocolError", "malformed header line")
                fields.append((name.decode("ascii").lower(), value.strip().decode("latin-1")))
            if 100 <= status < 200 and status != 101:
                continue  # an interim answer (100 Continue, 103 Early Hints)
            return minor, status, fields

    def exactly(self, n: int) -> Iterator[bytes]:
        """The next ``n`` bytes, in the pieces they arrive in."""
        while n > 0:
            if not self.conn.buf and not self._fill():
                raise _Failure("RemoteProtocolError", "the body ended before its length")
            piece = self._take(min(n, len(self.conn.buf)))
            n -= len(piece)
            yield piece

    def chunked(self) -> Iterator[bytes]:
        """A ``chunked`` body's data, trailers read and dropped."""
        while True:
            size_line = self.line(_MAX_HEAD, "a chunk size line")
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _Failure("RemoteProtocolError", "malformed chunk size") from None
            if size < 0:
                raise _Failure("RemoteProtocolError", "malformed chunk size")
            if size == 0:
                while self.line(_MAX_HEAD, "a trailer"):
                    pass
                return
            yield from self.exactly(size)
            if self.line(2, "a chunk's end"):
                raise _Failure("RemoteProtocolError", "a chunk did not end where its size said")

    def until_close(self) -> Iterator[bytes]:
        """Everything until the server closes the connection."""
        while True:
            if self.conn.buf:
                yield self._take(len(self.conn.buf))
            if not self._fill():
                return


def _decoder(encodings: str) -> Callable[[bytes], bytes] | None:
    """A function decoding ``gzip``/``deflate`` pieces in order (unknown codings are
    passed through, as httpx does); ``None`` when there is nothing to decode."""
    steps: list[Callable[[bytes], bytes]] = []
    for coding in reversed([c.strip().lower() for c in encodings.split(",") if c.strip()]):
        if coding in ("gzip", "x-gzip"):
            steps.append(zlib.decompressobj(zlib.MAX_WBITS | 16).decompress)
        elif coding == "deflate":
            steps.append(_Deflate().decompress)
    if not steps:
        return None

    def decode(piece: bytes) -> bytes:
        for step in steps:
            piece = step(piece)
        return piece

    return decode


class _Deflate:
    """``deflate`` as servers send it: zlib-wrapped, or raw (httpx accepts both)."""

    def __init__(self) -> None:
        self._first = True
        self._inner = zlib.decompressobj()

    def decompress(self, piece: bytes) -> bytes:
        if self._first:
            self._first = False
            try:
                return self._inner.decompress(piece)
            except zlib.error:
                self._inner = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._inner.decompress(piece)


class SocketTransport:
    """The kit's :class:`~pytest_osfoundry.client.Transport` over plain sockets.

    ``timeout`` and ``max_bytes`` bound each exchange as
    :class:`~pytest_osfoundry.client.HttpxTransport` does (a tighter
    ``exchange_deadline`` of the calling thread wins); ``keep`` is how many idle
    connections are kept open per origin. Requests it does not serve itself
    (:func:`serves_directly`) go to ``fallback``, by default an ``HttpxTransport`` with
    the same bounds, made when first needed. Safe to share between threads: each
    request has a connection to itself. :meth:`close` closes the kept connections and
    the fallback.
    """

    def __init__(
        self,
        *,
        timeout: float,
        max_bytes: int,
        keep: int = 20,
        fallback: Transport | None = None,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes!r}")
        if keep < 0:
            raise ValueError(f"keep must be 0 or more, got {keep!r}")
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.keep = keep
        self._fallback = fallback
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._lock = threading.Lock()
        self._agent = _user_agent()

    # ------------------------------------------------------------------ public
    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Send the request and read the reply, within the deadline and the size cap."""
        direct = _direct(url)
        if direct is None:
            return self._fallback_transport().request(method, url, headers, body)
        return self._send(method, url, direct, headers, body)

    def close(self) -> None:
        """Close every kept connection, and the fallback (idempotent)."""
        with self._lock:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()
        closer = getattr(self._fallback, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> SocketTransport:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SocketTransport(timeout={self.timeout}, max_bytes={self.max_bytes})"

    # ------------------------------------------------------------------ internals
    def _fallback_transport(self) -> Transport:
        if self._fallback is None:
            self._fallback = HttpxTransport(timeout=self.timeout, max_bytes=self.max_bytes)
        return self._fallback

    def _checkout(self, key: tuple[str, int]) -> _Conn | None:
        while True:
            with self._lock:
                conns = self._idle.get(key)
                conn = conns.pop() if conns else None
            if conn is None or conn.alive():
                return conn
            conn.close()

    def _checkin(self, key: tuple[str, int], conn: _Conn) -> None:
        with self._lock:
            conns = self._idle.setdefault(key, [])
            if len(conns) < self.keep:
                conns.append(conn)
                return
        conn.close()

    def _deadline(self) -> float:
        from pytest_osfoundry.client._bounded_http import time_left

        at = time.monotonic() + self.timeout
        left = time_left()
        return at if left is None else min(at, time.monotonic() + left)

    def _send(
        self, method: str, url: str, direct: _Direct, headers: Mapping[str, str], body: bytes
    ) -> Response:
        reading = _Reading(self, method, url, headers, body)
        at = self._deadline()
        key = (direct.host, direct.port)
        conn = self._checkout(key)
        try:
            if conn is None:
                conn = self._connect(direct.host, direct.port, at)
            exchange = _Exchange(conn, at)
            try:
                exchange.send(self._head(method, direct, headers, body) + body)
            except _Failure as unsent:
                # As httpcore does: a server may answer (413, 400) and close before it
                # has read the whole request; its answer is still there to read.
                try:
                    response, _ = self._answer(exchange, method, reading)
                except _Failure:
                    raise unsent from None
                conn.close()
                return response
            response, reusable = self._answer(exchange, method, reading)
        except TimeoutError:
            if conn is not None:
                conn.close()
            raise reading.too_slow() from None
        except _Failure as err:
            if conn is not None:
                conn.close()
            lost = ConnectionLost if reading.phase == "headers" else ReplyLost
            raise lost(
                f"no reply from {method} {reading.where}: {err.name} (failed)", url=reading.where
            ) from err
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        if reusable and "close" not in _tokens(headers, "connection"):
            self._checkin(key, conn)
        else:
            conn.close()
        return response

    def _connect(self, host: str, port: int, at: float) -> _Conn:
        left = at - time.monotonic()
        if left <= 0:
            raise TimeoutError("the exchange's deadline has passed")
        try:
            sock = socket.create_connection((host, port), timeout=left)
        except TimeoutError:
            raise
        except OSError as err:
            raise _Failure("ConnectError", str(err)) from err
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return _Conn(sock)

    def _head(self, method: str, direct: _Direct, headers: Mapping[str, str], body: bytes) -> bytes:
        target = direct.target
        fields: dict[str, tuple[str, str]] = {"host": ("Host", direct.host_field)}
        if body or method.upper() in _BODY_METHODS:
            fields["content-length"] = ("Content-Length", str(len(body)))
        fields["accept"] = ("Accept", "*/*")
        fields["accept-encoding"] = ("Accept-Encoding", "gzip, deflate")
        fields["connection"] = ("Connection", "keep-alive")
        fields["user-agent"] = ("User-Agent", self._agent)
        for name, value in headers.items():
            fields[name.lower()] = (name, value)
        lines = [f"{method} {target} HTTP/1.1"]
        lines += [f"{name}: {value}" for name, value in fields.values()]
        try:
            return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        except UnicodeEncodeError as err:
            raise ValueError(f"a header of {method} {target} is not Latin-1: {err}") from None

    def _answer(self, exchange: _Exchange, method: str, reading: _Reading) -> tuple[Response, bool]:
        """The reply, and whether its connection may carry another request."""
        minor, status, fields = exchange.head()
        headers: dict[str, str] = {}
        for name, value in fields:
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        reusable = minor == 1 and "close" not in _tokens(headers, "connection")
        if method.upper() == "HEAD" or status in _NO_BODY_STATUS or status < 200:
            return Response(status, headers, b""), reusable
        lengths = {v.strip() for v in headers.get("content-length", "").split(",") if v.strip()}
        chunked = "chunked" in _tokens(headers, "transfer-encoding")
        if not chunked and len(lengths) > 1:
            raise _Failure("RemoteProtocolError", "differing Content-Length values")
        length: int | None = None
        if not chunked and lengths:
            declared = lengths.pop()
            if not declared.isdigit():
                raise _Failure("RemoteProtocolError", "malformed Content-Length")
            length = int(declared)
            if length > self.max_bytes:
                raise reading.too_large()
        watch = None
        if content_type(headers) == "text/event-stream":
            rid = request_id_of(reading.body)
            if rid is None:  # nothing of ours can come on it: its headers are the answer
                return Response(status, headers, b""), False
            watch = AnswerWatch(rid)
        reading.phase = "stream" if watch is not None else "body"
        if chunked:
            pieces = exchange.chunked()
        elif length is not None:
            pieces = exchange.exactly(length)
        else:
            pieces, reusable = exchange.until_close(), False
        decode = _decoder(headers.get("content-encoding", ""))
        body: list[bytes] = []
        size = 0
        for piece in pieces:
            if decode is not None:
                try:
                    piece = decode(piece)
                except zlib.error as err:
                    raise ProtocolViolation(
                        f"reply from {reading.method} {reading.where} could not be decoded: "
                        "DecodingError"
                    ) from err
            size += len(piece)
            if size > self.max_bytes:
                raise reading.too_large()
            body.append(piece)
            if watch is not None and watch.feed(piece):
                reading.phase = "body"
                return Response(status, headers, b"".join(body)), False
            if time.monotonic() >= exchange.at:
                raise reading.too_slow()
        reading.phase = "body"
        return Response(status, headers, b"".join(body)), reusable


def _tokens(headers: Mapping[str, str], name: str) -> set[str]:
    """The comma-separated tokens of header ``name`` (any case), lower-cased."""
    values = [v for k, v in headers.items() if k.lower() == name]
    return {t.strip().lower() for v in values for t in v.split(",") if t.strip()}
