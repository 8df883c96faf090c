"""A real HTTP/1.1 server for any :class:`~pytest_osfoundry.http.Handler`, in threads.

``LoopbackServer(handler)`` binds ``127.0.0.1`` on a free port unless told
otherwise, is listening by the time the constructor returns, and stops cleanly with
:meth:`LoopbackServer.close` or at the end of a ``with`` block. Promises:

* **Workers only ever run the app.** One selector thread does every read and write:
  it accepts, gathers each request until it is whole (line, headers and body, a
  chunked body included), and writes what an answer could not send at once. Only a
  whole request goes to one of ``workers`` threads (16 by default), which calls the
  handler and sends what the socket takes without waiting. So no client -- idle,
  sending slowly, half-sending a request, awaiting ``100 Continue`` without sending
  the body, or reading its answers slowly -- holds a worker (no "slowloris"), and
  thousands of connections cost a socket and a buffer each.
* **A delay holds no thread.** ``delay`` (a ``Request -> seconds`` callable, none by
  default) is asked once per whole request; the selector thread keeps the request
  that long before a worker takes it, so any number of delayed requests wait at once
  while the workers serve the others (``osfoundry-fake serve``'s latency: its admin
  door and relay API answer while every MCP request waits out a minute).
* **Deadlines.** A request's line, headers and body must arrive within
  ``request_deadline`` seconds of its first byte, and an answer must be taken by the
  client within as long, or the connection is dropped. Connections idle for
  ``idle_timeout`` seconds are closed. A connection's requests are answered in
  order, one at a time: it sends no more until its answer is on its way.
* **Strict HTTP/1.1** (:mod:`~pytest_osfoundry.doors._loopback_http`): what is
  malformed or ambiguous is answered by the door with a 4xx or 5xx status line and
  the connection closed; it never reaches the handler.
* **Quiet.** No request is logged (no headers, so no tokens, ever reach a log). A
  client that resets or drops its connection costs at most one ``DEBUG`` line of
  the ``pytest_osfoundry.server`` logger, never a traceback on stderr.
* **An answer left open** (:class:`~pytest_osfoundry.http.KeptOpen`, an event stream a
  server keeps open after its answer) is sent chunked without its last chunk; nothing
  more is read from that connection, which is closed when the answer's ``until`` is
  set (within a second), the client closes it, or ``request_deadline`` passes.
* **Prompt stop.** :meth:`LoopbackServer.close` returns within a fraction of a
  second whatever is connected (a worker inside the handler finishes in its own
  time; its answer is not sent).
* **It says when it holds nothing** (:meth:`LoopbackServer.idle`): no connection
  waiting to be accepted, no input unread or request half gathered, no request
  queued or in a worker, no answer unsent or not yet in the client's socket. While
  it runs it is registered with :mod:`pytest_osfoundry.aio`, whose virtual event loop
  holds time still until every such server of the process is idle: a request an
  async client sent it is answered, and the answer read, before virtual time moves.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import math
import queue
import select
import selectors
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType

from pytest_osfoundry._checks import is_number
from pytest_osfoundry._masking import mask_token, secrets_in
from pytest_osfoundry.aio import in_flight, serve_in_process, stop_serving_in_process
from pytest_osfoundry.doors._loopback_http import HttpConnection, Refused
from pytest_osfoundry.http import DropConnection, Handler, KeptOpen, Request, announce_origin

__all__ = ["LoopbackServer"]

_log = logging.getLogger("pytest_osfoundry.server")

_READ = selectors.EVENT_READ
_WRITE = selectors.EVENT_WRITE


class _Connection:
    """One client connection: its socket, the bytes waiting each way, its HTTP."""

    __slots__ = ("closing", "deadline", "events", "http", "incoming", "kept", "outgoing", "sock")

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock = sock
        self.http = HttpConnection()
        self.incoming = bytearray()
        """Bytes read and not yet taken by a request."""
        self.outgoing = bytearray()
        """Bytes of answers not yet sent."""
        self.deadline = deadline
        """When the selector drops it, unless it moves on (a worker's are not dropped)."""
        self.events = 0
        """What the selector watches it for now (0: not registered)."""
        self.closing = False
        """Whether it ends once :attr:`outgoing` is sent."""
        self.kept: threading.Event | None = None
        """A :class:`~pytest_osfoundry.http.KeptOpen` answer's ``until``: the answer is
        left open (nothing more read) and the connection closed once it is set."""

    def send(self) -> bool:
        """Send what :attr:`outgoing` holds until done or the socket would block;
        False if the connection failed."""
        try:
            while self.outgoing:
                sent = self.sock.send(self.outgoing)
                del self.outgoing[:sent]
        except (BlockingIOError, InterruptedError):
            return True
        except OSError as err:
            _log.debug("loopback: connection dropped: %s", type(err).__name__)
            return False
        return True


class LoopbackServer:
    """Serve ``handler`` over HTTP on ``host:port`` (127.0.0.1 and a free port by default).

    ``workers`` bounds the threads running the handler; ``request_deadline`` is the
    seconds a request (line, headers, body) may take to arrive and its answer to be
    taken; ``idle_timeout`` closes connections that send nothing for that long;
    ``delay`` says how many seconds each whole request waits, holding no thread,
    before a worker serves it (a delay that fails or is not a finite number of
    seconds is no delay, and one ``ERROR`` line).
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
        delay: Callable[[Request], float] | None = None,
    ) -> None:
        if not callable(handler):
            raise TypeError(f"handler must be callable (Request -> Response), got {handler!r}")
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an integer 0-65535, got {port!r}")
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        if not request_deadline > 0 or not idle_timeout > 0:
            raise ValueError("request_deadline and idle_timeout must be positive seconds")
        if delay is not None and not callable(delay):
            raise TypeError(f"delay must be a Request -> seconds callable, got {delay!r}")
        self._delay = delay
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
        self._selector.register(self._listener, _READ, None)
        self._wake_recv, self._wake_send = socket.socketpair()
        self._wake_recv.setblocking(False)
        self._selector.register(self._wake_recv, _READ, None)
        self._conns: dict[socket.socket, _Connection] = {}
        """Every open connection (the selector thread's, guarded by ``_lock`` for reading)."""
        self._busy: set[_Connection] = set()
        """Connections a worker holds."""
        self._returned: list[_Connection] = []
        """Connections workers have handed back, for the selector thread to take on."""
        self._held: list[tuple[float, int, _Connection, Request]] = []
        """Requests waiting out their delay, soonest first (the selector thread's; their
        connections are in ``_busy``)."""
        self._order = itertools.count()
        self._lock = threading.Lock()
        self._io = threading.Lock()
        """Held by the selector thread while it acts on what it found (and by :meth:`idle`,
        so that it never sees a request between the socket and a worker)."""
        self._ready: queue.SimpleQueue[tuple[_Connection, Request] | None] = queue.SimpleQueue()
        self._closed = False
        self._stopped = False
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
        serve_in_process(self)

    @property
    def origin(self) -> str:
        """``http://host:port`` of the running server."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def connections(self) -> int:
        """Connections open now (idle, arriving, being served or answered)."""
        with self._lock:
            return len(self._conns)

    def idle(self) -> bool:
        """Whether the server holds nothing of any client's at this moment.

        Idle is: no connection waiting to be accepted; on every connection no byte
        unread (in the socket or in a request half gathered), no request queued or in a
        worker, and no byte of an answer unsent or still in the kernel on its way to the
        client. A request a client has sent over loopback is therefore, from the moment
        its bytes are in the server's socket until its answer is in the client's, never
        idle. (The bytes a client has written but the kernel has not yet moved to the
        server's socket are the client's to count: :func:`pytest_osfoundry.aio.in_flight`.)
        """
        with self._io:  # the selector thread is not between a socket and a worker
            with self._lock:
                if self._closed:
                    return True
                if self._busy or self._returned:
                    return False
                conns = list(self._conns.values())
            if any(c.incoming or c.outgoing or c.http.reading for c in conns):
                return False
            if any(in_flight(c.sock) for c in conns):
                return False
            return not _readable(self._listener, *(c.sock for c in conns))

    # -- the selector thread ----------------------------------------------------------
    def _loop(self) -> None:
        next_sweep = time.monotonic() + 1.0
        while not self._closed:
            timeout = 0.25
            if self._held:
                timeout = min(timeout, max(0.0, self._held[0][0] - time.monotonic()))
            ready = self._selector.select(timeout=timeout)
            with self._io:
                self._act(ready)
                self._release(time.monotonic())
            now = time.monotonic()
            if now >= next_sweep:
                next_sweep = now + 1.0
                self._sweep(now)
        self._stop_everything()

    def _act(self, ready: list[tuple[selectors.SelectorKey, int]]) -> None:
        """Serve what the selector found ready, then the connections workers handed back."""
        for key, events in ready:
            sock = key.fileobj
            if sock is self._listener:
                self._accept()
            elif sock is self._wake_recv:
                self._drain_wake()
            else:
                assert isinstance(sock, socket.socket)
                conn = self._conns[sock]
                if events & _READ and not self._receive(conn):
                    self._forget(conn)
                else:
                    self._step(conn)
        with self._lock:
            returned, self._returned = self._returned, []
        for conn in returned:
            self._step(conn)

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:  # out of file descriptors, ...: try again later
                _log.warning("loopback: accept failed: %s", err)
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)  # no 40 ms ACK wait
            conn = _Connection(sock, time.monotonic() + self.idle_timeout)
            with self._lock:
                self._conns[sock] = conn
            self._watch(conn, _READ)

    def _receive(self, conn: _Connection) -> bool:
        """Buffer what arrived; False when the client has gone."""
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError as err:
            _log.debug("loopback: connection dropped: %s", type(err).__name__)
            return False
        if not data:
            return False
        if not conn.incoming and not conn.http.reading:  # a request's first byte
            conn.deadline = time.monotonic() + self.request_deadline
        conn.incoming += data
        return True

    def _step(self, conn: _Connection) -> None:
        """:meth:`_advance`, a bug in it costing that connection only: one line, no
        traceback, no request data, and the door serves on."""
        try:
            self._advance(conn)
        except Exception as err:
            _log.error("loopback: reading a request failed: %s: %s", type(err).__name__, err)
            self._forget(conn)

    def _advance(self, conn: _Connection) -> None:
        """Move ``conn`` on: send what waits, then hand its next request to a worker
        once whole, or wait for more bytes (selector thread only)."""
        if not conn.send():
            self._forget(conn)
            return
        if conn.kept is not None:  # an answer left open: nothing more is read from it
            conn.incoming.clear()
            if conn.kept.is_set() and not conn.outgoing:
                self._forget(conn)
            else:
                self._watch(conn, _READ | _WRITE if conn.outgoing else _READ)
            return
        if conn.outgoing and not conn.http.reading:  # an answer the client takes slowly:
            self._watch(conn, _WRITE)  # nothing more is read from it meanwhile
            return
        if conn.closing:
            self._forget(conn)
            return
        now = time.monotonic()
        if conn.events == _WRITE:  # its answer is sent: on to the next request
            conn.deadline = now + self.request_deadline
        try:
            request = conn.http.read(conn.incoming)
        except Refused as refusal:
            conn.outgoing += refusal.answer
            conn.closing = True
            conn.deadline = now + self.request_deadline
            self._advance(conn)
            return
        conn.outgoing += conn.http.interim()
        if request is not None:
            self._watch(conn, 0)
            with self._lock:
                self._busy.add(conn)
            wait = self._wait(request)
            if wait > 0:
                heapq.heappush(self._held, (now + wait, next(self._order), conn, request))
            else:
                self._ready.put((conn, request))
            return
        if not conn.send():
            self._forget(conn)
            return
        if not conn.incoming and not conn.http.reading:
            conn.deadline = now + self.idle_timeout
        self._watch(conn, _READ | _WRITE if conn.outgoing else _READ)

    def _wait(self, request: Request) -> float:
        """The seconds ``request`` waits before a worker takes it (``delay``'s say)."""
        if self._delay is None:
            return 0.0
        try:
            seconds = self._delay(request)
        except Exception as err:  # a bug in the delay: no delay, one line, no request data
            _log.error("loopback: the request's delay failed: %s", type(err).__name__)
            return 0.0
        if not is_number(seconds):
            _log.error("loopback: the request's delay is not a number of seconds")
            return 0.0
        return float(seconds) if math.isfinite(seconds) and seconds > 0 else 0.0

    def _release(self, now: float) -> None:
        """Hand the requests whose delay is over to the workers (selector thread only)."""
        while self._held and self._held[0][0] <= now:
            _, _, conn, request = heapq.heappop(self._held)
            self._ready.put((conn, request))

    def _watch(self, conn: _Connection, events: int) -> None:
        """Have the selector watch ``conn`` for ``events`` (0: not at all)."""
        if events == conn.events:
            return
        if not conn.events:
            self._selector.register(conn.sock, events, None)
        elif not events:
            self._selector.unregister(conn.sock)
        else:
            self._selector.modify(conn.sock, events, None)
        conn.events = events

    def _forget(self, conn: _Connection) -> None:
        """Close a connection the selector holds."""
        self._watch(conn, 0)
        with self._lock:
            self._conns.pop(conn.sock, None)
        _close(conn.sock)

    def _drain_wake(self) -> None:
        try:
            while self._wake_recv.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            return

    def _sweep(self, now: float) -> None:
        """Drop the connections past their deadline (idle, arriving or answered too slowly)."""
        with self._lock:
            late = [
                c
                for c in self._conns.values()
                if (c.deadline < now or (c.kept is not None and c.kept.is_set()))
                and c not in self._busy
            ]
        for conn in late:
            self._forget(conn)

    def _stop_everything(self) -> None:
        with self._lock:
            self._stopped = True
            conns = list(self._conns.values())
            busy = set(self._busy)
            self._conns.clear()
        held = {conn for _, _, conn, _ in self._held}
        self._held.clear()
        for conn in conns:
            if conn in busy and conn not in held:  # its worker closes it when it returns
                with contextlib.suppress(OSError):
                    conn.sock.shutdown(socket.SHUT_RDWR)
            else:
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
            item = self._ready.get()
            if item is None:
                return
            conn, request = item
            self._serve(conn, request)
            conn.deadline = time.monotonic() + self.request_deadline  # to take its answer
            with self._lock:
                self._busy.discard(conn)
                stopped = self._stopped
                if not stopped:
                    self._returned.append(conn)
            if stopped:
                _close(conn.sock)
            else:
                self._wake()

    def _serve(self, conn: _Connection, request: Request) -> None:
        """Answer ``request`` and send what the socket takes now."""
        try:
            response = self.handler(request)
            conn.outgoing += conn.http.answer(response)
            if isinstance(response, KeptOpen):
                conn.kept = response.until
        except DropConnection:  # a lost reply (fault injection): close, answer nothing
            conn.closing = True
            return
        except Exception as err:  # a handler bug: one line, no traceback, no request data
            # (and no credential of the request, should the error's words quote one)
            said = mask_token(str(err), secrets_in(f"?{request.query}", request.headers))
            _log.error("loopback: request failed: %s: %s", type(err).__name__, said)
            conn.closing = True
            return
        conn.closing = conn.http.closes
        if not conn.send():
            conn.closing = True
            conn.outgoing.clear()

    # -- stopping -----------------------------------------------------------------------
    def close(self) -> None:
        """Stop accepting, drop every connection and release the port (idempotent)."""
        if self._closed:
            return
        self._closed = True
        stop_serving_in_process(self)
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


def _readable(*socks: socket.socket) -> bool:
    """Whether any of ``socks`` has input (a byte, an end, a connection to accept) now."""
    try:
        if hasattr(select, "poll"):  # no FD_SETSIZE bound
            poll = select.poll()
            for sock in socks:
                poll.register(sock, select.POLLIN)
            return bool(poll.poll(0))
        ready, _, _ = select.select(socks, (), (), 0)
    except (OSError, ValueError):  # one closed meanwhile: the server is acting on it
        return True
    return bool(ready)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
