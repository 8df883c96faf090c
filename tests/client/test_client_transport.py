"""The transports in-process and recording, and the request a transport is given.

The one over the network has its own tests: ``test_client_http_transport.py``.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_osfoundry.client import (
    DirectTransport,
    RecordingTransport,
    ReplyLost,
    Transport,
)
from pytest_osfoundry.client._transport import FixedHeaders, split_target
from pytest_osfoundry.http import Handler, Request, Response

Via = Callable[[Handler], Transport]
TOKEN = "tok-TRANSPORT-5ecret-77"


class Capture:
    """A handler that keeps the request and answers with a fixed mixed-case header."""

    def __init__(self, status: int = 200) -> None:
        self.seen: list[Request] = []
        self.status = status

    def __call__(self, request: Request) -> Response:
        self.seen.append(request)
        return Response(self.status, {"x-echo": request.method}, b"body:" + request.body)


def test_fixed_headers_reach_the_handler_lower_cased_and_cannot_change() -> None:
    handler = Capture()
    transport = DirectTransport(handler)
    fixed = FixedHeaders({"Authorization": "Bearer one", "Mcp-Method": "tools/call"})
    transport.request("POST", "https://h.test/mcp", fixed, b"{}")
    assert dict(handler.seen[0].headers) == {
        "authorization": "Bearer one",
        "mcp-method": "tools/call",
    }
    assert list(fixed) == ["Authorization", "Mcp-Method"]  # as written, for logs
    with pytest.raises(TypeError, match="cannot change once built"):
        fixed["Authorization"] = "Bearer two"
    with pytest.raises(TypeError, match="cannot change once built"):
        del fixed["Mcp-Method"]
    plain = dict(fixed)
    plain["Authorization"] = "Bearer two"  # a plain copy is free to change
    transport.request("POST", "https://h.test/mcp", plain, b"{}")
    assert handler.seen[1].headers["authorization"] == "Bearer two"
    for again in (copy.copy(fixed), copy.deepcopy(fixed), pickle.loads(pickle.dumps(fixed))):
        assert type(again) is FixedHeaders and again == fixed
        assert dict(again.lowered) == {"authorization": "Bearer one", "mcp-method": "tools/call"}


def test_direct_transport_sees_every_change_to_a_reused_headers_dict() -> None:
    handler = Capture()
    transport = DirectTransport(handler)
    mine = {"Authorization": "Bearer one"}
    other = {"Authorization": "Bearer two", "X-Other": "1"}
    transport.request("GET", "https://h.test/a", mine, b"")
    transport.request("GET", "https://h.test/a", other, b"")
    mine["Authorization"] = "Bearer three"  # the same dict, changed in place
    transport.request("GET", "https://h.test/a", mine, b"")
    mine["Mcp-Session-Id"] = "s1"
    transport.request("GET", "https://h.test/a", mine, b"")
    seen = [dict(r.headers) for r in handler.seen]
    assert seen == [
        {"authorization": "Bearer one"},
        {"authorization": "Bearer two", "x-other": "1"},
        {"authorization": "Bearer three"},
        {"authorization": "Bearer three", "mcp-session-id": "s1"},
    ]


def test_direct_transport_hands_the_handler_read_only_headers() -> None:
    handler = Capture()
    DirectTransport(handler).request("GET", "https://h.test/a", {"A": "1"}, b"")
    with pytest.raises(TypeError):
        handler.seen[0].headers["a"] = "2"  # type: ignore[index]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://h.test/mcp", ("/mcp", "")),
        ("https://h.test/mcp?a=1&b=2#frag", ("/mcp", "a=1&b=2")),
        ("https://h.test", ("/", "")),
        ("https://h.test?x=1", ("/", "x=1")),
        ("http://h.test:8080/a/b%2Fc", ("/a/b%2Fc", "")),
    ],
)
def test_split_target(url: str, expected: tuple[str, str]) -> None:
    assert split_target(url) == expected


def test_direct_transport_builds_the_request() -> None:
    handler = Capture(201)
    reply = DirectTransport(handler).request(
        "post", "https://h.test/x/y?q=1", {"Content-Type": "text/plain", "X-A": "b"}, b"hi"
    )
    (req,) = handler.seen
    assert (req.method, req.path, req.query, req.body) == ("POST", "/x/y", "q=1", b"hi")
    assert dict(req.headers) == {"content-type": "text/plain", "x-a": "b"}
    assert (reply.status, reply.body) == (201, b"body:hi")


def test_both_doors_deliver_the_same_request(via: Via) -> None:
    handler = Capture(404)
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    reply = via(handler).request("POST", "https://osf.test/a/b?c=d", headers, b'{"k":1}')
    (req,) = handler.seen
    assert (req.method, req.path, req.query, req.body) == ("POST", "/a/b", "c=d", b'{"k":1}')
    assert req.header("authorization") == f"Bearer {TOKEN}"
    assert req.header("content-type") == "application/json"
    assert reply.status == 404  # any status is a reply, not an exception
    assert reply.body == b"body:" + b'{"k":1}'
    assert reply.headers["x-echo"] == "POST"


def test_recording_transport_records_a_bounded_history() -> None:
    recorder = RecordingTransport(DirectTransport(Capture()), keep=3)
    for i in range(5):
        recorder.request("POST", f"https://h.test/{i}", {"X-N": str(i)}, str(i).encode())
    urls = [e.url for e in recorder.exchanges]
    assert urls == ["https://h.test/2", "https://h.test/3", "https://h.test/4"]
    last = recorder.exchanges[-1]
    assert (last.method, last.status, last.request_body, last.response_body) == (
        "POST",
        200,
        b"4",
        b"body:4",
    )
    assert last.request_headers == {"X-N": "4"}
    assert last.response_headers == {"x-echo": "POST"}
    assert last.elapsed >= 0.0
    recorder.exchanges.clear()  # a copy: the history is unaffected
    assert len(recorder.exchanges) == 3
    recorder.clear()
    assert recorder.exchanges == []


def test_recording_transport_records_lost_replies() -> None:
    class Dropping:
        def request(self, method: str, url: str, headers: object, body: bytes) -> Response:
            raise ReplyLost("no reply from POST https://h.test/x: dropped", url=url)

    recorder = RecordingTransport(Dropping())
    with pytest.raises(ReplyLost):
        recorder.request("POST", "https://h.test/x", {}, b"{}")
    (exchange,) = recorder.exchanges
    assert exchange.status == 0
    assert exchange.error is not None and "dropped" in exchange.error


def test_recording_transport_rejects_empty_history() -> None:
    with pytest.raises(ValueError, match="keep"):
        RecordingTransport(DirectTransport(Capture()), keep=0)


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["http://", "https://", "HTTP://", "ftp://", ""]),
    st.text(alphabet="abcAZ09-._~:/?#%&=+,;!$'()*@[] \\é", max_size=40),
)
def test_split_target_splits_as_urlsplit_does(scheme: str, rest: str) -> None:
    url = scheme + rest
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. a bad IPv6 host: split_target refuses it the same way
        with pytest.raises(ValueError):
            split_target(url)
        return
    assert split_target(url) == (parts.path or "/", parts.query)
