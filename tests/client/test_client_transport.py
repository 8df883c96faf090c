"""The transports: in-process, httpx (respx and a real refused socket), recording."""

from __future__ import annotations

import copy
import pickle
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_osfoundry.client import (
    DirectTransport,
    HttpxTransport,
    ProtocolViolation,
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


def test_httpx_lower_cases_response_headers() -> None:
    with respx.mock(base_url="https://osf.test") as router, HttpxTransport() as transport:
        router.get("/h").mock(return_value=httpx.Response(200, headers={"X-Mixed-Case": "v"}))
        reply = transport.request("GET", "https://osf.test/h", {}, b"")
    assert reply.headers["x-mixed-case"] == "v"
    assert all(name == name.lower() for name in reply.headers)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (httpx.ConnectError("refused"), "failed"),
        (httpx.ReadTimeout("slow"), "timed out"),
        (httpx.RemoteProtocolError("peer closed"), "failed"),
    ],
)
def test_httpx_transport_failures_become_reply_lost(error: Exception, kind: str) -> None:
    url = f"https://osf.test/mcp?access_token={TOKEN}"
    with respx.mock(base_url="https://osf.test") as router, HttpxTransport() as transport:
        router.post("/mcp").mock(side_effect=error)
        with pytest.raises(ReplyLost) as info:
            transport.request("POST", url, {"Authorization": f"Bearer {TOKEN}"}, b"{}")
    message = str(info.value)
    assert "https://osf.test/mcp?access_token=***" in message
    assert kind in message
    assert TOKEN not in message + repr(info.value)
    assert info.value.url == "https://osf.test/mcp?access_token=***"


def test_httpx_decoding_error_is_a_violation() -> None:
    with respx.mock(base_url="https://osf.test") as router, HttpxTransport() as transport:
        router.get("/z").mock(side_effect=httpx.DecodingError("bad gzip"))
        with pytest.raises(ProtocolViolation, match="could not be decoded"):
            transport.request("GET", "https://osf.test/z", {}, b"")


def test_real_socket_refused_is_reply_lost() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with HttpxTransport(timeout=2.0) as transport, pytest.raises(ReplyLost, match=str(port)):
        transport.request("GET", f"http://127.0.0.1:{port}/mcp", {}, b"")


def test_httpx_transport_closes_only_its_own_client() -> None:
    with HttpxTransport() as owned:
        pass
    assert owned.client.is_closed
    given = httpx.Client()
    with HttpxTransport(given):
        pass
    assert not given.is_closed
    given.close()


def test_httpx_transport_applies_its_timeout() -> None:
    seen: list[object] = []

    def side_effect(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return httpx.Response(200)

    with respx.mock(base_url="https://osf.test") as router, HttpxTransport(timeout=3.5) as t:
        router.get("/t").mock(side_effect=side_effect)
        t.request("GET", "https://osf.test/t", {}, b"")
    assert seen == [{"connect": 3.5, "read": 3.5, "write": 3.5, "pool": 3.5}]


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


def test_a_bounded_client_makes_its_socket_transport_on_first_use() -> None:
    """httpx's transport loads the certificates when made (~30 ms): a client that sends
    nothing (the suite's fallback for an http:// target) must not pay for it."""
    from pytest_osfoundry.client import BoundedClient
    from pytest_osfoundry.client._bounded_http import _OnFirstUse
    from pytest_osfoundry.server import LoopbackServer

    client = BoundedClient(deadline=5.0)
    lazy = client._transport
    assert isinstance(lazy, _OnFirstUse) and lazy._made is None
    with LoopbackServer(lambda _r: Response(204)) as server:
        assert client.get(server.origin + "/").status_code == 204
    assert lazy._made is not None  # made by the first request, then kept
    client.close()
    assert lazy._made is None
    BoundedClient(deadline=5.0).close()  # closing one never used makes nothing
