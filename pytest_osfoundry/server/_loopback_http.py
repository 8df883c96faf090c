"""The HTTP/1.1 side of the loopback server: gathering, parsing and answering requests.

* :func:`whole` tells, from the bytes gathered so far, whether a request is complete
  enough for a worker to serve without waiting on the client (headers, and a plain
  ``Content-Length`` body), so no worker waits on a slow client.
* :class:`Connection` is one client connection: its socket, its deadline-bounded
  reader and its request handler.
* The request handler parses a plain request head itself (request line, then
  ``name: value`` lines, all already in memory) and leaves anything else to
  :mod:`http.server`'s parser, which answers what is malformed (400, 414, 431, 505);
  it frames strictly (differing ``Content-Length`` values, a malformed length or
  chunked body: 400; a body over 8 MiB: 413), hands the
  :class:`~pytest_osfoundry.http.Request` to the app, writes the answer in one send,
  and logs nothing. The head parser of its own is a speed trick on the path every
  request of the conformance suite takes: http.server's goes through the ``email``
  package (``benchmarks/bench_http_paths.py`` measures both).

The threads that run it are :mod:`~pytest_osfoundry.server._loopback`'s.
"""

from __future__ import annotations

import io
import re
import socket
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from pytest_osfoundry.http import DropConnection, Handler, Request

if TYPE_CHECKING:
    from pytest_osfoundry.server._loopback import LoopbackServer

__all__ = ["MAX_READ", "Connection", "whole"]

MAX_READ = 8 * 1024 * 1024
"""The largest request body served (a larger one is refused with 413)."""


class _Reader:
    """A socket's incoming bytes with ``readline``/``read``, bounded by a deadline.

    Unlike a buffered file it can say whether bytes are already waiting
    (:attr:`pending`), so a connection is only handed back to the selector when
    nothing of a next (pipelined) request sits in memory.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.deadline = float("inf")

    @property
    def pending(self) -> bool:
        """Whether bytes already read wait to be parsed."""
        return bool(self.buf)

    def _fill(self) -> bool:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive within its deadline")
        self.sock.settimeout(left)
        data = self.sock.recv(65536)
        if not data:
            return False
        self.buf += data
        return True

    def _take(self, n: int) -> bytes:
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def readline(self, limit: int = -1) -> bytes:
        """One line with its ``\\n``, at most ``limit`` bytes (what is left at EOF)."""
        start = 0
        while True:
            end = self.buf.find(b"\n", start)
            if end >= 0 and (limit < 0 or end < limit):
                return self._take(end + 1)
            if 0 <= limit <= len(self.buf):
                return self._take(limit)
            start = len(self.buf)
            if not self._fill():
                return self._take(len(self.buf))

    def read(self, n: int) -> bytes:
        """Exactly ``n`` bytes (fewer at EOF)."""
        while len(self.buf) < n and self._fill():
            pass
        return self._take(n)


_HEAD_LIMIT = 64 * 1024
_LENGTH = re.compile(rb"\ncontent-length:[ \t]*(\d{1,12})[ \t]*\r?\n")


def whole(buf: bytearray) -> bool:
    """Whether ``buf`` holds a request a worker can serve without waiting for the client.

    True once the headers are complete and, for a plain ``Content-Length``, the body
    too; at once for ``Expect`` (the client waits for ``100 Continue``), chunked
    bodies and anything odd (the worker refuses what is malformed); and for a head
    over 64 KiB (refused). False for nothing at all, so a worker never waits on an
    idle client.
    """
    if not buf:
        return False
    end = buf.find(b"\r\n\r\n")
    sep = 4
    if end < 0:
        end, sep = buf.find(b"\n\n"), 2
    if end < 0:
        return len(buf) > _HEAD_LIMIT
    head = bytes(buf[:end]).lower() + b"\r\n"
    if b"\nexpect:" in head or b"\ntransfer-encoding:" in head:
        return True
    lengths = _LENGTH.findall(head)
    if len(lengths) != 1:
        return True  # none (no body), or several: the worker decides
    length = int(lengths[0])
    return length > MAX_READ or len(buf) >= end + sep + length  # too large: refused at once


_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_MAX_FIELDS = 100  # http.server's limits (more fields, or a longer line: 431)
_MAX_LINE = 65536
_PLAIN_VERSIONS = {"HTTP/1.1": False, "HTTP/1.0": True}
"""The versions the fast path takes, and whether each closes by default."""


class Fields:
    """A request's header fields: case-insensitive lookups over the lines as sent."""

    __slots__ = ("_pairs",)

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._pairs = [(name.lower(), value) for name, value in pairs]

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of ``name`` (any case), or ``default``."""
        name = name.lower()
        for key, value in self._pairs:
            if key == name:
                return value
        return default

    def get_all(self, name: str) -> list[str]:
        """Every value of ``name`` (any case), in order."""
        name = name.lower()
        return [value for key, value in self._pairs if key == name]

    def lowered(self) -> dict[str, str]:
        """Lower-cased names to values (the last one of a repeated name)."""
        return dict(self._pairs)


def plain_head(buf: bytearray) -> tuple[int, list[tuple[str, str]]] | None:
    """The header fields at the start of ``buf`` and the head's length (with the blank
    line), when every line is a plain ``token: value`` ending in CRLF; ``None`` for
    anything else (no blank line yet, bare LF, folded or malformed lines, too many
    fields, a head over 64 KiB), which http.server's parser then reads and answers.
    Values keep what http.server keeps: leading blanks dropped, trailing ones not."""
    if buf[:2] == b"\r\n":
        return 2, []
    end = buf.find(b"\r\n\r\n")
    if end < 0 or end > _MAX_LINE:
        return None
    lines = bytes(buf[:end]).split(b"\r\n")
    if len(lines) > _MAX_FIELDS:
        return None
    pairs: list[tuple[str, str]] = []
    for line in lines:
        name, sep, value = line.partition(b":")
        if not sep or _TOKEN.fullmatch(name) is None or b"\n" in value or b"\r" in value:
            return None
        pairs.append((name.decode("ascii"), value.lstrip(b" \t").decode("latin-1")))
    return end + 4, pairs


class Connection:
    """One client connection: its socket, reader, writer and request handler."""

    def __init__(self, sock: socket.socket, address: Any, server: LoopbackServer) -> None:
        self.sock = sock
        self.reader = _Reader(sock)
        self.handler = _RequestHandler(self, address, server)
        self.idle_since = time.monotonic()
        self.started: float | None = None
        """When the first byte of the request now arriving came (None: between requests)."""


class _RequestHandler(BaseHTTPRequestHandler):
    """http.server's request parsing, one request at a time, on a :class:`Connection`."""

    protocol_version = "HTTP/1.1"
    server_version = "pytest-osfoundry"
    sys_version = ""
    # One send per response (buffered, flushed by http.server after each request), and
    # no Nagle delay: otherwise every keep-alive round trip waits ~40 ms for an ACK.
    wbufsize = 64 * 1024
    rfile: Any
    app: Handler
    fields: Fields
    raw_requestline: bytes

    def __init__(  # deliberately not BaseRequestHandler.__init__, which serves at once
        self, conn: Connection, address: Any, server: LoopbackServer
    ) -> None:
        self.request = self.connection = conn.sock
        self.client_address = address
        self.app = server.handler
        self.rfile = conn.reader
        self.wfile = io.BufferedWriter(socket.SocketIO(conn.sock, "wb"), self.wbufsize)
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        self.close_connection = True

    def parse_request(self) -> bool:
        """The request line and a plain head parsed here; anything else by http.server."""
        words = self.raw_requestline.decode("latin-1").rstrip("\r\n").split(" ")
        plain = len(words) == 3 and words[2] in _PLAIN_VERSIONS and all(words)
        parsed = plain_head(self.rfile.buf) if plain else None
        if parsed is None:
            if not super().parse_request():
                return False
            self.fields = Fields(self.headers.items())
            return True
        size, pairs = parsed
        del self.rfile.buf[:size]
        self.command, self.path, self.request_version = words
        self.requestline = " ".join(words)
        self.fields = Fields(pairs)
        conntype = (self.fields.get("connection") or "").lower()  # as http.server reads it
        self.close_connection = conntype == "close" or (
            _PLAIN_VERSIONS[self.request_version] and conntype != "keep-alive"
        )
        expect = (self.fields.get("expect") or "").lower()
        if expect == "100-continue" and self.request_version == "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def _serve(self) -> None:
        if "chunked" in (self.fields.get("transfer-encoding") or "").lower():
            chunked = self._read_chunked()
            if chunked is None:
                return
            body = chunked
        else:
            length = self._content_length()
            if length is None:
                return
            body = self.rfile.read(length) if length else b""
            if len(body) < length:
                self.close_connection = True  # the client went away mid-body
                return
        path, _, query = self.path.partition("?")
        headers = self.fields.lowered()
        try:
            response = self.app(Request(self.command, path, headers, body, query))
        except DropConnection:  # a lost reply (fault injection): close, answer nothing
            self.close_connection = True
            return
        self._send(response.status, response.headers, response.body)

    def _content_length(self) -> int | None:
        """The body's length; ``None`` when refused (400 or 413 already sent)."""
        values = {
            part.strip()
            for field in self.fields.get_all("content-length")
            for part in field.split(",")
        }
        if len(values) > 1:
            self._refuse(400, b'{"error":"differing Content-Length values"}')
            return None
        text = values.pop() if values else "0"
        if not text.isdigit() or not text.isascii():
            self._refuse(400, b'{"error":"bad Content-Length"}')
            return None
        length = int(text)
        if length > MAX_READ:
            self._refuse(413, b'{"error":"body too large"}')
            return None
        return length

    def handle_expect_100(self) -> bool:
        """Send ``100 Continue`` at once (the writer is buffered; curl waits for it)."""
        ok = super().handle_expect_100()
        self.wfile.flush()
        return ok

    def _refuse(self, status: int, body: bytes) -> None:
        """Answer without reading (the rest of) the body, and drop the connection."""
        self.close_connection = True
        self._send(status, {"content-type": "application/json", "connection": "close"}, body)

    def _read_chunked(self) -> bytes | None:
        """A ``Transfer-Encoding: chunked`` body (trailers dropped); ``None`` if refused."""
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                self._refuse(400, b'{"error":"bad chunked body"}')
                return None
            if size < 0 or total + size > MAX_READ:
                self._refuse(413, b'{"error":"body too large"}')
                return None
            if size == 0:
                break
            parts.append(self.rfile.read(size))
            total += size
            self.rfile.readline(1024)  # the CRLF after the chunk
        while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(parts)

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        """Write the answer in one piece; a ``Connection`` header of the app's says
        whether the connection ends after it, as http.server's ``send_header`` does."""
        reason = self.responses.get(status, ("",))[0]
        lines = [
            f"{self.protocol_version} {status} {reason}",
            f"Server: {self.server_version}",
            f"Date: {self.date_time_string()}",
        ]
        for name, value in headers.items():
            if name.lower() == "content-length":
                continue
            lines.append(f"{name}: {value}")
            if name.lower() == "connection":
                if value.lower() == "close":
                    self.close_connection = True
                elif value.lower() == "keep-alive":
                    self.close_connection = False
        lines.append(f"content-length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict")
        if self.request_version == "HTTP/0.9":  # no status line, no headers (http.server)
            head = b""
        self.wfile.write(head + body if self.command != "HEAD" and body else head)

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def __getattr__(self, name: str) -> Callable[[], None]:
        """Any other method token goes to the app too (which answers 404/405, not 501)."""
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def log_message(self, format: str, *args: object) -> None:
        """Stay silent: request lines may carry secrets in a bad client's query string."""
