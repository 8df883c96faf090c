"""The loopback door's own head parser reads what http.server's would, or declines.

``plain_head`` is a speed trick: it reads plain request heads itself and hands
anything else to http.server. Property: for any head, either it declines, or it
finds the same fields http.server's parser finds (names case-insensitively, values
as http.server keeps them). Then the connection rules and the answer's head, over a
real socket.
"""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator
from http.client import parse_headers

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer
from pytest_osfoundry.server._loopback_http import plain_head

_names = st.one_of(
    st.sampled_from(["Content-Length", "connection", "X-A", "Authorization", "x-a"]),
    st.text(alphabet="!#$%&'*+-.^_`|~aZ09 :\t\x00é", min_size=0, max_size=8),
)
_values = st.text(alphabet=" \tabc,;=é\x7f:\r\n", max_size=12)


@st.composite
def _heads(draw: st.DrawFn) -> bytes:
    fields = draw(st.lists(st.tuples(_names, _values), max_size=6))
    end = draw(st.sampled_from(["\r\n", "\n"]))
    head = "".join(f"{n}:{v}{end}" for n, v in fields) + end
    return head.encode("latin-1", "replace") + draw(st.binary(max_size=20))


@given(_heads())
def test_plain_heads_are_read_as_http_server_reads_them_or_declined(data: bytes) -> None:
    parsed = plain_head(bytearray(data))
    if parsed is None:
        return
    size, pairs = parsed
    theirs = parse_headers(io.BytesIO(data))
    assert [(n.lower(), v) for n, v in pairs] == [(n.lower(), v) for n, v in theirs.items()]
    assert data[size - 4 : size] == b"\r\n\r\n" or (size == 2 and data[:2] == b"\r\n")


def test_it_declines_what_is_not_plain() -> None:
    assert plain_head(bytearray(b"X-A: 1\r\n")) is None  # not whole yet
    assert plain_head(bytearray(b"X-A: 1\n\n")) is None  # bare LF
    assert plain_head(bytearray(b"X-A: 1\r\n folded\r\n\r\n")) is None
    assert plain_head(bytearray(b"X A: 1\r\n\r\n")) is None
    assert plain_head(bytearray(b"".join(b"X-%d: 1\r\n" % i for i in range(101)) + b"\r\n")) is None
    assert plain_head(bytearray(b"X-A: " + b"a" * 70000 + b"\r\n\r\n")) is None
    assert plain_head(bytearray(b"\r\nbody")) == (2, [])
    assert plain_head(bytearray(b"X-A:  v \r\n\r\nbody")) == (12, [("X-A", "v ")])


@pytest.fixture
def door() -> Iterator[LoopbackServer]:
    def app(request: Request) -> Response:
        if request.path == "/close":
            return Response(200, {"Connection": "close"}, b"bye")
        echoed = (request.header("x-a") or "-").encode()
        return Response(200, {"content-type": "text/plain"}, echoed)

    with LoopbackServer(app) as server:
        yield server


def _talk(door: LoopbackServer, *requests: bytes) -> tuple[bytes, bool]:
    """Send each request in turn on one connection; everything read, and whether the
    server closed the connection at the end."""
    with socket.create_connection((door.host, door.port), timeout=5) as sock:
        out = b""
        for request in requests:
            sock.sendall(request)
            out += sock.recv(65536)
        sock.settimeout(0.5)
        try:
            closed = sock.recv(1) == b""
        except TimeoutError:
            closed = False
    return out, closed


def test_a_plain_request_is_answered_with_the_usual_head(door: LoopbackServer) -> None:
    out, closed = _talk(door, b"GET /x HTTP/1.1\r\nHost: h\r\nX-A:  v\r\n\r\n")
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"HTTP/1.1 200 OK"
    assert b"Server: pytest-osfoundry" in lines and any(x.startswith(b"Date: ") for x in lines)
    assert b"content-length: 1" in lines and body == b"v"
    assert not closed  # HTTP/1.1 keeps the connection


@pytest.mark.parametrize(
    ("request_bytes", "closed"),
    [
        (b"GET /x HTTP/1.0\r\n\r\n", True),
        (b"GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", False),
        (b"GET /x HTTP/1.1\r\nConnection: close\r\n\r\n", True),
        (b"GET /close HTTP/1.1\r\n\r\n", True),  # the app's own Connection: close
    ],
)
def test_who_ends_the_connection(door: LoopbackServer, request_bytes: bytes, closed: bool) -> None:
    assert _talk(door, request_bytes)[1] is closed


def test_two_requests_on_one_connection(door: LoopbackServer) -> None:
    out, closed = _talk(
        door, b"GET /x HTTP/1.1\r\nX-A: 1\r\n\r\n", b"GET /x HTTP/1.1\r\nX-A: 2\r\n\r\n"
    )
    assert out.count(b"HTTP/1.1 200 OK") == 2 and out.endswith(b"2") and not closed


def test_expect_continue_on_the_fast_path(door: LoopbackServer) -> None:
    with socket.create_connection((door.host, door.port), timeout=5) as sock:
        sock.sendall(b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 100 Continue\r\n")
        sock.sendall(b"{}")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")
