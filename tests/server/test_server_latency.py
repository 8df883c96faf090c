"""Added latency: ``Delayed`` answers like the server, later, without blocking others."""

from __future__ import annotations

import subprocess
import sys
import threading

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
