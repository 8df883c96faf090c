"""The loopback door's HTTP/1.1 reader on bytes in memory (``doors/_loopback_http.py``).

Bytes arrive in pieces of any size: the reader must read the same requests however
they are cut, take exactly their bytes, and leave the rest for the next request.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_osfoundry.doors._loopback_http import MAX_BODY, HttpConnection, Refused
from pytest_osfoundry.http import Request, Response

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
REQUESTS = [
    b"POST /mcp?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n" + PING,
    b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"3;e=1\r\n" + PING[:3] + b"\r\n25\r\n" + PING[3:] + b"\r\n0\r\nX-T: 1\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\nX-A: 1\r\nx-a: 2\r\n\r\n",
    b"\r\nDELETE /mcp HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n",
]


def _read_all(pieces: list[bytes]) -> list[Request]:
    conn = HttpConnection()
    buf = bytearray()
    out: list[Request] = []
    for piece in pieces:
        buf += piece
        while (request := conn.read(buf)) is not None:
            out.append(request)
            conn.answer(Response(200))
    assert not buf and not conn.reading
    return out


WHOLE = _read_all([b"".join(REQUESTS)])


def test_requests_read_at_once() -> None:
    assert [(r.method, r.path, r.query, r.body) for r in WHOLE] == [
        ("POST", "/mcp", "x=1", PING),
        ("POST", "/mcp", "", PING),
        ("GET", "/", "", b""),
        ("DELETE", "/mcp", "", b""),
    ]
    assert WHOLE[2].header("x-a") == "1, 2"


@given(st.lists(st.integers(min_value=0, max_value=sum(map(len, REQUESTS))), max_size=30))
def test_the_same_requests_however_the_bytes_are_cut(cuts: list[int]) -> None:
    data = b"".join(REQUESTS)
    edges = [0, *sorted(cuts), len(data)]
    pieces = [data[a:b] for a, b in itertools.pairwise(edges)]
    assert _read_all(pieces) == WHOLE


def test_continue_is_offered_only_while_a_body_is_due() -> None:
    conn = HttpConnection()
    buf = bytearray(
        b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"
    )
    assert conn.read(buf) is None and conn.reading
    assert conn.interim() == b"HTTP/1.1 100 Continue\r\n\r\n" and conn.interim() == b""
    buf += b"{}"
    assert conn.read(buf) is not None and conn.interim() == b""


def test_a_chunked_body_over_the_bound_is_refused_before_it_arrives() -> None:
    conn = HttpConnection()
    buf = bytearray(
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % (MAX_BODY + 1)
    )
    with pytest.raises(Refused) as refused:
        conn.read(buf)
    assert refused.value.answer.startswith(b"HTTP/1.1 413 ")
    assert b"Connection: close" in refused.value.answer


def test_a_refusal_explains_itself_and_answers_head_without_a_body() -> None:
    conn = HttpConnection()
    with pytest.raises(Refused) as refused:
        conn.read(bytearray(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 2\r\n\r\n"))
    assert b"differing Content-Length values" in refused.value.answer
    with pytest.raises(Refused) as head:
        HttpConnection().read(bytearray(b"HEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n"))
    assert head.value.answer.endswith(b"\r\n\r\n")  # no body after the head
