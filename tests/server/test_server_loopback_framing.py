"""The loopback door's HTTP/1.1 over a real socket: framing that cannot be smuggled
through, HTTP versions it does not speak, repeated ``Origin`` fields, the answers'
heads and who ends the connection (issue 39 items 1, 3, 7).

Every case sends the exact bytes and reads what comes back until the server closes
(a refusal always closes) or stays quiet.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator

import pytest

from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer
from tests.server.osf_server_kit import GS1, Srv, session

STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) ")
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
CHUNKED_PING = b"%x\r\n%s\r\n0\r\n\r\n" % (len(PING), PING)
CLOSE = b"Connection: close\r\n"


def _talk(door: LoopbackServer, data: bytes, quiet: float = 2.0) -> tuple[bytes, bool]:
    """Send ``data``; everything read, and whether the server closed the connection
    (False: it stayed quiet for ``quiet`` seconds with the connection open)."""
    with socket.create_connection((door.host, door.port), timeout=quiet) as sock:
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except TimeoutError:
            return out, False
        except ConnectionResetError:
            pass
        return out, True


def _statuses(out: bytes) -> list[int]:
    return [int(code) for code in STATUS.findall(out)]


@pytest.fixture
def srv() -> Iterator[tuple[Srv, LoopbackServer]]:
    s = Srv()
    s.server.state.share(s.pid, [session(GS1)])
    with LoopbackServer(s.server) as door:
        yield s, door


def _mcp_post(token: str, body: bytes, framing: bytes) -> bytes:
    return (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\n"
        b"Authorization: Bearer " + token.encode() + b"\r\n" + framing + b"\r\n" + body
    )


def _hidden_cancel(s: Srv, command_id: str) -> bytes:
    """A complete second request: the run's owner cancelling it."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "cancel_graph_run", "arguments": {"command_id": command_id}},
        }
    ).encode()
    return _mcp_post(s.agent, body, b"Content-Length: %d\r\n" % len(body))


# ---------------------------------------------------------------- request smuggling
def test_both_framings_are_refused_and_the_hidden_request_never_runs(
    srv: tuple[Srv, LoopbackServer],
) -> None:
    """Issue 39's exact shape: a chunked body ending at once, then a whole second
    request inside what Content-Length counts. A proxy going by Content-Length sees one
    request; the door must not see two (RFC 9112 §6.1: 400, then close)."""
    s, door = srv
    command_id = s.queue()["command_id"]
    rest = b"0\r\n\r\n" + _hidden_cancel(s, command_id)
    framing = b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n" % len(rest)
    out, closed = _talk(door, _mcp_post(s.other, rest, framing))
    assert _statuses(out) == [400] and closed
    assert s.get(command_id)["status"] == "queued"


TE_VARIANTS = [
    b"Transfer-Encoding: chunked",
    b"Transfer-Encoding: Chunked",
    b"Transfer-Encoding: CHUNKED",
    b"Transfer-Encoding:  chunked",
    b"Transfer-Encoding: \tchunked",
    b"Transfer-Encoding: chunked\t",
    b"Transfer-Encoding: chunked ",
    b"Transfer-Encoding: chunked,",
    b"Transfer-Encoding: xchunked",
    b"Transfer-Encoding: chunkedx",
    b"Transfer-Encoding: chunked, identity",
    b"Transfer-Encoding: identity, chunked",
    b"Transfer-Encoding: gzip, chunked",
    b"Transfer-Encoding: chunked, chunked",
    b"Transfer-Encoding: \x0bchunked",
    b"Transfer-Encoding: chunked;q=1",
    b'Transfer-Encoding: "chunked"',
    b"Transfer-Encoding: identity\r\nTransfer-Encoding: chunked",
    b"Transfer-Encoding : chunked",
    b"Transfer-Encoding:\r\n chunked",
]
"""Twenty spellings of a chunked request; the first eight are ``chunked`` itself
(any case, optional whitespace around a list element, an empty element)."""

READ_AS_CHUNKED = TE_VARIANTS[:8]


@pytest.mark.parametrize("field", TE_VARIANTS)
def test_no_transfer_encoding_spelling_smuggles_a_request(
    srv: tuple[Srv, LoopbackServer], field: bytes
) -> None:
    s, door = srv
    command_id = s.queue()["command_id"]
    rest = b"0\r\n\r\n" + _hidden_cancel(s, command_id)
    framing = field + b"\r\nContent-Length: %d\r\n" % len(rest)
    out, closed = _talk(door, _mcp_post(s.other, rest, framing))
    assert _statuses(out) == [400] and closed, out[:200]
    assert s.get(command_id)["status"] == "queued"


@pytest.mark.parametrize("field", TE_VARIANTS)
def test_only_chunked_itself_is_read_as_chunked(
    srv: tuple[Srv, LoopbackServer], field: bytes
) -> None:
    s, door = srv
    out, closed = _talk(door, _mcp_post(s.agent, CHUNKED_PING, field + b"\r\n" + CLOSE))
    if field in READ_AS_CHUNKED:
        assert _statuses(out) == [200] and out.endswith(b'"result":{}}')
    else:  # 501 for a coding it does not do, 400 for a malformed field
        assert _statuses(out) in ([400], [501]), out[:200]
    assert closed


@pytest.mark.parametrize(
    ("lengths", "status"),
    [
        (b"Content-Length: 40\r\nContent-Length: 3\r\n", 400),
        (b"Content-Length: 40, 3\r\n", 400),
        (b"Content-Length: 40,\r\n", 400),
        (b"Content-Length: +40\r\n", 400),
        (b"Content-Length: 0x28\r\n", 400),
        (b"Content-Length: 99999999999\r\n", 413),
    ],
)
def test_a_bad_content_length_is_refused_and_the_connection_closed(
    srv: tuple[Srv, LoopbackServer], lengths: bytes, status: int
) -> None:
    s, door = srv
    out, closed = _talk(door, _mcp_post(s.agent, PING, lengths) + _mcp_post(s.agent, b"", b""))
    assert _statuses(out) == [status] and closed


def test_equal_content_lengths_are_one(srv: tuple[Srv, LoopbackServer]) -> None:
    s, door = srv
    for lengths in (b"Content-Length: 40, 40\r\n", b"Content-Length: 40\r\nContent-Length: 40\r\n"):
        out, closed = _talk(door, _mcp_post(s.agent, PING, lengths + b"Connection: close\r\n"))
        assert _statuses(out) == [200] and closed


@pytest.mark.parametrize(
    "body",
    [
        b"0x28\r\n" + PING + b"\r\n0\r\n\r\n",  # Python's int() would read these
        b"+28\r\n" + PING + b"\r\n0\r\n\r\n",
        b"2_8\r\n" + PING + b"\r\n0\r\n\r\n",
        b" 28\r\n" + PING + b"\r\n0\r\n\r\n",
        b"28\n" + PING + b"\r\n0\r\n\r\n",  # a bare LF
        b"28\r\n" + PING + b"XX0\r\n\r\n",  # data longer than its size
        b"28\r\n" + PING + b"\r\n0\r\nbad trailer\r\n\r\n",
    ],
)
def test_a_malformed_chunked_body_is_refused_and_the_connection_closed(
    srv: tuple[Srv, LoopbackServer], body: bytes
) -> None:
    s, door = srv
    out, closed = _talk(door, _mcp_post(s.agent, body, b"Transfer-Encoding: chunked\r\n"))
    assert _statuses(out) == [400] and closed


def test_chunk_extensions_and_trailers_are_read_and_dropped(
    srv: tuple[Srv, LoopbackServer],
) -> None:
    s, door = srv
    body = b"10;a=b\r\n" + PING[:16] + b"\r\n18 ; c\r\n" + PING[16:] + b"\r\n0\r\nX-T: 1\r\n\r\n"
    framing = b"Transfer-Encoding: chunked\r\nConnection: close\r\n"
    out, closed = _talk(door, _mcp_post(s.agent, body, framing))
    assert _statuses(out) == [200] and out.endswith(b'"result":{}}') and closed


# ---------------------------------------------------------------- the head
@pytest.mark.parametrize(
    "head",
    [
        b"POST /mcp HTTP/1.1\nHost: x\nContent-Length: 40\n\n",  # bare LF
        b"POST /mcp HTTP/1.1\r\nHost: x\nContent-Length: 40\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\rContent-Length: 40\r\n\r\n",  # bare CR
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length : 40\r\n\r\n",  # a space before the colon
        b"POST /mcp HTTP/1.1\r\nHost: x\r\n"
        b" Content-Length: 40\r\n\r\n",  # whitespace before a field
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\nContent-Length: 40\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nNo colon\r\nContent-Length: 40\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nFrom x\r\nContent-Length: 40\r\n\r\n",  # an mbox line
        b"POST /mcp HTTP/1.1\r\nHost: x\r\n"
        b"X(A): 1\r\nContent-Length: 40\r\n\r\n",  # a name not a token
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\nContent-Length: 40\r\n\r\n",
    ],
)
def test_a_head_that_is_not_plain_fields_in_crlf_lines_is_refused(
    srv: tuple[Srv, LoopbackServer], head: bytes
) -> None:
    _, door = srv
    out, closed = _talk(door, head + PING)
    assert _statuses(out) == [400] and closed, out[:200]


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505),
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),  # the HTTP/2 preface
        (b"GET / HTTP/2\r\n\r\n", 400),
        (b"GET / HTTP/0.9\r\n\r\n", 505),
        (b"GET / HTTP/1.2\r\n\r\n", 505),
        (b"GET / HTTP/1.x\r\n\r\n", 400),
        (b"GET /\r\n\r\n", 400),  # HTTP/0.9's request: no version
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET / x HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"   \r\n\r\n", 400),
    ],
)
def test_a_version_it_does_not_speak_gets_an_http11_status_line(
    srv: tuple[Srv, LoopbackServer], data: bytes, status: int
) -> None:
    _, door = srv
    out, closed = _talk(door, data)
    assert out.startswith(b"HTTP/1.1 %d " % status) and closed, out[:200]


def test_a_head_over_64_kib_is_refused() -> None:
    with LoopbackServer(lambda _r: Response(200)) as door:
        line, closed = _talk(door, b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert line.startswith(b"HTTP/1.1 414 ") and closed
        fields, closed = _talk(
            door, b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-A: aaaaaaa\r\n" * 5000 + b"\r\n"
        )
        assert fields.startswith(b"HTTP/1.1 431 ") and closed


@pytest.mark.parametrize(
    "head",
    [
        b"GET /x HTTP/1.1\r\n\r\n",  # HTTP/1.1 without Host
        b"GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",  # two Host lines
        b"GET /x HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n",  # the same twice, any case
        b"GET /x HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n",
    ],
)
def test_a_missing_or_repeated_host_is_refused(head: bytes) -> None:
    """RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without ``Host``
    and to any request with more than one ``Host`` line; the app never sees it."""
    seen: list[Request] = []

    def app(request: Request) -> Response:
        seen.append(request)
        return Response(200)

    with LoopbackServer(app) as door:
        out, closed = _talk(door, head)
    assert _statuses(out) == [400] and closed and not seen, out[:200]


def test_an_http10_request_may_come_without_host() -> None:
    with LoopbackServer(lambda _r: Response(200)) as door:
        out, _ = _talk(door, b"GET /x HTTP/1.0\r\n\r\n")
    assert _statuses(out) == [200], out[:200]


def test_empty_lines_before_a_request_are_ignored(srv: tuple[Srv, LoopbackServer]) -> None:
    s, door = srv
    framing = b"Content-Length: 40\r\nConnection: close\r\n"
    out, _ = _talk(door, b"\r\n\r\n" + _mcp_post(s.agent, PING, framing))
    assert _statuses(out) == [200]


# ---------------------------------------------------------------- repeated fields
@pytest.mark.parametrize(
    "origins",
    [
        (b"http://evil.example", b"http://localhost"),
        (b"http://localhost", b"http://evil.example"),
        (b"http://localhost", b"http://localhost"),
    ],
)
def test_several_origin_fields_are_refused_whatever_their_order(
    srv: tuple[Srv, LoopbackServer], origins: tuple[bytes, bytes]
) -> None:
    s, door = srv
    fields = b"".join(b"Origin: %s\r\n" % o for o in origins)
    out, _ = _talk(door, _mcp_post(s.agent, PING, fields + b"Content-Length: 40\r\n" + CLOSE))
    assert _statuses(out) == [403]


@pytest.mark.parametrize(("origin", "status"), [(b"http://localhost", 200), (b"null", 403)])
def test_one_origin_field_is_judged_alone(
    srv: tuple[Srv, LoopbackServer], origin: bytes, status: int
) -> None:
    s, door = srv
    fields = b"Origin: %s\r\nContent-Length: 40\r\n" % origin
    assert _statuses(_talk(door, _mcp_post(s.agent, PING, fields + CLOSE))[0]) == [status]


def test_a_repeated_field_reaches_the_app_as_its_values_joined() -> None:
    seen: list[Request] = []

    def app(request: Request) -> Response:
        seen.append(request)
        return Response(200)

    with LoopbackServer(app) as door:
        data = (
            b"GET /x HTTP/1.1\r\nHost: x\r\n"
            b"X-A: 1 \r\nx-a:\t2\r\nX-B:  b\r\nConnection: close\r\n\r\n"
        )
        assert _statuses(_talk(door, data)[0]) == [200]
    assert seen[0].header("x-a") == "1, 2" and seen[0].header("x-b") == "b"


# ---------------------------------------------------------------- answers
@pytest.fixture
def echo() -> Iterator[LoopbackServer]:
    def app(request: Request) -> Response:
        if request.path == "/close":
            return Response(200, {"Connection": "close"}, b"bye")
        if request.path == "/empty":
            return Response(204)
        return Response(
            200, {"content-type": "text/plain"}, (request.header("x-a") or "-").encode()
        )

    with LoopbackServer(app) as server:
        yield server


BYE = b"GET /close HTTP/1.1\r\nHost: x\r\n\r\n"
"""A last request: answered only if the connection was kept; the server then closes."""


def test_an_answer_has_the_usual_head(echo: LoopbackServer) -> None:
    out, _ = _talk(echo, b"GET /x HTTP/1.1\r\nHost: h\r\nX-A: v\r\n\r\n" + BYE)
    head, _, rest = out.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"HTTP/1.1 200 OK"
    assert b"Server: pytest-osfoundry" in lines and any(x.startswith(b"Date: ") for x in lines)
    assert b"Content-Length: 1" in lines and rest.startswith(b"vHTTP/1.1 200 ")
    assert _statuses(out) == [200, 200]  # HTTP/1.1 keeps the connection


def test_204_and_head_answers_have_no_body(echo: LoopbackServer) -> None:
    out, _ = _talk(
        echo,
        b"GET /empty HTTP/1.1\r\nHost: x\r\n"
        b"\r\nHEAD /x HTTP/1.1\r\nHost: x\r\nX-A: v\r\n\r\n" + BYE,
    )
    empty, _, rest = out.partition(b"\r\n\r\n")
    assert empty.startswith(b"HTTP/1.1 204 ") and b"Content-Length" not in empty
    head, _, rest = rest.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and head.endswith(b"Content-Length: 1")
    assert rest.startswith(b"HTTP/1.1 200 ")  # no body between the HEAD answer and the next


@pytest.mark.parametrize(
    ("request_bytes", "kept"),
    [
        (b"GET /x HTTP/1.0\r\n\r\n", False),
        (b"GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", True),
        (b"GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", False),
        (BYE, False),  # the app's own Connection: close
    ],
)
def test_who_ends_the_connection(echo: LoopbackServer, request_bytes: bytes, kept: bool) -> None:
    out, closed = _talk(echo, request_bytes + BYE)
    assert _statuses(out) == [200] * (1 + kept) and closed


def test_pipelined_requests_are_answered_in_order(echo: LoopbackServer) -> None:
    data = b"".join(b"GET /x HTTP/1.1\r\nHost: x\r\nX-A: %d\r\n\r\n" % i for i in range(5))
    out, closed = _talk(echo, data + b"GET /close HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _statuses(out) == [200] * 6 and closed
    assert re.findall(rb"\r\n\r\n(\d)", out) == [b"0", b"1", b"2", b"3", b"4"]


def test_expect_continue_is_answered_before_the_body(echo: LoopbackServer) -> None:
    with socket.create_connection((echo.host, echo.port), timeout=5) as sock:
        sock.sendall(
            b"POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"
        )
        assert sock.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"{}")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")


def test_expect_continue_with_the_body_already_sent_gets_the_answer_alone(
    echo: LoopbackServer,
) -> None:
    data = b"POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}"
    out, _ = _talk(echo, data + b"GET /close HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _statuses(out) == [200, 200]
