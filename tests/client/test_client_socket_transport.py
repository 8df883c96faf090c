"""SocketTransport: HTTP/1.1 framing, keep-alive and fallbacks, byte by byte.

A :class:`Scripted` server on loopback answers each request with the next canned
bytes of its script (no HTTP library between them and the client) and keeps every
request it read, so each test says exactly what went over the wire both ways. The
bounds (deadline, size cap, open event streams) are tested with the hostile servers
(``tests/hostile/test_hostile_client.py``), through this transport and httpx's.
"""

from __future__ import annotations

import gzip
import socket
import threading
import zlib
from collections.abc import Iterator

import pytest

from pytest_osfoundry.client import (
    ConnectionLost,
    HttpxTransport,
    ProtocolViolation,
    ReplyLost,
    SocketTransport,
)
from pytest_osfoundry.client._socket_transport import serves_directly
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer

JSON = b"content-type: application/json\r\n"


class Last(bytes):
    """A scripted answer after which the server closes the connection."""


class Scripted:
    """A loopback server answering request ``n`` with ``script[n]`` (``None``: close
    the connection without an answer; :class:`Last`: answer, then close).
    ``requests`` holds each request's raw head and body; ``connections`` counts the
    connections accepted."""

    def __init__(self, script: list[bytes | None]) -> None:
        self.script = list(script)
        self.requests: list[tuple[bytes, bytes]] = []
        self.connections = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            self._open.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        data = b""
        try:
            while True:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, rest = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(rest) < length:
                    rest += conn.recv(65536)
                self.requests.append((head, rest[:length]))
                data = rest[length:]
                answer = self.script.pop(0) if self.script else None
                if answer is None:
                    conn.close()
                    return
                conn.sendall(answer)
                if isinstance(answer, Last):
                    conn.close()
                    return
        except OSError:
            return

    def close(self) -> None:
        self._sock.close()
        for conn in self._open:
            conn.close()


@pytest.fixture
def scripted() -> Iterator[type[Scripted]]:
    made: list[Scripted] = []

    class Made(Scripted):
        def __init__(self, script: list[bytes | None]) -> None:
            super().__init__(script)
            made.append(self)

    yield Made
    for server in made:
        server.close()


@pytest.fixture
def transport() -> Iterator[SocketTransport]:
    with SocketTransport(timeout=5.0, max_bytes=1024 * 1024) as made:
        yield made


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def _ok(body: bytes, extra: bytes = JSON) -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + extra + b"content-length: %d\r\n\r\n" % len(body) + body


def test_sends_the_callers_headers_and_httpxs_defaults(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    server = scripted([_ok(b"{}")])
    transport.request("POST", server.url + "?a=1", {"Content-Type": "application/json"}, b"{}")
    head, body = server.requests[0]
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /mcp?a=1 HTTP/1.1"
    fields = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    assert fields["host"] == f"127.0.0.1:{server.port}"
    assert fields["content-length"] == "2" and body == b"{}"
    assert fields["content-type"] == "application/json"
    assert fields["accept"] == "*/*" and fields["accept-encoding"] == "gzip, deflate"
    assert fields["user-agent"].startswith("pytest-osfoundry/")


def test_a_callers_header_replaces_a_default_and_host_can_be_forged(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    server = scripted([_ok(b"{}")])
    sent = {"HOST": "evil.example", "Accept": "text/event-stream"}
    transport.request("GET", server.url, sent, b"")
    head = server.requests[0][0].decode()
    assert "HOST: evil.example\r\n" in head and "Host:" not in head
    assert "Accept: text/event-stream\r\n" in head and "*/*" not in head
    assert "content-length" not in head.lower()  # a GET without a body declares none


def test_an_empty_post_declares_length_zero(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    server = scripted([_ok(b"{}")])
    transport.request("POST", server.url, {}, b"")
    assert b"Content-Length: 0\r\n" in server.requests[0][0]


def test_the_target_is_percent_encoded_as_httpx_does(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    server = scripted([_ok(b"{}")])
    transport.request("GET", server.url + "/a b?token=x y&k=%41", {}, b"")
    assert server.requests[0][0].startswith(b"GET /mcp/a%20b?token=x%20y&k=%41 HTTP/1.1\r\n")


def test_reply_headers_are_lower_cased_and_repeats_joined(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    extra = JSON + b"X-Thing: a\r\nx-thing: b\r\nWWW-Authenticate: Bearer x\r\n"
    server = scripted([b"HTTP/1.1 401 Unauthorized\r\n" + extra + b"Content-Length: 2\r\n\r\n{}"])
    reply = transport.request("POST", server.url, {}, b"{}")
    assert reply.status == 401 and reply.body == b"{}"
    assert reply.headers["x-thing"] == "a, b"
    assert reply.headers["www-authenticate"] == "Bearer x"


def test_a_folded_header_line_is_unfolded_as_h11_does(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    server = scripted([b"HTTP/1.1 200 OK\r\nX-A: one\r\n\t two\r\ncontent-length: 0\r\n\r\n"])
    assert transport.request("GET", server.url, {}, b"").headers["x-a"] == "one two"


def test_chunked_bodies_are_joined_and_trailers_dropped(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\n" + JSON + b"Transfer-Encoding: chunked\r\n\r\n"
        b'3;ext=1\r\n{"a\r\n6\r\n": 1}\n\r\n0\r\nX-Trailer: t\r\n\r\n'
    )
    server = scripted([chunked, _ok(b"[]")])
    assert transport.request("POST", server.url, {}, b"{}").body == b'{"a": 1}\n'
    assert transport.request("POST", server.url, {}, b"{}").body == b"[]"
    assert server.connections == 1  # the connection was kept after a whole chunked body


def test_a_body_without_length_is_read_to_the_close(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    server = scripted([Last(b"HTTP/1.0 200 OK\r\n" + JSON + b'\r\n{"x": 2}'), _ok(b"{}")])
    assert transport.request("POST", server.url, {}, b"{}").body == b'{"x": 2}'
    assert transport.request("POST", server.url, {}, b"{}").body == b"{}"
    assert server.connections == 2  # a body read to the close ends its connection


def test_interim_answers_are_skipped(scripted: type[Scripted], transport: SocketTransport) -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n"
    server = scripted([interim + _ok(b"{}")])
    reply = transport.request("POST", server.url, {}, b"{}")
    assert reply.status == 200 and reply.body == b"{}"


@pytest.mark.parametrize(
    ("coding", "packed"),
    [
        ("gzip", gzip.compress(b'{"big": true}', mtime=0)),  # the same bytes in every worker
        ("deflate", zlib.compress(b'{"big": true}')),
        ("deflate", _raw_deflate(b'{"big": true}')),  # raw deflate, as IIS sends
        ("br", b'{"big": true}'),  # not asked for, not known: passed through, as httpx does
    ],
    ids=["gzip", "deflate-zlib", "deflate-raw", "br"],
)
def test_encoded_bodies_are_decoded(
    scripted: type[Scripted], transport: SocketTransport, coding: str, packed: bytes
) -> None:
    server = scripted([_ok(packed, JSON + f"Content-Encoding: {coding}\r\n".encode())])
    assert transport.request("POST", server.url, {}, b"{}").body == b'{"big": true}'


def test_a_body_that_cannot_be_decoded_is_a_violation(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    server = scripted([_ok(b"not gzip at all", JSON + b"Content-Encoding: gzip\r\n")])
    with pytest.raises(ProtocolViolation, match="could not be decoded: DecodingError"):
        transport.request("POST", server.url, {}, b"{}")


def test_no_body_for_head_204_and_304(scripted: type[Scripted], transport: SocketTransport) -> None:
    server = scripted(
        [
            b"HTTP/1.1 200 OK\r\ncontent-length: 99\r\n\r\n",
            b"HTTP/1.1 204 No Content\r\n\r\n",
            b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n",
        ]
    )
    assert transport.request("HEAD", server.url, {}, b"").body == b""
    assert transport.request("POST", server.url, {}, b"{}").status == 204
    assert transport.request("POST", server.url, {}, b"{}").status == 202
    assert server.connections == 1


def test_keep_alive_reuses_one_connection_and_close_ends_it(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    server = scripted([_ok(b"1"), _ok(b"2", JSON + b"Connection: close\r\n"), _ok(b"3"), _ok(b"4")])
    bodies = [transport.request("POST", server.url, {}, b"{}").body for _ in range(4)]
    assert bodies == [b"1", b"2", b"3", b"4"]
    assert server.connections == 2  # the second answer said close


def test_an_idle_connection_the_server_closed_is_not_used(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    server = scripted([_ok(b"1"), None, _ok(b"3")])
    assert transport.request("POST", server.url, {}, b"{}").body == b"1"
    with pytest.raises(ConnectionLost, match="RemoteProtocolError"):
        transport.request("POST", server.url, {}, b"{}")  # the server hangs up: no retry
    assert transport.request("POST", server.url, {}, b"{}").body == b"3"
    assert len(server.requests) == 3  # nothing was sent twice


def test_a_stale_pooled_connection_is_dropped_before_use(
    scripted: type[Scripted], transport: SocketTransport
) -> None:
    # The server closes after its first answer without saying so: the connection is
    # kept, then found closed when the next request would use it.
    server = scripted([Last(_ok(b"1")), _ok(b"2")])
    assert transport.request("POST", server.url, {}, b"{}").body == b"1"
    threading.Event().wait(0.3)  # the close reaches the client meanwhile
    assert transport.request("POST", server.url, {}, b"{}").body == b"2"
    assert server.connections == 2 and len(server.requests) == 2


@pytest.mark.parametrize(
    ("answer", "error", "words"),
    [
        (b"HTTP/2 200 OK\r\n\r\n", ConnectionLost, "RemoteProtocolError"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", ConnectionLost, "RemoteProtocolError"),
        # a continuation with nothing to continue
        (b"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", ConnectionLost, "RemoteProtocolError"),
        (
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}",
            ConnectionLost,
            "RemoteProtocolError",
        ),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}", ReplyLost, "RemoteProtocolError"),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
            ReplyLost,
            "RemoteProtocolError",
        ),
    ],
)
def test_malformed_framing_is_a_lost_reply_named_as_httpx_names_it(
    scripted: type[Scripted],
    transport: SocketTransport,
    answer: bytes,
    error: type[ReplyLost],
    words: str,
) -> None:
    server = scripted([Last(answer)])
    with pytest.raises(error, match=words) as caught:
        transport.request("POST", server.url, {}, b"{}")
    if error is ReplyLost:
        assert not isinstance(caught.value, ConnectionLost)  # the headers had come


def test_a_refused_connection_is_lost_before_any_answer(transport: SocketTransport) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectionLost, match=r"no reply from POST .*: ConnectError \(failed\)"):
        transport.request("POST", f"http://127.0.0.1:{port}/mcp", {}, b"{}")


def test_tokens_in_the_url_are_masked_in_errors(transport: SocketTransport) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectionLost) as caught:
        transport.request("GET", f"http://127.0.0.1:{port}/mcp?access_token=s3cret-tok", {}, b"")
    assert "s3cret-tok" not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "env", "direct"),
    [
        ("http://127.0.0.1:8000/mcp", {}, True),
        ("https://127.0.0.1:8000/mcp", {}, False),
        ("http://user:pw@127.0.0.1:8000/mcp", {}, False),
        ("http://example.test/mcp", {"HTTP_PROXY": "http://proxy.test:3128"}, False),
        ("http://example.test/mcp", {"http_proxy": "http://p:1", "NO_PROXY": "example.test"}, True),
        ("http://127.0.0.1:notaport/mcp", {}, False),
    ],
)
def test_what_it_serves_itself(
    monkeypatch: pytest.MonkeyPatch, url: str, env: dict[str, str], direct: bool
) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert serves_directly(url) is direct


def test_what_it_does_not_serve_goes_to_the_fallback() -> None:
    seen: list[str] = []

    class Fallback:
        def request(self, method: str, url: str, headers: object, body: bytes) -> Response:
            seen.append(url)
            return Response(200, {}, b"fallback")

        def close(self) -> None:
            seen.append("closed")

    transport = SocketTransport(timeout=1.0, max_bytes=10, fallback=Fallback())
    assert transport.request("GET", "https://osf.test/mcp", {}, b"").body == b"fallback"
    transport.close()
    assert seen == ["https://osf.test/mcp", "closed"]


def test_the_default_fallback_is_a_bounded_httpx_transport() -> None:
    transport = SocketTransport(timeout=3.0, max_bytes=99)
    fallback = transport._fallback_transport()
    assert isinstance(fallback, HttpxTransport)
    assert (fallback.timeout, fallback.max_bytes) == (3.0, 99)
    transport.close()


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"timeout": 0.0, "max_bytes": 1}, "timeout must be a positive"),
        ({"timeout": 1.0, "max_bytes": 0}, "max_bytes must be at least 1"),
        ({"timeout": 1.0, "max_bytes": 1, "keep": -1}, "keep must be 0 or more"),
    ],
)
def test_bad_bounds_are_refused(kwargs: dict[str, float], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        SocketTransport(**kwargs)  # type: ignore[arg-type]


def test_the_loopback_server_sees_what_httpx_would_send() -> None:
    seen: list[Request] = []

    def app(request: Request) -> Response:
        seen.append(request)
        return Response(200, {"content-type": "application/json"}, b"{}")

    with LoopbackServer(app) as server:
        url = server.origin + "/mcp/a%2Fb?q=1"
        headers = {"Content-Type": "application/json", "Authorization": "Bearer t"}
        with SocketTransport(timeout=5.0, max_bytes=1024) as mine:
            mine.request("POST", url, headers, b'{"a":1}')
        with HttpxTransport(timeout=5.0) as theirs:
            theirs.request("POST", url, headers, b'{"a":1}')
    ours, httpx_request = seen
    assert (ours.method, ours.path, ours.query, ours.body) == (
        httpx_request.method,
        httpx_request.path,
        httpx_request.query,
        httpx_request.body,
    )
    expected = {k: v for k, v in httpx_request.headers.items() if k != "user-agent"}
    assert {k: v for k, v in ours.headers.items() if k != "user-agent"} == expected


def test_many_threads_share_one_transport(transport: SocketTransport) -> None:
    with LoopbackServer(lambda r: Response(200, {}, r.body)) as server:
        errors: list[BaseException] = []

        def many(n: int) -> None:
            try:
                for i in range(20):
                    body = f"{n}-{i}".encode()
                    assert transport.request("POST", server.origin + "/", {}, body).body == body
            except BaseException as err:  # collected for the main thread
                errors.append(err)

        threads = [threading.Thread(target=many, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []


def test_an_answer_sent_before_the_body_was_read_is_still_read() -> None:
    """A server may refuse a request (413) from its head and close without reading
    the body; the write then fails, but the answer came first. httpx reads it (httpcore
    tries the response after a failed write), and so must this transport."""
    refusal = (
        b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 9\r\nconnection: close\r\n\r\ntoo large"
    )
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def refuse() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            conn.sendall(refusal)
            conn.close()  # the body unread: the client's write is reset

    threading.Thread(target=refuse, daemon=True).start()
    url = f"http://127.0.0.1:{port}/sync"
    body = b"x" * (32 * 1024 * 1024)  # more than loopback's buffers take in
    try:
        for transport in (
            HttpxTransport(timeout=10.0),
            SocketTransport(timeout=10.0, max_bytes=1024),
        ):
            with transport:
                reply = transport.request("POST", url, {}, body)
            assert (reply.status, reply.body) == (413, b"too large"), transport
    finally:
        listener.close()
