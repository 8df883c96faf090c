"""A real HTTP/1.1 server for any :class:`~pytest_osfoundry.http.Handler`, in a thread.

``LoopbackServer(handler)`` binds ``127.0.0.1`` on a free port unless told
otherwise, is listening by the time the constructor returns, serves each connection
on its own thread (keep-alive, concurrent clients), and stops cleanly with
:meth:`LoopbackServer.close` or at the end of a ``with`` block. It logs nothing of
requests by default (no headers, so no tokens, ever reach a log).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from pytest_osfoundry.http import Handler, Request

__all__ = ["LoopbackServer"]

_MAX_READ = 8 * 1024 * 1024


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    app: Handler


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "pytest-osfoundry"
    sys_version = ""
    timeout = 60.0
    server: _Server

    def _serve(self) -> None:
        length_text = self.headers.get("content-length", "0") or "0"
        try:
            length = int(length_text)
        except ValueError:
            self._send(400, {"content-type": "application/json"}, b'{"error":"bad Content-Length"}')
            return
        if length < 0 or length > _MAX_READ:
            self.close_connection = True
            self._send(413, {"content-type": "application/json"}, b'{"error":"body too large"}')
            return
        body = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        headers = {k.lower(): v for k, v in self.headers.items()}
        response = self.server.app(Request(self.command, path, headers, body, query))
        self._send(response.status, response.headers, response.body)

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

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
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
