"""The kit as a client of hostile servers: every exchange ends in bounded time and memory.

Each test talks to a :class:`~tests.hostile.osf_hostile_kit.HostileServer` over a
real loopback socket with a 2 s deadline and a 1 MiB size cap, and asserts that the
exchange ends within 2 s plus a generous margin (these detect hangs; they are not
benchmarks) with a peak of traced memory under 8 MiB, and that the error says what
the server did. Without the bounds, ``huge`` grows without limit and the others
never end. They run through :class:`~pytest_osfoundry.client.HttpTransport`, the one
transport the kit and the conformance suite send through over the network.
"""

from __future__ import annotations

import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pytest_osfoundry.client import (
    DeadlineExceeded,
    HttpTransport,
    McpClient,
    RelayClient,
    ResponseTooLarge,
    Transport,
)
from pytest_osfoundry.client._http_transport import format_size
from tests.hostile.osf_hostile_kit import HostileServer

DEADLINE = 2.0
MARGIN = 4.0  # a hang detector on a busy 2-core machine, not a benchmark
CAP = 1024 * 1024
MEMORY = 8 * 1024 * 1024
PING = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture
def hostile() -> Iterator[Callable[..., HostileServer]]:
    made: list[HostileServer] = []

    def start(mode: str, **kwargs: Any) -> HostileServer:
        server = HostileServer(mode, **kwargs)
        made.append(server)
        return server

    yield start
    for server in made:
        server.close()


def _bounded(call: Callable[[], Any]) -> tuple[Any, BaseException | None, float, int]:
    """Run ``call``; its result or error, seconds taken and traced memory peak."""
    tracemalloc.start()
    start = time.monotonic()
    result: Any = None
    error: BaseException | None = None
    try:
        result = call()
    except Exception as exc:  # the error is the outcome under test
        error = exc
    elapsed = time.monotonic() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, error, elapsed, peak


Make = Callable[[], Transport]


@pytest.fixture
def make() -> Iterator[Make]:
    """Builds the transport under test, bounded by ``DEADLINE`` and ``CAP``."""
    made: list[HttpTransport] = []

    def build() -> Transport:
        made.append(HttpTransport(timeout=DEADLINE, max_bytes=CAP))
        return made[-1]

    yield build
    for transport in made:
        transport.close()


def _post(server: HostileServer, transport: Transport) -> Callable[[], Any]:
    return lambda: transport.request("POST", server.url, HEADERS, PING)


@pytest.mark.parametrize(
    ("mode", "error", "message"),
    [
        ("huge", ResponseTooLarge, "the response exceeded 1 MiB (POST http://127.0.0.1:"),
        ("huge-declared", ResponseTooLarge, "the response exceeded 1 MiB"),
        ("endless-stream", DeadlineExceeded, "the event stream stayed open without an answer"),
        ("drip", DeadlineExceeded, "no answer within 2 s"),
        ("drip-body", DeadlineExceeded, "the response body did not arrive within 2 s"),
        ("silence", DeadlineExceeded, "no answer within 2 s"),
    ],
)
def test_hostile_reply_fails_within_2s_and_8mib(
    hostile: Callable[..., HostileServer],
    make: Make,
    mode: str,
    error: type[Exception],
    message: str,
) -> None:
    server = hostile(mode)
    _, err, elapsed, peak = _bounded(_post(server, make()))
    assert isinstance(err, error), err
    assert str(err).startswith(message)
    assert elapsed < DEADLINE + MARGIN
    assert peak < MEMORY


def test_answer_then_open_stream_is_read_up_to_the_answer(
    hostile: Callable[..., HostileServer], make: Make
) -> None:
    server = hostile("answer-open")
    reply, err, elapsed, peak = _bounded(_post(server, make()))
    assert err is None
    assert reply.status == 200 and b'"id": 7' in reply.body
    assert elapsed < DEADLINE  # it did not wait for the deadline
    assert peak < MEMORY


@pytest.mark.parametrize(
    ("method", "body"),
    [("GET", b""), ("POST", b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')],
)
def test_an_open_stream_answering_no_request_ends_at_its_headers(
    hostile: Callable[..., HostileServer], make: Make, method: str, body: bytes
) -> None:
    # A GET stream (which a legacy-era server may open) or a stream answering a
    # notification carries no answer of ours: nothing to wait for.
    server = hostile("endless-stream")
    transport = make()
    reply, err, elapsed, peak = _bounded(
        lambda: transport.request(method, server.url, {"Accept": "text/event-stream"}, body)
    )
    assert err is None, err
    assert reply.status == 200 and reply.headers["content-type"] == "text/event-stream"
    assert reply.body == b""
    assert elapsed < DEADLINE  # it did not wait for the deadline
    assert peak < MEMORY


def test_mcp_client_gets_its_answer_from_an_open_stream(
    hostile: Callable[..., HostileServer], make: Make
) -> None:
    server = hostile("answer-open")
    client = McpClient(make(), server.url, auto_initialize=False)
    start = time.monotonic()
    assert client.rpc("ping") == {}
    assert time.monotonic() - start < DEADLINE


def test_answer_then_silence_fails_the_second_request_only(
    hostile: Callable[..., HostileServer], make: Make
) -> None:
    server = hostile("answer-then-silence")
    post = _post(server, make())
    assert post().status == 200
    _, err, elapsed, _ = _bounded(post)
    assert isinstance(err, DeadlineExceeded) and "no answer within 2 s" in str(err)
    assert elapsed < DEADLINE + MARGIN


def test_a_redirect_loop_is_a_reply(hostile: Callable[..., HostileServer], make: Make) -> None:
    server = hostile("redirect")
    assert _post(server, make())().status == 302  # not followed: the caller judges it


def test_relay_client_is_bounded_too(hostile: Callable[..., HostileServer], make: Make) -> None:
    server = hostile("huge")
    relay = RelayClient(make(), server.url, "t0ken-x")
    _, err, elapsed, peak = _bounded(lambda: relay.sync("p", []))
    assert isinstance(err, ResponseTooLarge)
    assert elapsed < DEADLINE + MARGIN and peak < MEMORY


def test_fake_relay_cli_gives_up_on_a_huge_reply(hostile: Callable[..., HostileServer]) -> None:
    server = hostile("huge")
    start = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_osfoundry",
            "relay",
            f"--relay-url=http://127.0.0.1:{server.port}",
            "--desktop-token=desk-secret-token",
            "--project-id=p",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - start < 30  # 16 MiB at loopback speed, or 10 s at worst
    assert done.returncode == 2
    assert "the response exceeded 16 MiB" in done.stderr
    assert "desk-secret-token" not in done.stderr + done.stdout


@pytest.mark.parametrize("size", [1, 1000, 1024, 5 * 1024 * 1024])
def test_format_size(size: int) -> None:
    expected = {1: "1 byte", 1000: "1000 bytes", 1024: "1 KiB", 5 * 1024 * 1024: "5 MiB"}
    assert format_size(size) == expected[size]
