"""Property: whatever bytes a client sends, the loopback door answers no 5xx and stays up.

Hypothesis builds raw requests from parts (method, target, version, headers with
conflicting framing, credentials good and bad, bodies JSON-like or binary) and raw
byte blobs, and sends each over a real socket to one server, then half-closes. The
answers must carry no 5xx status (the door's own 501 for a transfer coding and 505
for an HTTP version it does not speak are allowed: not the app's), each must start
with an HTTP/1.1 status line, the server must answer a ping after
every example, hold no connection afterwards, and keep its traced memory bounded.
"""

from __future__ import annotations

import re
import socket
import tracemalloc
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_osfoundry.server import LoopbackServer, Provisioned, ReferenceServer

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
STATUS = re.compile(rb"HTTP/1\.[01] (\d{3}) ")

_door: LoopbackServer | None = None
_made: Provisioned | None = None


@pytest.fixture(scope="module", autouse=True)
def door() -> Iterator[LoopbackServer]:
    global _door, _made
    server = ReferenceServer()
    _made = server.provision()
    with LoopbackServer(server, request_deadline=2.0) as loop:
        _door = loop
        yield loop
    _door = None


def _exchange(data: bytes) -> bytes:
    assert _door is not None
    with socket.create_connection((_door.host, _door.port), timeout=5) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the door may refuse and close before reading it all
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except OSError:
            pass
        return out


def _tokens() -> st.SearchStrategy[str]:
    assert _made is not None
    return st.sampled_from([_made.agent_token, _made.read_token, _made.desktop_token, "nope", ""])


_methods = st.sampled_from(["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "BREW", "P OST"])
_targets = st.one_of(
    st.sampled_from(
        [
            "/mcp",
            "/mcp/",
            "/external-assistants/graph-relays/sync",
            "/external-assistants/graph-relays/commands/x/start",
            "/.well-known/oauth-protected-resource",
            "*",
        ]
    ),
    st.text(min_size=0, max_size=40).map(lambda t: "/" + t),
)
_versions = st.sampled_from(["HTTP/1.1", "HTTP/1.0", "HTTP/0.9", "HTTP/2.0", "HTTP/1.x", ""])
_header_names = st.sampled_from(
    [
        "Content-Length",
        "Transfer-Encoding",
        "Content-Type",
        "Accept",
        "Authorization",
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
        "Expect",
        "Connection",
        "Host",
        "X-Junk",
    ]
)
_values = st.one_of(
    st.sampled_from(
        ["0", "5", "40", "-1", "99999999999", "chunked", "application/json", "100-continue"]
    ),
    st.text(max_size=30).filter(lambda t: "\r" not in t and "\n" not in t),
)
_bodies = st.one_of(
    st.just(PING),
    st.binary(max_size=300),
    st.sampled_from(
        [
            b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
            b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_graph_session",'
            b'"arguments":{"graph_session_id":"gs_x","idempotency_key":"kkkkkkkk"}}}',
            b'{"project_id":"p","sessions":[{}]}',
            b"5\r\nhello\r\n0\r\n\r\n",
            b"[]",
        ]
    ),
)


@st.composite
def _requests(draw: st.DrawFn) -> bytes:
    line = f"{draw(_methods)} {draw(_targets)} {draw(_versions)}".strip()
    headers = draw(st.lists(st.tuples(_header_names, _values), max_size=6))
    if draw(st.booleans()):
        headers.append(("Authorization", f"Bearer {draw(_tokens())}"))
    body = draw(_bodies)
    if draw(st.booleans()):
        headers.append(("Content-Length", str(len(body))))
    head = line + "\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers) + "\r\n"
    return head.encode("utf-8", "surrogatepass") + body


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.one_of(_requests(), st.binary(max_size=400)))
def test_no_request_bytes_make_the_door_answer_5xx_or_fall_over(data: bytes) -> None:
    answer = _exchange(data)
    statuses = [int(code) for code in STATUS.findall(answer)]
    assert all(code < 500 or code in (501, 505) for code in statuses), answer[:300]
    assert not answer or answer.startswith(b"HTTP/1.1 "), answer[:300]
    assert _exchange(
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n" + PING
    ).startswith(b"HTTP/1.1 200")


def test_memory_and_connections_stay_bounded(door: LoopbackServer) -> None:
    tracemalloc.start()
    for index in range(300):
        _exchange(
            b"POST /mcp HTTP/1.1\r\nHost: x\r\n"
            b"Content-Length: 9999\r\n\r\n" + bytes([index % 256]) * 500
        )
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 16 * 1024 * 1024
    assert current < 4 * 1024 * 1024
    assert door.connections <= 1  # at most the last one, closing
