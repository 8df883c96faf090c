"""Added latency: ``Delayed`` answers like the server, later, without blocking others."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx
import pytest

from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import Delayed, LoopbackServer, ReferenceServer


def _echo(request: Request) -> Response:
    return Response(200, {"content-type": "text/plain"}, request.path.encode())


def test_delayed_waits_then_answers_as_the_inner_handler() -> None:
    waits: list[float] = []
    handler = Delayed(_echo, 0.25, sleep=waits.append)
    reply = handler(Request("GET", "/x", {}, b""))
    assert (reply.status, reply.body) == (200, b"/x")
    assert waits == [0.25]


def test_delayed_passes_the_server_through() -> None:
    server = ReferenceServer()
    delayed = Delayed(server, 0.0)
    made = delayed.provision()
    assert made is server.provisioned
    assert delayed.mcp_path == server.mcp_path


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), 61, "1", True])
def test_delayed_refuses_bad_latency(bad: object) -> None:
    with pytest.raises(ValueError, match="latency"):
        Delayed(_echo, bad)  # type: ignore[arg-type]


def _waiting_at_once(count: int, workers: int = 16) -> tuple[list[int], list[float], bool]:
    """``count`` requests at once to a delayed loopback server with ``workers`` threads,
    each answer's wait returning only once ``count`` are waiting at the same time (if one
    held up the others, the barrier would break): the statuses, the waits, and whether
    the barrier broke."""
    barrier = threading.Barrier(count)
    waited: list[float] = []

    def wait(seconds: float) -> None:
        waited.append(seconds)
        barrier.wait(timeout=20)

    answers: list[int] = []
    with LoopbackServer(Delayed(_echo, 0.03, sleep=wait), workers=workers) as loop:

        def get() -> None:
            answers.append(httpx.get(loop.origin + "/a", timeout=30).status_code)

        threads = [threading.Thread(target=get) for _ in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return answers, waited, barrier.broken


def test_loopback_delay_does_not_block_other_connections() -> None:
    answers, waited, broken = _waiting_at_once(3)
    assert answers == [200] * 3
    assert waited == [0.03] * 3
    assert not broken


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", "expected a number of seconds from 0 to 60, got 'abc'"),
        ("-1", "from 0 to 60, got '-1'"),
        ("nan", "from 0 to 60, got 'nan'"),
    ],
)
def test_serve_refuses_a_bad_latency(value: str, message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_osfoundry", "serve", "--latency", value],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("value", ["0", "1025", "many", "2.5"])
def test_serve_refuses_a_bad_worker_count(value: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_osfoundry", "serve", "--workers", value],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert f"expected a whole number from 1 to 1024, got '{value}'" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_workers_bound_the_delayed_answers_in_flight() -> None:
    """``--workers N`` reaches the loopback server: N delayed answers wait at once."""
    from pytest_osfoundry._cli import build_parser

    args = build_parser().parse_args(["serve", "--latency", "0.03", "--workers", "24"])
    assert (args.workers, args.latency) == (24, 0.03)
    assert build_parser().parse_args(["serve"]).workers == 16
    answers, waited, broken = _waiting_at_once(24, workers=args.workers)
    assert answers == [200] * 24 and len(waited) == 24
    assert not broken


# -- the door's delay: a request waits out its delay holding no worker (issue 42 item 8)
def _send_whole(origin: str, path: str) -> socket.socket:
    """A GET sent whole on its own connection; the caller reads or abandons it."""
    url = urlsplit(origin)
    sock = socket.create_connection((str(url.hostname), int(url.port or 80)), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return sock


def test_a_delayed_request_holds_no_worker() -> None:
    with LoopbackServer(_echo, workers=1,
                        delay=lambda r: 600.0 if r.path == "/slow" else 0.0) as loop:
        held = [_send_whole(loop.origin, "/slow") for _ in range(3)]
        reply = httpx.get(loop.origin + "/fast", timeout=10)  # the one worker is free
        assert (reply.status_code, reply.text) == (200, "/fast")
        assert not loop.idle()  # the held requests are the server's
        for sock in held:
            sock.close()


def test_a_delayed_request_is_answered_once_its_delay_is_over() -> None:
    with LoopbackServer(_echo, delay=lambda r: 0.2) as loop:
        assert httpx.get(loop.origin + "/later", timeout=10).text == "/later"


def test_close_ends_the_held_requests_at_once() -> None:
    loop = LoopbackServer(_echo, delay=lambda r: 600.0)
    sock = _send_whole(loop.origin, "/held")
    try:
        loop.close()
        sock.settimeout(10)
        assert sock.recv(100) == b""  # closed, unanswered, long before its delay
    finally:
        sock.close()


@pytest.mark.parametrize(
    ("delay", "lines"),
    [(lambda r: 1 / 0, 1), (lambda r: "soon", 1), (lambda r: float("nan"), 0),
     (lambda r: -5.0, 0)],
)
def test_a_delay_that_fails_is_no_delay_and_at_most_one_line(
    delay: Callable[[Request], float], lines: int, caplog: pytest.LogCaptureFixture
) -> None:
    with LoopbackServer(_echo, delay=delay) as loop:
        assert httpx.get(loop.origin + "/x", timeout=10).status_code == 200
    said = [r.getMessage() for r in caplog.records if "delay" in r.getMessage()]
    assert len(said) == lines and all("/x" not in line for line in said)


def test_delay_must_be_callable() -> None:
    with pytest.raises(TypeError, match="delay must be a Request -> seconds callable"):
        LoopbackServer(_echo, delay=5)  # type: ignore[arg-type]
