"""A real HTTP/1.1 server for any :class:`~pytest_osfoundry.http.Handler`, in a thread.

``LoopbackServer(handler)`` binds ``127.0.0.1`` on a free port unless told
otherwise, is listening by the time the constructor returns, serves each connection
on its own thread (keep-alive, concurrent clients), and stops cleanly with
:meth:`LoopbackServer.close` or at the end of a ``with`` block. It logs nothing of
requests by default (no headers, so no tokens, ever reach a log).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from pytest_osfoundry.http import DropConnection, Handler, Request

__all__ = ["LoopbackServer"]

_MAX_READ = 8 * 1024 * 1024


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    app: Handler


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One send per response (buffered, flushed by http.server after each request), and
    # no Nagle delay: otherwise every keep-alive round trip waits ~40 ms for an ACK.
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True
    server_version = "pytest-osfoundry"
    sys_version = ""
    timeout = 60.0
    server: _Server

    def _serve(self) -> None:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            chunked = self._read_chunked()
            if chunked is None:
                return
            body = chunked
        else:
            length_text = self.headers.get("content-length", "0") or "0"
            try:
                length = int(length_text)
            except ValueError:
                self._refuse(400, b'{"error":"bad Content-Length"}')
                return
            if length < 0 or length > _MAX_READ:
                self._refuse(413, b'{"error":"body too large"}')
                return
            body = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            response = self.server.app(Request(self.command, path, headers, body, query))
        except DropConnection:  # a lost reply (fault injection): close, answer nothing
            self.close_connection = True
            return
        self._send(response.status, response.headers, response.body)

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
    """Serve ``handler`` over HTTP on ``host:port`` (127.0.0.1 and a free port by default)."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0) -> None:
        if not callable(handler):
            raise TypeError(f"handler must be callable (Request -> Response), got {handler!r}")
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an integer 0-65535, got {port!r}")
        self._httpd = _Server((host, port), _RequestHandler)
        self._httpd.app = handler
        self.host = host
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"osf-loopback-{self.port}",
            daemon=True,
        )
        self._thread.start()
        self._closed = False

    @property
    def origin(self) -> str:
        """``http://host:port`` of the running server."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def close(self) -> None:
        """Stop accepting, finish the serve loop and release the port (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
