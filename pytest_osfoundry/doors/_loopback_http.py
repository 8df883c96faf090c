"""HTTP/1.1 for the loopback door: requests read from a connection's bytes, answers written.

No socket and no thread here: :class:`HttpConnection` is one connection's HTTP/1.1,
fed the bytes that arrived so far (:meth:`HttpConnection.read`), and it turns the
app's :class:`~pytest_osfoundry.http.Response` into the bytes to send
(:meth:`HttpConnection.answer`). :mod:`~pytest_osfoundry.doors._loopback` moves the
bytes. Promises:

* **http.server's parsing.** The request line and the header fields are read by
  :class:`http.server.BaseHTTPRequestHandler` (``http.client.parse_headers``
  underneath), which also answers what it finds malformed (400, 431, 505). Answers
  are written by it too (status line, ``Server``, ``Date``, the ``Connection``
  rules). Every answer has an HTTP/1.1 status line: the door speaks HTTP/1.0 and
  HTTP/1.1 only, never HTTP/0.9's bare bytes.
* **Strict on top, once** (RFC 9110, RFC 9112). Refused with 400 and the connection
  closed: an HTTP/1.1 request without ``Host`` or any request with two (RFC 9112
  §3.2), a line ending in a bare LF or CR, a line that is not one ``token: value``
  field (folded, nameless, a space before the colon), a NUL in a value, both
  ``Transfer-Encoding`` and ``Content-Length`` (RFC 9112 §6.1: the request
  smuggling shape), ``Transfer-Encoding`` in an HTTP/1.0 request, one whose final
  coding is not ``chunked``, differing or malformed ``Content-Length`` values, a
  malformed chunked body. A transfer coding other than ``chunked`` alone: 501. A
  head over 64 KiB: 431 (414 if the request line alone is); a body over 8 MiB: 413.
  ``chunked`` is the one token, in any case, with the optional whitespace around a
  list element (RFC 9110 §5.6.1) not part of it.
* **Whole before served.** :meth:`HttpConnection.read` returns a request only once
  its body is whole (a chunked one decoded as it comes), so whoever serves it never
  waits on the client. ``Expect: 100-continue`` is answered once the head's framing
  is known good and a body is due (:meth:`HttpConnection.interim`).
* **Repeated fields are one value.** A field sent several times reaches the app as
  its values joined by ``", "`` in order (RFC 9110 §5.3), as httpx hands them to
  the other doors; a field that takes one value (``Origin``, ``Authorization``) is
  then not a valid one, and the app refuses it.
"""

from __future__ import annotations

import io
import re
from http.server import BaseHTTPRequestHandler
from typing import Any

from pytest_osfoundry.http import KeptOpen, Request, Response

__all__ = ["MAX_BODY", "MAX_HEAD", "HttpConnection", "Refused"]

MAX_BODY = 8 * 1024 * 1024
"""The largest request body read (a larger one is refused with 413)."""

MAX_HEAD = 64 * 1024
"""The largest request head (line and fields) read (a larger one: 431, or 414)."""

_MAX_CHUNK_LINE = 4096
"""The longest chunk-size line, extensions included."""

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?")
_TRAILER = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\r\n\x00]*")
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_NO_BODY = frozenset({204, 304})
"""Statuses whose answer has neither a body nor ``Content-Length`` (RFC 9110 §8.6)."""


class Refused(Exception):
    """A request the door answers itself; the connection closes after :attr:`answer`."""

    def __init__(self, answer: bytes) -> None:
        super().__init__("request refused")
        self.answer = answer


class _Malformed(Exception):
    """Raised inside the reader: refuse with ``status`` and the explanation ``why``."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status
        self.why = why


class _Http(BaseHTTPRequestHandler):
    """http.server's request parsing and answer writing, on bytes in memory."""

    protocol_version = "HTTP/1.1"
    server_version = "pytest-osfoundry"
    expects_continue: bool
    raw_requestline: bytes
    rfile: Any
    wfile: Any

    def __init__(self) -> None:  # deliberately not BaseRequestHandler's, which serves at once
        self.close_connection = True
        self.expects_continue = False
        self.command = ""
        self.requestline = ""
        self.request_version = self.protocol_version

    def version_string(self) -> str:
        """The ``Server`` field: the kit's name alone."""
        return self.server_version

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's error answer, always with a status line (it would leave it
        out for a request it took for HTTP/0.9)."""
        self.request_version = self.protocol_version
        super().send_error(code, message, explain)

    def handle_expect_100(self) -> bool:
        """Note the expectation; the door answers it once the framing is known good."""
        self.expects_continue = True
        return True

    def log_message(self, format: str, *args: object) -> None:
        """Stay silent: request lines may carry secrets in a bad client's query string."""


class _Body:
    """A request body arriving: ``Content-Length`` bytes, or a chunked body decoded
    as it comes (RFC 9112 §7.1: sizes in hex, each chunk and line ending in CRLF,
    trailer fields read and dropped)."""

    def __init__(self, length: int | None) -> None:
        self.length = length
        """The body's length, ``None`` for a chunked body."""
        self._parts: list[bytes] = []
        self._size = 0
        self._left = 0  # bytes of the current chunk still due
        self._state = "size"  # size, data, end of data, trailer
        self._trailer = 0

    def read(self, buf: bytearray) -> bytes | None:
        """The whole body, taken from the front of ``buf``; ``None`` until it is whole.

        Raises:
            _Malformed: a malformed chunked body (400), or one over :data:`MAX_BODY` (413).
        """
        if self.length is not None:
            if len(buf) < self.length:
                return None
            body = bytes(buf[: self.length])
            del buf[: self.length]
            return body
        while True:
            if self._state == "data":
                taken = min(self._left, len(buf))
                if not taken:
                    return None
                self._parts.append(bytes(buf[:taken]))
                del buf[:taken]
                self._left -= taken
                if self._left:
                    return None
                self._state = "end of data"
                continue
            if self._state == "end of data":
                if len(buf) < 2:
                    return None
                if buf[:2] != b"\r\n":
                    raise _Malformed(400, "a chunk's data must end in CRLF")
                del buf[:2]
                self._state = "size"
                continue
            end = buf.find(b"\r\n", 0, _MAX_CHUNK_LINE)
            if end < 0:
                if len(buf) >= _MAX_CHUNK_LINE:
                    raise _Malformed(400, "a chunk-size or trailer line over 4 KiB")
                return None
            line = bytes(buf[:end])
            del buf[: end + 2]
            if self._state == "trailer":
                if not line:
                    body = b"".join(self._parts)
                    self._parts = []
                    return body
                self._trailer += len(line) + 2
                if _TRAILER.fullmatch(line) is None or self._trailer > MAX_HEAD:
                    raise _Malformed(400, "a malformed or oversized trailer field")
                continue
            size = _CHUNK_SIZE.fullmatch(line)
            if size is None:
                raise _Malformed(400, "a chunk-size line must be hex digits (and extensions)")
            self._left = int(size[1], 16)
            self._size += self._left
            if self._size > MAX_BODY:
                raise _Malformed(413, f"a request body over {MAX_BODY} bytes")
            self._state = "data" if self._left else "trailer"


class _Head:
    """A parsed request head waiting for its body."""

    __slots__ = ("body", "fields", "method", "target")

    def __init__(self, method: str, target: str, fields: dict[str, str], body: _Body) -> None:
        self.method = method
        self.target = target
        self.fields = fields
        self.body = body


class HttpConnection:
    """One connection's HTTP/1.1: requests read from its bytes, answers written.

    Requests are read and answered one at a time, in order: :meth:`read` the next
    request, :meth:`answer` it, then :meth:`read` again.
    """

    def __init__(self) -> None:
        self._http = _Http()
        self._head: _Head | None = None
        self._interim = b""

    @property
    def reading(self) -> bool:
        """Whether a request's head has been read and its body is still due."""
        return self._head is not None

    @property
    def closes(self) -> bool:
        """Whether the connection ends after the answer last written (or the request
        last read: ``Connection: close``, HTTP/1.0 without ``keep-alive``)."""
        return bool(self._http.close_connection)

    def read(self, buf: bytearray) -> Request | None:
        """The next request once it is whole, its bytes taken from the front of
        ``buf``; ``None`` while more bytes are needed.

        Raises:
            Refused: the request is malformed or too large; send
                :attr:`Refused.answer`, then close the connection.
        """
        try:
            if self._head is None:
                self._http.command = ""  # no request yet: an answer to this one has a body
                raw = _take_head(buf)
                if raw is None:
                    return None
                self._head = self._parse(raw)
            body = self._head.body.read(buf)
        except _Malformed as err:
            self._head = None
            raise Refused(self._refusal(err.status, err.why)) from None
        if body is None:
            return None
        head, self._head = self._head, None
        self._interim = b""  # the body is here: no need to invite it
        path, _, query = head.target.partition("?")
        return Request(head.method, path, head.fields, body, query)

    def interim(self) -> bytes:
        """``100 Continue`` to send now, once, when the request read asked for it and
        its framing is good; ``b""`` otherwise."""
        out, self._interim = self._interim, b""
        return out

    def answer(self, response: Response) -> bytes:
        """The bytes of ``response`` to the request last read (no body for ``HEAD``,
        204 or 304); a ``Connection`` header of the app's decides :attr:`closes`.

        A :class:`~pytest_osfoundry.http.KeptOpen` answer is framed chunked and its body
        sent as one chunk, without the last chunk: the answer is not ended.
        """
        http = self._http
        http.wfile = io.BytesIO()
        http.send_response(response.status)
        kept = isinstance(response, KeptOpen)
        for name, value in response.headers.items():
            if name.lower() not in ("content-length", "transfer-encoding"):
                http.send_header(name, value)
        bare = response.status in _NO_BODY
        if kept and not bare:
            http.send_header("Transfer-Encoding", "chunked")
        elif not bare:
            http.send_header("Content-Length", str(len(response.body)))
        http.end_headers()
        if not bare and http.command != "HEAD":
            if kept:
                if response.body:
                    http.wfile.write(b"%X\r\n%s\r\n" % (len(response.body), response.body))
            else:
                http.wfile.write(response.body)
        out: bytes = http.wfile.getvalue()
        return out

    # -- reading a head -------------------------------------------------------------
    def _parse(self, head: bytes) -> _Head:
        """The head's request line and fields, checked, and the body due.

        Raises:
            _Malformed: the kit's strict rules refuse it.
            Refused: http.server refused it (its own answer).
        """
        http = self._http
        http.expects_continue = False
        http.rfile = io.BytesIO(head)
        http.wfile = io.BytesIO()
        http.raw_requestline = http.rfile.readline(MAX_HEAD + 1)
        if not http.parse_request():
            answer: bytes = http.wfile.getvalue()
            if not answer:  # a request line of blanks: http.server says nothing
                raise _Malformed(400, "an empty request line")
            raise Refused(answer)
        if len(http.requestline.split()) != 3:
            raise _Malformed(400, "an HTTP/0.9 request (no version): use HTTP/1.1")
        if http.request_version not in ("HTTP/1.0", "HTTP/1.1"):
            raise _Malformed(505, f"HTTP version {http.request_version!r}: use HTTP/1.1")
        if head.count(b"\n") != head.count(b"\r\n") or head.count(b"\r") != head.count(b"\n"):
            raise _Malformed(400, "every line of the head must end in CRLF")
        pairs = http.headers.items()
        if len(pairs) != head.count(b"\n") - 2:  # the request line and the blank line
            raise _Malformed(400, "a line that is not one 'name: value' field (or is folded)")
        fields: dict[str, str] = {}
        for name, value in pairs:
            if _TOKEN.fullmatch(name) is None or "\x00" in value:
                raise _Malformed(400, "a field name that is not a token, or a NUL in a value")
            key, value = name.lower(), value.strip(" \t")
            if key in fields:
                if key == "host":
                    raise _Malformed(400, "more than one Host field (RFC 9112 §3.2)")
                fields[key] = f"{fields[key]}, {value}"
            else:
                fields[key] = value
        if "host" not in fields and http.request_version == "HTTP/1.1":
            raise _Malformed(400, "an HTTP/1.1 request without a Host field (RFC 9112 §3.2)")
        body = _Body(self._framing(fields))
        if http.expects_continue and body.length != 0:
            self._interim = _CONTINUE
        return _Head(str(http.command), http.path, fields, body)

    def _framing(self, fields: dict[str, str]) -> int | None:
        """The body's length from the head's fields (RFC 9112 §6); ``None``: chunked.

        Raises:
            _Malformed: ambiguous, malformed, unsupported or too large framing.
        """
        coding = fields.get("transfer-encoding")
        length = fields.get("content-length")
        if coding is not None:
            if length is not None:
                raise _Malformed(400, "both Transfer-Encoding and Content-Length (RFC 9112 §6.1)")
            if self._http.request_version == "HTTP/1.0":
                raise _Malformed(400, "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1)")
            codings = [c for c in (part.strip(" \t").lower() for part in coding.split(",")) if c]
            if codings == ["chunked"]:
                return None
            if not codings or codings[-1] != "chunked":
                raise _Malformed(400, "Transfer-Encoding whose final coding is not chunked")
            raise _Malformed(501, "a transfer coding other than chunked alone")
        if length is None:
            return 0
        values = {part.strip(" \t") for part in length.split(",")}
        text = values.pop()
        if values:
            raise _Malformed(400, "differing Content-Length values (RFC 9112 §6.3)")
        if not (text.isascii() and text.isdigit()):
            raise _Malformed(400, "a Content-Length that is not a number")
        if int(text) > MAX_BODY:
            raise _Malformed(413, f"a request body over {MAX_BODY} bytes")
        return int(text)

    def _refusal(self, status: int, why: str) -> bytes:
        """http.server's error answer for ``status``, explaining ``why`` (it closes)."""
        http = self._http
        http.wfile = io.BytesIO()
        http.send_error(status, None, why)
        out: bytes = http.wfile.getvalue()
        return out


def _take_head(buf: bytearray) -> bytes | None:
    """The request head at the front of ``buf`` (up to its blank line), taken from it;
    ``None`` until it is whole. Empty lines before it are dropped (RFC 9112 §2.2).

    Raises:
        _Malformed: no head within :data:`MAX_HEAD` bytes.
    """
    while buf[:2] == b"\r\n" or buf[:1] == b"\n":
        del buf[: 2 if buf[:1] == b"\r" else 1]
    ends = [i + 3 for i in (buf.find(b"\n\r\n", 0, MAX_HEAD),) if i >= 0]
    ends += [i + 2 for i in (buf.find(b"\n\n", 0, MAX_HEAD),) if i >= 0]
    if not ends:
        if len(buf) < MAX_HEAD:
            return None
        if b"\n" not in buf[:MAX_HEAD]:
            raise _Malformed(414, "a request line over 64 KiB")
        raise _Malformed(431, "a request head over 64 KiB")
    end = min(ends)
    head = bytes(buf[:end])
    del buf[:end]
    return head
