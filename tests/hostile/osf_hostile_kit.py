"""Hostile HTTP servers on loopback, for the kit's bounded-client tests.

:class:`HostileServer` answers every request the way its ``mode`` says, written
byte by byte on a raw socket (no HTTP library to smooth anything over):

* ``huge`` -- ``200`` with no length, then an endless body;
* ``huge-declared`` -- ``Content-Length`` of 10 GB, then an endless body;
* ``endless-stream`` -- an event stream of comments and other requests' answers, forever;
* ``drip`` -- the status line and headers, one byte every ``drip`` seconds;
* ``drip-body`` -- headers at once, then the body one byte every ``drip`` seconds;
* ``answer-open`` -- an event stream carrying the answer, then left open;
* ``silence`` -- reads the request and never answers;
* ``answer-then-silence`` -- answers the first request (JSON), then never again;
* ``handshake-then-silence`` -- answers what the suite's preflight asks (initialize,
  ping, notifications, ``list_graph_sessions``, the relay's control poll), then falls
  silent for good at the first other request;
* ``huge-get-graph-run`` -- answers like ``echo-token`` without the echo, except
  ``tools/call get_graph_run``: ``200`` declaring 300 MB, then that body;
* ``redirect`` -- ``302`` to itself, forever;
* ``echo-token`` -- answers JSON echoing the bearer token raw, URL-encoded, JSON-escaped
  and base64-encoded (for the masking tests).

:class:`OpenStreamServer` serves a real handler (the reference server in SSE mode)
and keeps each event stream open after its answer, as SPEC R1 allows.
"""

from __future__ import annotations

import base64
import json
import select
import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

from pytest_osfoundry.http import Handler, Request

__all__ = ["MODES", "HostileServer", "OpenStreamServer"]

MODES = (
    "huge",
    "huge-declared",
    "endless-stream",
    "drip",
    "drip-body",
    "answer-open",
    "silence",
    "answer-then-silence",
    "handshake-then-silence",
    "huge-get-graph-run",
    "redirect",
    "echo-token",
)


def _read_request(sock: socket.socket) -> tuple[bytes, dict[str, str], bytes] | None:
    """The request line, the headers (lower-case names) and the body; None on EOF."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        body += chunk
    return lines[0], headers, body[:length]


def _message(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def _result(message: dict[str, Any]) -> dict[str, Any]:
    """A plausible result: a real one for ``initialize``, an empty object otherwise."""
    if message.get("method") == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0"},
        }
    return {}


def _preflight_request(line: bytes, message: dict[str, Any]) -> bool:
    """Whether a request is one the suite's preflight (or its reachability probe) sends."""
    if line.startswith(b"GET ") and b"/control" in line:
        return True
    method = message.get("method")
    if method in ("initialize", "ping", "server/discover") or str(method).startswith(
        "notifications/"
    ):
        return True
    params = message.get("params")
    return isinstance(params, dict) and params.get("name") == "list_graph_sessions"


class _Handler(socketserver.BaseRequestHandler):
    server: _TCPServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        try:
            while not self.server.stopping.is_set():
                got = _read_request(sock)
                if got is None:
                    return
                self.server.requests += 1
                if not self._answer(sock, *got):
                    return
        except OSError:
            return  # the client gave up: that is the point

    def _hold(self, sock: socket.socket, seconds: float = 120.0) -> None:
        """Keep the connection open until the client closes it or the server stops."""
        end = time.monotonic() + seconds
        while not self.server.stopping.is_set() and time.monotonic() < end:
            ready, _, _ = select.select([sock], [], [], 0.05)
            if ready and not sock.recv(65536):
                return

    def _endless(self, sock: socket.socket, chunk: bytes, pause: float = 0.0) -> None:
        while not self.server.stopping.is_set():
            sock.sendall(chunk)
            if pause:
                time.sleep(pause)

    def _answer(
        self, sock: socket.socket, line: bytes, headers: dict[str, str], body: bytes
    ) -> bool:
        mode = self.server.mode
        message = _message(body)
        rid = message.get("id")
        result = _result(message)
        answer = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
        if mode == "handshake-then-silence" and not _preflight_request(line, message):
            self.server.silent = True
        quiet = (
            mode in ("handshake-then-silence", "echo-token", "huge-get-graph-run")
            and not self.server.silent
        )
        if message and "id" not in message and quiet:
            sock.sendall(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
            return True
        params = message.get("params")
        tool = params.get("name") if isinstance(params, dict) else None
        if mode == "huge-get-graph-run" and tool == "get_graph_run":
            sock.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: 314572800\r\n\r\n"
            )
            sent = 0
            while sent < 314_572_800 and not self.server.stopping.is_set():
                sock.sendall(b" " * 65536)  # the reader hangs up at its cap: this raises
                sent += 65536
            return False
        if mode == "huge":
            sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
            self._endless(sock, b"x" * 65536)
        elif mode == "huge-declared":
            sock.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: 10000000000\r\n\r\n"
            )
            self._endless(sock, b"x" * 65536)
        elif mode == "endless-stream":
            sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
            other = json.dumps({"jsonrpc": "2.0", "id": 987654, "result": {}}).encode()
            self._endless(sock, b": keep-alive\n\ndata: " + other + b"\n\n", pause=0.001)
        elif mode in ("drip", "drip-body"):
            head = (
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: " + str(len(answer)).encode() + b"\r\n\r\n"
            )
            if mode == "drip-body":
                sock.sendall(head)
            for byte in (head if mode == "drip" else b"") + answer:
                if self.server.stopping.is_set():
                    return False
                sock.sendall(bytes([byte]))
                time.sleep(self.server.drip)
        elif mode == "answer-open":
            sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
            sock.sendall(b": priming\n\nid: 1\ndata: " + answer + b"\r\n\r\n")
            self._hold(sock)
            return False
        elif (
            mode == "silence"
            or (mode == "answer-then-silence" and self.server.requests > 1)
            or self.server.silent
        ):
            self._hold(sock)
            return False
        elif mode == "redirect":
            sock.sendall(b"HTTP/1.1 302 Found\r\nlocation: /again\r\ncontent-length: 0\r\n\r\n")
        else:  # answer-then-silence (first request), echo-token, huge-get-graph-run
            if mode == "echo-token":
                token = headers.get("authorization", "").partition(" ")[2]
                echoes = {
                    "raw": token,
                    "url": quote(token, safe=""),
                    "base64": base64.b64encode(token.encode()).decode(),
                    "base64url": base64.urlsafe_b64encode(token.encode()).decode().rstrip("="),
                }
                answer = json.dumps(
                    {"jsonrpc": "2.0", "id": rid, "result": {**result, "echo": echoes}}
                ).encode()
            sock.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: " + str(len(answer)).encode() + b"\r\n\r\n" + answer
            )
        return True


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    mode: str
    drip: float
    requests: int
    silent: bool
    stopping: threading.Event


class HostileServer:
    """A loopback server misbehaving as ``mode`` says (see the module docstring)."""

    def __init__(self, mode: str, *, drip: float = 0.3) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self._server = _TCPServer(("127.0.0.1", 0), _Handler)
        self._server.mode = mode
        self._server.drip = drip
        self._server.requests = 0
        self._server.silent = False
        self._server.stopping = threading.Event()
        self.port = int(self._server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def requests(self) -> int:
        """How many requests arrived so far."""
        return self._server.requests

    def close(self) -> None:
        """Stop answering, end the held connections and free the port."""
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _OpenStreamHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _OpenStreamHTTPServer

    def _serve(self) -> None:
        length = int(self.headers.get("content-length", "0") or 0)
        body = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        headers = {k.lower(): v for k, v in self.headers.items()}
        response = self.server.app(Request(self.command, path, headers, body, query))
        ctype = response.headers.get("content-type", "")
        self.send_response(response.status)
        for name, value in response.headers.items():
            if name != "content-length":
                self.send_header(name, value)
        if not ctype.startswith("text/event-stream"):
            self.send_header("content-length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)
            return
        self.end_headers()  # no length: the stream lasts as long as the connection
        self.wfile.write(response.body)
        self.wfile.flush()
        self.server.held += 1
        self.close_connection = True
        end = time.monotonic() + 60.0
        while not self.server.stopping.is_set() and time.monotonic() < end:
            ready, _, _ = select.select([self.connection], [], [], 0.05)
            if ready:
                try:
                    if not self.connection.recv(65536):
                        return
                except OSError:
                    return

    do_GET = do_POST = do_DELETE = _serve

    def log_message(self, format: str, *args: object) -> None:
        """Silent."""


class _OpenStreamHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # the suite's checks in flight at once, and more
    app: Handler
    held: int
    stopping: threading.Event


class OpenStreamServer:
    """Serves ``app`` over HTTP, leaving every event stream open after its answer."""

    def __init__(self, app: Handler) -> None:
        self._server = _OpenStreamHTTPServer(("127.0.0.1", 0), _OpenStreamHandler)
        self._server.app = app
        self._server.held = 0
        self._server.stopping = threading.Event()
        self.origin = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def held(self) -> int:
        """How many event streams were left open after their answer."""
        return self._server.held

    def close(self) -> None:
        """Stop serving and end the held streams."""
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
