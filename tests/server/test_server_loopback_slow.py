"""Slow clients hold no worker of the loopback door (issue 39 item 2).

Each shape of a slow client is played by more connections than the door has
workers, and each connection stalls for longer than the test runs (the door's
request deadline is 60 s). A ping on a fresh connection must still be answered:
while the stalled connections held the workers, it could not be until they were
dropped. No timing is asserted: the ping's socket waits up to 20 s, far under the
stall, and an answer of any speed passes. Then, with a short deadline, every shape
is dropped by the door.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator

import pytest

from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer

WORKERS = 2
STALLED = 8
BIG = b"x" * (4 * 1024 * 1024)


def _app(request: Request) -> Response:
    if request.path == "/big":
        return Response(200, {"content-type": "application/octet-stream"}, BIG)
    return Response(200, {"content-type": "text/plain"}, b"pong")


def _idle(sock: socket.socket) -> None:
    pass


def _slow_head(sock: socket.socket) -> None:
    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")


def _slow_body(sock: socket.socket) -> None:
    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")


def _listed_length(sock: socket.socket) -> None:
    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100, 100\r\n\r\n")


def _half_chunked(sock: socket.socket) -> None:
    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")


def _expect_without_body(sock: socket.socket) -> None:
    sock.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 40\r\n\r\n"
    )


def _slow_reader(sock: socket.socket) -> None:
    """Pipelined requests for 4 MiB answers, none of them read."""
    sock.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n" * 8)


SHAPES: dict[str, Callable[[socket.socket], None]] = {
    "idle": _idle,
    "slow head": _slow_head,
    "slow body": _slow_body,
    "Content-Length: 100, 100 and no body": _listed_length,
    "half-sent chunked": _half_chunked,
    "Expect: 100-continue and no body": _expect_without_body,
    "slow reader": _slow_reader,
}


def _stall(door: LoopbackServer, shape: Callable[[socket.socket], None]) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fills at once if unread
    sock.connect((door.host, door.port))
    shape(sock)
    return sock


def _ping(door: LoopbackServer) -> bytes:
    with socket.create_connection((door.host, door.port), timeout=20) as sock:
        sock.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


def _until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (30 s at most, then fail)."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true within 30 s"
        time.sleep(0.02)


@pytest.fixture
def stalled() -> Iterator[list[socket.socket]]:
    socks: list[socket.socket] = []
    yield socks
    for sock in socks:
        sock.close()


@pytest.mark.parametrize("shape", list(SHAPES))
def test_stalled_connections_leave_a_ping_answered(
    stalled: list[socket.socket], shape: str
) -> None:
    with LoopbackServer(_app, workers=WORKERS, request_deadline=60.0) as door:
        stalled.extend(_stall(door, SHAPES[shape]) for _ in range(STALLED))
        _until(lambda: door.connections == STALLED)
        answer = _ping(door)
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"pong")


def test_every_slow_shape_is_dropped_at_its_deadline(stalled: list[socket.socket]) -> None:
    with LoopbackServer(_app, workers=WORKERS, request_deadline=0.5, idle_timeout=0.5) as door:
        stalled.extend(_stall(door, shape) for shape in SHAPES.values())
        _until(lambda: door.connections == len(SHAPES))
        _until(lambda: door.connections == 0)
        assert _ping(door).endswith(b"pong")
