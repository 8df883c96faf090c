"""HttpTransport: HTTP/1.1 framing, keep-alive, proxies and TLS, byte by byte.

A :class:`Scripted` server on loopback answers each request with the next canned
bytes of its script (no HTTP library between them and the client) and keeps every
request it read, so each test says exactly what went over the wire both ways. The
bounds (deadline, size cap, open event streams) are tested with the hostile servers
(``tests/hostile/test_hostile_client.py``). ``tls/`` holds a test CA's certificate
(``ca.pem``, its key thrown away) and a certificate it signed for 127.0.0.1 with its
key (``server.pem``).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import socket
import ssl
import threading
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from pytest_osfoundry.client import (
    ConnectionLost,
    DeadlineExceeded,
    HttpTransport,
    ProtocolViolation,
    ReplyLost,
    ResponseTooLarge,
)
from pytest_osfoundry.client import _http_transport as http_transport
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer

JSON = b"content-type: application/json\r\n"


class Last(bytes):
    """A scripted answer after which the server closes the connection."""


TLS = Path(__file__).parent / "tls"


class Scripted:
    """A loopback server answering request ``n`` with ``script[n]`` (``None``: close
    the connection without an answer; :class:`Last`: answer, then close).
    ``requests`` holds each request's raw head and body; ``connections`` counts the
    connections accepted. With ``tls`` it speaks HTTPS with ``tls/server.pem``."""

    def __init__(self, script: list[bytes | None], *, tls: bool = False) -> None:
        self.script = list(script)
        self.requests: list[tuple[bytes, bytes]] = []
        self.connections = 0
        self._tls: ssl.SSLContext | None = None
        if tls:
            self._tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self._tls.load_cert_chain(TLS / "server.pem")
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/mcp"
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
            if self._tls is not None:
                conn = self._tls.wrap_socket(conn, server_side=True)
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
        def __init__(self, script: list[bytes | None], *, tls: bool = False) -> None:
            super().__init__(script, tls=tls)
            made.append(self)

    yield Made
    for server in made:
        server.close()


@pytest.fixture
def transport() -> Iterator[HttpTransport]:
    with HttpTransport(timeout=5.0, max_bytes=1024 * 1024) as made:
        yield made


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def _ok(body: bytes, extra: bytes = JSON) -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + extra + b"content-length: %d\r\n\r\n" % len(body) + body


def test_sends_the_callers_headers_and_its_defaults(
    scripted: type[Scripted], transport: HttpTransport
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
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([_ok(b"{}")])
    sent = {"HOST": "evil.example", "Accept": "text/event-stream"}
    transport.request("GET", server.url, sent, b"")
    head = server.requests[0][0].decode()
    assert "HOST: evil.example\r\n" in head and "Host:" not in head
    assert "Accept: text/event-stream\r\n" in head and "*/*" not in head
    assert "content-length" not in head.lower()  # a GET without a body declares none


def test_an_empty_post_declares_length_zero(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([_ok(b"{}")])
    transport.request("POST", server.url, {}, b"")
    assert b"Content-Length: 0\r\n" in server.requests[0][0]


def test_the_head_and_the_body_leave_in_one_write(
    scripted: type[Scripted], transport: HttpTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    """http.client writes them apart (two segments: a server woken twice)."""
    writes: list[bytes] = []
    sendall = http_transport._Socket.sendall

    def spy(sock: http_transport._Socket, data: bytes, flags: int = 0) -> None:
        writes.append(bytes(data))
        sendall(sock, data, flags)

    monkeypatch.setattr(http_transport._Socket, "sendall", spy)
    server = scripted([_ok(b"{}")])
    transport.request("POST", server.url, {}, b'{"a": 1}')
    assert len(writes) == 1 and writes[0].endswith(b'\r\n\r\n{"a": 1}')


def test_the_target_is_percent_encoded_as_httpx_does(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([_ok(b"{}")])
    transport.request("GET", server.url + "/a b?token=x y&k=%41", {}, b"")
    assert server.requests[0][0].startswith(b"GET /mcp/a%20b?token=x%20y&k=%41 HTTP/1.1\r\n")


def test_reply_headers_are_lower_cased_and_repeats_joined(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    extra = JSON + b"X-Thing: a\r\nx-thing: b\r\nWWW-Authenticate: Bearer x\r\n"
    server = scripted([b"HTTP/1.1 401 Unauthorized\r\n" + extra + b"Content-Length: 2\r\n\r\n{}"])
    reply = transport.request("POST", server.url, {}, b"{}")
    assert reply.status == 401 and reply.body == b"{}"
    assert reply.headers["x-thing"] == "a, b"
    assert reply.headers["www-authenticate"] == "Bearer x"


def test_a_folded_header_line_is_unfolded_as_h11_does(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([b"HTTP/1.1 200 OK\r\nX-A: one\r\n\t two\r\ncontent-length: 0\r\n\r\n"])
    assert transport.request("GET", server.url, {}, b"").headers["x-a"] == "one two"


def test_chunked_bodies_are_joined_and_trailers_dropped(
    scripted: type[Scripted], transport: HttpTransport
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
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([Last(b"HTTP/1.0 200 OK\r\n" + JSON + b'\r\n{"x": 2}'), _ok(b"{}")])
    assert transport.request("POST", server.url, {}, b"{}").body == b'{"x": 2}'
    assert transport.request("POST", server.url, {}, b"{}").body == b"{}"
    assert server.connections == 2  # a body read to the close ends its connection


def test_interim_answers_are_skipped(scripted: type[Scripted], transport: HttpTransport) -> None:
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
    scripted: type[Scripted], transport: HttpTransport, coding: str, packed: bytes
) -> None:
    server = scripted([_ok(packed, JSON + f"Content-Encoding: {coding}\r\n".encode())])
    assert transport.request("POST", server.url, {}, b"{}").body == b'{"big": true}'


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_compressed_body_is_capped_as_it_is_decoded(
    scripted: type[Scripted], transport: HttpTransport, coding: str
) -> None:
    """50 MiB of zeros packed into some 50 KiB: refused at the 1 MiB cap without
    ever being in memory whole."""
    packer = zlib.compressobj(wbits=zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS)
    zeros = bytes(1024 * 1024)
    bomb = b"".join(packer.compress(zeros) for _ in range(50)) + packer.flush()
    server = scripted([Last(_ok(bomb, JSON + f"Content-Encoding: {coding}\r\n".encode()))])
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLarge, match="the response exceeded 1 MiB"):
            transport.request("POST", server.url, {}, b"{}")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024


def test_a_body_that_cannot_be_decoded_is_a_violation(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([_ok(b"not gzip at all", JSON + b"Content-Encoding: gzip\r\n")])
    with pytest.raises(ProtocolViolation, match="could not be decoded: DecodingError"):
        transport.request("POST", server.url, {}, b"{}")


def test_no_body_for_head_204_and_304(scripted: type[Scripted], transport: HttpTransport) -> None:
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
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([_ok(b"1"), _ok(b"2", JSON + b"Connection: close\r\n"), _ok(b"3"), _ok(b"4")])
    bodies = [transport.request("POST", server.url, {}, b"{}").body for _ in range(4)]
    assert bodies == [b"1", b"2", b"3", b"4"]
    assert server.connections == 2  # the second answer said close


def test_an_idle_connection_the_server_closed_is_not_used(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([_ok(b"1"), None, _ok(b"3")])
    assert transport.request("POST", server.url, {}, b"{}").body == b"1"
    with pytest.raises(ConnectionLost, match="RemoteProtocolError"):
        transport.request("POST", server.url, {}, b"{}")  # the server hangs up: no retry
    assert transport.request("POST", server.url, {}, b"{}").body == b"3"
    assert len(server.requests) == 3  # nothing was sent twice


def test_a_stale_pooled_connection_is_dropped_before_use(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    # The server closes after its first answer without saying so: the connection is
    # kept, then found closed when the next request would use it.
    server = scripted([Last(_ok(b"1")), _ok(b"2")])
    assert transport.request("POST", server.url, {}, b"{}").body == b"1"
    threading.Event().wait(0.3)  # the close reaches the client meanwhile
    assert transport.request("POST", server.url, {}, b"{}").body == b"2"
    assert server.connections == 2 and len(server.requests) == 2


def test_a_connection_idle_too_long_is_not_used(
    scripted: type[Scripted], transport: HttpTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server may close an idle connection as a request arrives (the request is
    then reset): one idle for IDLE_LIMIT seconds is closed rather than used."""
    monkeypatch.setattr(http_transport, "IDLE_LIMIT", 0.05)
    server = scripted([_ok(b"1"), _ok(b"2"), _ok(b"3")])
    assert transport.request("POST", server.url, {}, b"{}").body == b"1"
    assert transport.request("POST", server.url, {}, b"{}").body == b"2"
    assert server.connections == 1  # used again at once
    threading.Event().wait(0.1)
    assert transport.request("POST", server.url, {}, b"{}").body == b"3"
    assert server.connections == 2


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
        (b"HTTP/1.1 200 OK\r\nX(y): 1\r\ncontent-length: 0\r\n\r\n", ConnectionLost, "Remote"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 2x\r\n\r\n{}", ConnectionLost, "Remote"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n", ConnectionLost, "Remote"),
        (b"HTTP/1.1  200 OK\r\ncontent-length: 0\r\n\r\n", ConnectionLost, "Remote"),
        (b"HTTP/1.1 200 OK\r\nX-A: a\x01b\r\ncontent-length: 0\r\n\r\n", ConnectionLost, "Remote"),
        (b"HTTP/1.1 200 OK\r\n: x\r\ncontent-length: 0\r\n\r\n", ConnectionLost, "Remote"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n-1\r\n", ReplyLost, "Remote"),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n",
            ReplyLost,
            "Remote",
        ),
    ],
    ids=[
        "http2",
        "no-colon",
        "lone-continuation",
        "two-lengths",
        "short-body",
        "bad-chunk-size",
        "name-not-a-token",
        "length-not-a-number",
        "unsupported-coding",
        "two-spaces",
        "control-in-value",
        "empty-name",
        "negative-chunk",
        "chunk-size-junk",
    ],
)
def test_malformed_framing_is_a_lost_reply_named_as_httpx_names_it(
    scripted: type[Scripted],
    transport: HttpTransport,
    answer: bytes,
    error: type[ReplyLost],
    words: str,
) -> None:
    server = scripted([Last(answer)])
    with pytest.raises(error, match=words) as caught:
        transport.request("POST", server.url, {}, b"{}")
    if error is ReplyLost:
        assert not isinstance(caught.value, ConnectionLost)  # the headers had come


def test_a_refused_connection_is_lost_before_any_answer(transport: HttpTransport) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectionLost, match=r"no reply from POST .*: ConnectError \(failed\)"):
        transport.request("POST", f"http://127.0.0.1:{port}/mcp", {}, b"{}")


def test_tokens_in_the_url_are_masked_in_errors(transport: HttpTransport) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp?access_token=s3cret-tok"
    with pytest.raises(ConnectionLost) as caught:
        transport.request("GET", url, {"Authorization": "Bearer s3cret-tok"}, b"")
    assert "s3cret-tok" not in str(caught.value) + repr(caught.value)
    assert caught.value.url == f"http://127.0.0.1:{port}/mcp?access_token=***"


@pytest.mark.parametrize("value", ["Bearer s3cret\r\nX-Evil: 1", "Bearer s3cret\n",
                                   "Bearer s3cret\u2026tok"])
def test_a_header_that_cannot_be_sent_is_named_never_shown(
    scripted: type[Scripted], transport: HttpTransport, value: str
) -> None:
    server = scripted([_ok(b"{}")])
    with pytest.raises(ValueError) as caught:
        transport.request("POST", server.url, {"Authorization": value}, b"{}")
    text = str(caught.value) + repr(caught.value)
    assert "s3cret" not in text
    assert "the 'Authorization' header of POST " in text
    assert server.requests == []  # nothing went out


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
        HttpTransport(**kwargs)  # type: ignore[arg-type]


def test_the_loopback_server_sees_what_httpx_would_send() -> None:
    seen: list[Request] = []

    def app(request: Request) -> Response:
        seen.append(request)
        return Response(200, {"content-type": "application/json"}, b"{}")

    with LoopbackServer(app) as server:
        url = server.origin + "/mcp/a%2Fb?q=1"
        headers = {"Content-Type": "application/json", "Authorization": "Bearer t"}
        with HttpTransport(timeout=5.0, max_bytes=1024) as mine:
            mine.request("POST", url, headers, b'{"a":1}')
        with httpx.Client(timeout=5.0) as theirs:
            theirs.post(url, headers=headers, content=b'{"a":1}')
    ours, httpx_request = seen
    assert (ours.method, ours.path, ours.query, ours.body) == (
        httpx_request.method,
        httpx_request.path,
        httpx_request.query,
        httpx_request.body,
    )
    expected = {k: v for k, v in httpx_request.headers.items() if k != "user-agent"}
    # httpx also offers br and zstd when brotli or zstandard is installed (Locust, in the
    # test extra, brings brotli); the kit decodes gzip and deflate only.
    expected["accept-encoding"] = ", ".join(
        e for e in expected["accept-encoding"].split(", ") if e not in ("br", "zstd")
    )
    assert {k: v for k, v in ours.headers.items() if k != "user-agent"} == expected


def test_many_threads_share_one_transport(transport: HttpTransport) -> None:
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
    the body; the write then fails, but the answer came first: it is read (as httpcore
    reads it)."""
    refusal = (
        b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 9\r\nconnection: close\r\n\r\ntoo large"
    )
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def refuse() -> None:
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
        with HttpTransport(timeout=10.0, max_bytes=1024) as transport:
            reply = transport.request("POST", url, {}, body)
        assert (reply.status, reply.body) == (413, b"too large")
    finally:
        listener.close()


def test_a_multipart_media_type_is_no_malformed_head(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    """The email parser under http.client notes, of a multipart type, a body it was not
    given: not the server's fault."""
    server = scripted([_ok(b"--x--", b"Content-Type: multipart/mixed; boundary=x\r\n")])
    assert transport.request("GET", server.url, {}, b"").body == b"--x--"


def test_one_length_said_twice_is_one_length(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([b"HTTP/1.1 200 OK\r\ncontent-length: 2, 2\r\n\r\n{}", _ok(b"[]")])
    assert transport.request("POST", server.url, {}, b"{}").body == b"{}"
    assert transport.request("POST", server.url, {}, b"{}").body == b"[]"


# ---------------------------------------------------------------- URLs, proxies
@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The proxy environment emptied (a transport reads it when made)."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def test_credentials_in_the_url_become_basic_authorization(
    scripted: type[Scripted], transport: HttpTransport
) -> None:
    server = scripted([_ok(b"{}"), _ok(b"{}")])
    url = server.url.replace("http://", "http://us%40er:p%3Aw@")
    transport.request("GET", url, {}, b"")
    transport.request("GET", url, {"Authorization": "Bearer mine"}, b"")
    expected = "Basic " + base64.b64encode(b"us@er:p:w").decode()
    assert f"\r\nAuthorization: {expected}".encode() in server.requests[0][0]
    assert b"\r\nAuthorization: Bearer mine" in server.requests[1][0]  # the caller's wins
    assert b"Basic" not in server.requests[1][0]


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://127.0.0.1/mcp", "the scheme 'ftp' is not http or https"),
        ("http://127.0.0.1:notaport/mcp", "its port is not a number"),
        ("http:///mcp", "it names no host"),
    ],
)
def test_a_url_it_cannot_send_to_is_a_clear_lost_reply(
    transport: HttpTransport, url: str, words: str
) -> None:
    with pytest.raises(ReplyLost, match=f"cannot send to this URL \\({words}\\)"):
        transport.request("GET", url, {}, b"")


def test_a_proxy_from_the_environment_forwards_http(
    scripted: type[Scripted], no_proxies: pytest.MonkeyPatch
) -> None:
    proxy = scripted([_ok(b"{}")])
    no_proxies.setenv("HTTP_PROXY", f"http://pr%40xy:s3cret@127.0.0.1:{proxy.port}")
    no_proxies.setenv("NO_PROXY", "elsewhere.test")
    with HttpTransport(timeout=5.0) as transport:
        assert transport.request("POST", "http://osf.test:8080/mcp?a=1", {}, b"{}").body == b"{}"
    head = proxy.requests[0][0].decode()
    assert head.startswith("POST http://osf.test:8080/mcp?a=1 HTTP/1.1\r\n")
    assert "\r\nHost: osf.test:8080\r\n" in head
    assert "Proxy-Authorization: Basic " + base64.b64encode(b"pr@xy:s3cret").decode() in head


def test_no_proxy_sends_straight_to_the_host(
    scripted: type[Scripted], no_proxies: pytest.MonkeyPatch
) -> None:
    server = scripted([_ok(b"{}")])
    no_proxies.setenv("http_proxy", "http://127.0.0.1:9")  # nothing listens there
    no_proxies.setenv("no_proxy", "127.0.0.1")
    with HttpTransport(timeout=5.0) as transport:
        assert transport.request("GET", server.url, {}, b"").body == b"{}"
    assert server.requests[0][0].startswith(b"GET /mcp HTTP/1.1\r\n")


def test_a_proxy_it_cannot_use_is_named_without_its_secret(
    no_proxies: pytest.MonkeyPatch,
) -> None:
    no_proxies.setenv("ALL_PROXY", "socks5://user:s3cret@127.0.0.1:1080")
    with HttpTransport(timeout=5.0) as transport, pytest.raises(ReplyLost) as caught:
        transport.request("GET", "http://osf.test/mcp", {}, b"")
    assert "is not an http:// proxy" in str(caught.value)
    assert "s3cret" not in str(caught.value)


# ---------------------------------------------------------------- TLS
@pytest.fixture
def trust_test_ca(no_proxies: pytest.MonkeyPatch) -> None:
    no_proxies.setenv("SSL_CERT_FILE", str(TLS / "ca.pem"))
    no_proxies.delenv("SSL_CERT_DIR", raising=False)


@pytest.mark.usefixtures("trust_test_ca")
def test_https_is_verified_tls_and_keeps_its_connection(scripted: type[Scripted]) -> None:
    server = scripted([_ok(b"1"), _ok(b"2")], tls=True)
    with HttpTransport(timeout=5.0) as transport:
        assert transport.request("POST", server.url, {}, b"{}").body == b"1"
        threading.Event().wait(0.1)  # TLS 1.3 tickets reach the idle connection meanwhile
        assert transport.request("POST", server.url, {}, b"{}").body == b"2"
    assert server.connections == 1
    assert server.requests[0][0].startswith(b"POST /mcp HTTP/1.1\r\n")


def test_a_certificate_it_does_not_trust_refuses_the_connection(
    scripted: type[Scripted], no_proxies: pytest.MonkeyPatch
) -> None:
    no_proxies.delenv("SSL_CERT_FILE", raising=False)
    no_proxies.delenv("SSL_CERT_DIR", raising=False)  # certifi's bundle: no test CA in it
    server = scripted([_ok(b"{}")], tls=True)
    with HttpTransport(timeout=5.0) as transport, pytest.raises(ConnectionLost) as caught:
        transport.request("GET", server.url, {}, b"")
    assert "ConnectError (failed): " in str(caught.value)
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
    assert server.requests == []


@pytest.mark.usefixtures("trust_test_ca")
def test_a_silent_tls_handshake_ends_at_the_deadline() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never speaks TLS
        url = f"https://127.0.0.1:{silent.getsockname()[1]}/mcp"
        with HttpTransport(timeout=0.5) as transport, pytest.raises(DeadlineExceeded) as caught:
            transport.request("GET", url, {}, b"")
    assert str(caught.value).startswith("no answer within 0.5 s (GET https://127.0.0.1:")


class Tunnel:
    """An HTTP proxy that opens ``CONNECT`` tunnels, keeping each ``CONNECT`` head."""

    def __init__(self) -> None:
        self.heads: list[bytes] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self._sock.accept()
                threading.Thread(target=self._open, args=(conn,), daemon=True).start()

    def _open(self, conn: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            head += conn.recv(65536)
        self.heads.append(head)
        host, _, port = head.split(b" ")[1].decode().rpartition(":")
        far = socket.create_connection((host, int(port)))
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        for one, other in ((conn, far), (far, conn)):
            threading.Thread(target=self._pipe, args=(one, other), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._sock.close()


@pytest.mark.usefixtures("trust_test_ca")
def test_https_through_a_proxy_goes_through_its_tunnel(
    scripted: type[Scripted], no_proxies: pytest.MonkeyPatch
) -> None:
    server = scripted([_ok(b"{}")], tls=True)
    tunnel = Tunnel()
    no_proxies.setenv("HTTPS_PROXY", f"127.0.0.1:{tunnel.port}")  # no scheme: http://
    try:
        with HttpTransport(timeout=5.0) as transport:
            assert transport.request("GET", server.url, {}, b"").body == b"{}"
    finally:
        tunnel.close()
    assert tunnel.heads[0].startswith(f"CONNECT 127.0.0.1:{server.port} HTTP/1.".encode())
    assert server.requests[0][0].startswith(b"GET /mcp HTTP/1.1\r\n")


def test_an_event_stream_ends_where_the_callers_stream_end_says(
    scripted: type[Scripted],
) -> None:
    """The transport reads bytes: where a stream's reply ends is the ``stream_end`` it
    was given (here: a line ``done``), not a JSON-RPC id it finds itself."""
    stream = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: a\n\ndone\n"
    server = scripted([stream])  # the connection stays open after "done"
    seen: list[bytes] = []

    def stream_end(body: bytes) -> Callable[[bytes], bool] | None:
        seen.append(body)
        return (lambda piece: b"done\n" in piece) if body == b"ask" else None

    with HttpTransport(timeout=5.0, stream_end=stream_end) as made:
        reply = made.request("POST", server.url, {}, b"ask")
    assert seen == [b"ask"] and reply.body.endswith(b"done\n")
    server2 = scripted([stream])
    with HttpTransport(timeout=5.0, stream_end=stream_end) as made:
        assert made.request("POST", server2.url, {}, b"other").body == b""  # nothing to wait for
