"""The loopback door against rude clients: resets, bad framing, slow and idle connections."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer, ReferenceServer

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


@pytest.fixture
def loop() -> Iterator[LoopbackServer]:
    server = ReferenceServer()
    server.provision()
    with LoopbackServer(server, request_deadline=1.0) as door:
        yield door


def _raw(door: LoopbackServer, data: bytes, timeout: float = 5.0) -> bytes:
    """Send ``data`` and read until the server closes or stays quiet for ``timeout``."""
    with socket.create_connection((door.host, door.port), timeout=timeout) as sock:
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except TimeoutError:
            pass
        return out


def _post(length_headers: bytes, body: bytes = PING) -> bytes:
    return (
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + length_headers + b"\r\n" + body
    )


def _reset(sock: socket.socket) -> None:
    """Close with RST instead of FIN (SO_LINGER 0)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_differing_content_lengths_are_refused_with_400(loop: LoopbackServer) -> None:
    n = str(len(PING)).encode()
    assert _raw(loop, _post(b"Content-Length: " + n + b"\r\nContent-Length: 3\r\n")).startswith(
        b"HTTP/1.1 400"
    )
    assert _raw(loop, _post(b"Content-Length: " + n + b", 7\r\n")).startswith(b"HTTP/1.1 400")
    same = _raw(loop, _post(b"Content-Length: " + n + b"\r\nContent-Length: " + n + b"\r\n"))
    assert same.startswith(b"HTTP/1.1 200")


def test_a_request_arriving_too_slowly_is_dropped(loop: LoopbackServer) -> None:
    start = time.monotonic()
    with socket.create_connection((loop.host, loop.port), timeout=10) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{")
        assert sock.recv(65536) == b""  # dropped without an answer
    assert time.monotonic() - start < 1.0 + 4.0  # the deadline is 1 s
    with socket.create_connection((loop.host, loop.port), timeout=10) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nHo")  # headers never finish
        assert sock.recv(65536) == b""


def test_pipelined_requests_are_all_answered(loop: LoopbackServer) -> None:
    one = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: " + str(len(PING)).encode()
    one += b"\r\n\r\n" + PING
    last = one.replace(b"Host: x", b"Host: x\r\nConnection: close")
    out = _raw(loop, one + one + last)
    assert out.count(b"HTTP/1.1 200") == 3


def test_resets_cost_no_traceback(loop: LoopbackServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="pytest_osfoundry.server")
    for index in range(100):
        sock = socket.create_connection((loop.host, loop.port))
        if index % 2:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 99\r\n\r\n{")
        _reset(sock)
    assert httpx.post(f"{loop.origin}/mcp", content=PING).status_code == 200
    assert all(r.exc_info is None for r in caplog.records)
    assert len(caplog.records) <= 100


def test_idle_connections_hold_no_threads(loop: LoopbackServer) -> None:
    idle = [socket.create_connection((loop.host, loop.port)) for _ in range(300)]
    try:
        deadline = time.monotonic() + 10
        while loop.connections < 300 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert loop.connections == 300
        mine = [t for t in threading.enumerate() if t.name.startswith(f"osf-loopback-{loop.port}")]
        assert len(mine) == 16 + 1  # the workers and the selector thread, whatever is connected
        reply = httpx.post(f"{loop.origin}/mcp", content=PING, timeout=5)
        assert reply.status_code == 200
    finally:
        for sock in idle:
            sock.close()


def test_close_is_prompt_with_busy_and_idle_connections() -> None:
    door = LoopbackServer(ReferenceServer())
    idle = [socket.create_connection((door.host, door.port)) for _ in range(50)]
    slow = socket.create_connection((door.host, door.port))
    slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 99\r\n\r\n{")
    time.sleep(0.2)  # the door now holds half a request
    start = time.monotonic()
    door.close()
    assert time.monotonic() - start < 1.0
    for sock in [*idle, slow]:
        sock.close()


def test_serve_exits_on_sigterm_within_1s_with_1000_idle_connections() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_osfoundry", "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    idle: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        port = int(info["relay_url"].rsplit(":", 1)[1])
        for index in range(1000):
            sock = socket.create_connection(("127.0.0.1", port))
            if index % 10 == 0:
                sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")  # half a request
            idle.append(sock)
        for _ in range(50):  # and some resets, which must not print tracebacks
            _reset(socket.create_connection(("127.0.0.1", port)))
        ok = httpx.post(info["mcp_url"], content=PING, timeout=10)
        assert ok.status_code == 200
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        assert time.monotonic() - start < 1.0
        assert proc.returncode == 0
        assert proc.stderr is not None
        err = proc.stderr.read()
        assert "Traceback" not in err
        assert len(err.splitlines()) <= 50
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for sock in idle:
            sock.close()


def test_a_bug_reading_a_request_costs_that_connection_alone(
    loop: LoopbackServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from pytest_osfoundry.doors import _loopback_http

    def broken(self: object, buf: bytearray) -> None:
        raise RuntimeError("a bug")

    caplog.set_level(logging.DEBUG, logger="pytest_osfoundry.server")
    with monkeypatch.context() as patch:
        patch.setattr(_loopback_http.HttpConnection, "read", broken)
        assert _raw(loop, _post(b"Content-Length: 40\r\n")) == b""  # dropped, unanswered
    assert httpx.post(f"{loop.origin}/mcp", content=PING).status_code == 200  # still serving
    assert [r.getMessage() for r in caplog.records] == [
        "loopback: reading a request failed: RuntimeError: a bug"
    ]
    assert all(r.exc_info is None for r in caplog.records)


def test_a_handler_bug_is_logged_without_the_request_s_credentials(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The door used as a library around any handler: a handler whose error quotes the
    request's bearer token or token query parameter is logged with them masked."""
    secret, other = "s3cret-bearer-token-0001", "s3cret-query-token-0002"

    def handler(request: Request) -> Response:
        raise RuntimeError(f"cannot serve {request.headers} ?{request.query}")

    caplog.set_level(logging.DEBUG, logger="pytest_osfoundry.server")
    with LoopbackServer(handler) as door, pytest.raises(httpx.HTTPError):
        httpx.get(
            f"{door.origin}/x?access_token={other}",
            headers={"Authorization": f"Bearer {secret}"},
        )
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith("loopback: request failed: RuntimeError") for line in lines)
    assert not any(secret in line or other in line for line in lines), lines
