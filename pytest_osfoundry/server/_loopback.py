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

This module holds the threads (the selector thread that accepts and gathers, the
bounded pool of workers that serve); reading, parsing and answering a request is
:mod:`~pytest_osfoundry.server._loopback_http`'s.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import selectors
import socket
import threading
import time
from types import TracebackType

from pytest_osfoundry.http import Handler, announce_origin
from pytest_osfoundry.server._loopback_http import Connection, whole

__all__ = ["LoopbackServer"]

_log = logging.getLogger("pytest_osfoundry.server")


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
        self._idle: dict[socket.socket, Connection] = {}
        self._busy: set[Connection] = set()
        self._lock = threading.Lock()
        self._ready: queue.SimpleQueue[Connection | None] = queue.SimpleQueue()
        self._returned: queue.SimpleQueue[Connection] = queue.SimpleQueue()
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
            conn = Connection(sock, address, self)
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
        if whole(conn.reader.buf):
            self._selector.unregister(sock)
            sock.settimeout(self.request_deadline)  # bounds writing the answer too
            with self._lock:
                del self._idle[sock]
                self._busy.add(conn)
            self._ready.put(conn)

    def _forget(self, conn: Connection) -> None:
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

    def _serve(self, conn: Connection) -> bool:
        """Serve the requests waiting on ``conn``; True to keep it for more."""
        handler = conn.handler
        try:
            while not self._closed:
                conn.reader.deadline = time.monotonic() + self.request_deadline
                handler.close_connection = True
                handler.handle_one_request()
                if handler.close_connection:
                    return False
                if not whole(conn.reader.buf):
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
