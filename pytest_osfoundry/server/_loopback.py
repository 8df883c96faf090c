"""A real HTTP/1.1 server for any :class:`~pytest_osfoundry.http.Handler`, in a thread.

``LoopbackServer(handler)`` binds ``127.0.0.1`` on a free port unless told
otherwise, is listening by the time the constructor returns, and stops cleanly with
:meth:`LoopbackServer.close` or at the end of a ``with`` block. Promises:

* **Cheap idle connections, bounded threads.** One selector thread holds every
  connection between requests (a socket and a selector entry each: thousands cost
  little); a connection with bytes to read goes to one of ``workers`` threads
  (16 by default), which serves its requests while they keep coming, then hands it
  back. Connections idle for ``idle_timeout`` seconds are closed.
* **A deadline per request.** A request's line, headers and body must arrive
  within ``request_deadline`` seconds of its first byte, or the connection is
  dropped without an answer; writing the answer is bounded the same way. The
  selector thread gathers a request until it is whole, so a client sending half a
  request holds no worker (no "slowloris").
* **Strict framing.** Two ``Content-Length`` values that differ are refused with
  400 (RFC 9112 §6.3), as are a malformed length or chunked body; a body over
  8 MiB is refused with 413.
* **Quiet.** No request is logged (no headers, so no tokens, ever reach a log). A
  client that resets or drops its connection costs at most one ``DEBUG`` line of
  the ``pytest_osfoundry.server`` logger, never a traceback on stderr.
* **Prompt stop.** :meth:`LoopbackServer.close` returns within a fraction of a second whatever is
  connected: it shuts every connection down, including those a worker is reading.
"""

from __future__ import annotations

import contextlib
import io
import logging
import queue
import re
import selectors
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any

from pytest_osfoundry.http import DropConnection, Handler, Request, announce_origin

__all__ = ["LoopbackServer"]

_MAX_READ = 8 * 1024 * 1024
_log = logging.getLogger("pytest_osfoundry.server")


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


def _whole(buf: bytearray) -> bool:
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
    return length > _MAX_READ or len(buf) >= end + sep + length  # too large: refused at once


class _Connection:
    """One client connection: its socket, reader, writer and request handler."""

    def __init__(self, sock: socket.socket, address: Any, server: LoopbackServer) -> None:
        self.sock = sock
        self.reader = _Reader(sock)
        self.handler = _RequestHandler(self, address, server)
        self.idle_since = time.monotonic()
        self.started: float | None = None
        """When the first byte of the request now arriving came (None: between requests)."""


class _RequestHandler(BaseHTTPRequestHandler):
    """http.server's request parsing, one request at a time, on a :class:`_Connection`."""

    protocol_version = "HTTP/1.1"
    server_version = "pytest-osfoundry"
    sys_version = ""
    # One send per response (buffered, flushed by http.server after each request), and
    # no Nagle delay: otherwise every keep-alive round trip waits ~40 ms for an ACK.
    wbufsize = 64 * 1024
    rfile: Any
    app: Handler

    def __init__(  # deliberately not BaseRequestHandler.__init__, which serves at once
        self, conn: _Connection, address: Any, server: LoopbackServer
    ) -> None:
        self.request = self.connection = conn.sock
        self.client_address = address
        self.app = server.handler
        self.rfile = conn.reader
        self.wfile = io.BufferedWriter(socket.SocketIO(conn.sock, "wb"), self.wbufsize)
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        self.close_connection = True

    def _serve(self) -> None:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
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
        headers = {k.lower(): v for k, v in self.headers.items()}
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
            for field in self.headers.get_all("content-length") or []
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
        if length > _MAX_READ:
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
            if size < 0 or total + size > _MAX_READ:
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
        self.send_response(status)
        for name, value in headers.items():
            if name != "content-length":
                self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def __getattr__(self, name: str) -> Callable[[], None]:
        """Any other method token goes to the app too (which answers 404/405, not 501)."""
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def log_message(self, format: str, *args: object) -> None:
        """Stay silent: request lines may carry secrets in a bad client's query string."""


class LoopbackServer:
    """Serve ``handler`` over HTTP on ``host:port`` (127.0.0.1 and a free port by default).

    ``workers`` bounds the threads serving requests; ``request_deadline`` is the
    seconds a request (line, headers, body) may take to arrive and its answer to be
    written; ``idle_timeout`` closes connections that send nothing for that long.
    """

    def __init__(
        self,
        handler: Handler,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        workers: int = 16,
        request_deadline: float = 10.0,
        idle_timeout: float = 60.0,
    ) -> None:
        if not callable(handler):
            raise TypeError(f"handler must be callable (Request -> Response), got {handler!r}")
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an integer 0-65535, got {port!r}")
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        if not request_deadline > 0 or not idle_timeout > 0:
            raise ValueError("request_deadline and idle_timeout must be positive seconds")
        self.handler = handler
        self.request_deadline = request_deadline
        self.idle_timeout = idle_timeout
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.create_server((host, port), family=family, backlog=1024)
        self._listener.setblocking(False)
        self.host = host
        self.port = int(self._listener.getsockname()[1])
        announce_origin(handler, self.origin)  # the app names it as its public URL unless told one
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, None)
        self._wake_recv, self._wake_send = socket.socketpair()
        self._wake_recv.setblocking(False)
        self._selector.register(self._wake_recv, selectors.EVENT_READ, None)
        self._idle: dict[socket.socket, _Connection] = {}
        self._busy: set[_Connection] = set()
        self._lock = threading.Lock()
        self._ready: queue.SimpleQueue[_Connection | None] = queue.SimpleQueue()
        self._returned: queue.SimpleQueue[_Connection] = queue.SimpleQueue()
        self._closed = False
        self._workers = [
            threading.Thread(target=self._work, name=f"osf-loopback-{self.port}-w{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._workers:
            thread.start()
        self._thread = threading.Thread(
            target=self._loop, name=f"osf-loopback-{self.port}", daemon=True
        )
        self._thread.start()

    @property
    def origin(self) -> str:
        """``http://host:port`` of the running server."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def connections(self) -> int:
        """Connections open now (idle or being served)."""
        with self._lock:
            return len(self._idle) + len(self._busy)

    # -- the selector thread ----------------------------------------------------------
    def _loop(self) -> None:
        next_sweep = time.monotonic() + 1.0
        while not self._closed:
            for key, _ in self._selector.select(timeout=0.25):
                sock = key.fileobj
                if sock is self._listener:
                    self._accept()
                elif sock is self._wake_recv:
                    self._drain_wake()
                else:
                    assert isinstance(sock, socket.socket)
                    self._receive(sock)
            while not self._returned.empty():
                conn = self._returned.get()
                now = time.monotonic()
                conn.idle_since = now
                conn.started = now if conn.reader.pending else None
                conn.sock.setblocking(False)
                with self._lock:
                    self._busy.discard(conn)
                    self._idle[conn.sock] = conn
                self._selector.register(conn.sock, selectors.EVENT_READ, None)
            now = time.monotonic()
            if now >= next_sweep:
                next_sweep = now + 1.0
                self._sweep(now)
        self._stop_everything()

    def _accept(self) -> None:
        while True:
            try:
                sock, address = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:  # out of file descriptors, ...: try again later
                _log.warning("loopback: accept failed: %s", err)
                return
            sock.setblocking(False)
            conn = _Connection(sock, address, self)
            with self._lock:
                self._idle[sock] = conn
            self._selector.register(sock, selectors.EVENT_READ, None)

    def _receive(self, sock: socket.socket) -> None:
        """Buffer what arrived; hand the connection to a worker once a request is whole."""
        conn = self._idle[sock]
        try:
            data = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as err:
            data = b""
            _log.debug("loopback: connection dropped: %s", type(err).__name__)
        if not data:
            self._forget(conn)
            return
        conn.reader.buf += data
        if conn.started is None:
            conn.started = time.monotonic()
        if _whole(conn.reader.buf):
            self._selector.unregister(sock)
            sock.settimeout(self.request_deadline)  # bounds writing the answer too
            with self._lock:
                del self._idle[sock]
                self._busy.add(conn)
            self._ready.put(conn)

    def _forget(self, conn: _Connection) -> None:
        """Close an idle connection (selector thread only)."""
        self._selector.unregister(conn.sock)
        with self._lock:
            self._idle.pop(conn.sock, None)
        _close(conn.sock)

    def _drain_wake(self) -> None:
        try:
            while self._wake_recv.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            return

    def _sweep(self, now: float) -> None:
        """Drop connections idle too long, and those whose request is arriving too slowly."""
        with self._lock:
            stale = [
                c
                for c in self._idle.values()
                if now - c.idle_since > self.idle_timeout
                or (c.started is not None and now - c.started > self.request_deadline)
            ]
        for conn in stale:
            self._forget(conn)

    def _stop_everything(self) -> None:
        with self._lock:
            conns = list(self._idle.values()) + list(self._busy)
            self._idle.clear()
        for conn in conns:
            _close(conn.sock)
        for _ in self._workers:
            self._ready.put(None)
        self._selector.close()
        self._listener.close()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_send.send(b"x")

    # -- the workers --------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            conn = self._ready.get()
            if conn is None:
                return
            if self._serve(conn) and not self._closed:
                self._returned.put(conn)
                self._wake()
            else:
                with self._lock:
                    self._busy.discard(conn)
                with contextlib.suppress(OSError, ValueError):
                    conn.handler.wfile.flush()  # e.g. http.server's own 400 for a bad line
                _close(conn.sock)

    def _serve(self, conn: _Connection) -> bool:
        """Serve the requests waiting on ``conn``; True to keep it for more."""
        handler = conn.handler
        try:
            while not self._closed:
                conn.reader.deadline = time.monotonic() + self.request_deadline
                handler.close_connection = True
                handler.handle_one_request()
                if handler.close_connection:
                    return False
                if not _whole(conn.reader.buf):
                    return True  # the selector waits for the rest of the next request
            return False
        except (OSError, ValueError) as err:  # reset, broken pipe, deadline, closed file
            if not self._closed:
                _log.debug("loopback: connection dropped: %s", type(err).__name__)
            return False
        except Exception as err:  # a handler bug: one line, no traceback, no request data
            _log.error("loopback: request failed: %s: %s", type(err).__name__, err)
            return False

    # -- stopping -----------------------------------------------------------------------
    def close(self) -> None:
        """Stop accepting, drop every connection and release the port (idempotent)."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            busy = list(self._busy)
        for conn in busy:  # wake workers blocked reading or writing
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
        self._wake()
        self._thread.join(timeout=5)
        self._wake_recv.close()
        self._wake_send.close()

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
