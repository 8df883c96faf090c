"""A check that got no answer at the connection level while other checks ran says that
concurrency may be the cause (issue 23, item 5), and so does the run's summary.

The server under test sits behind :class:`CrowdedProxy`, a TCP relay that resets
(RST) every connection opened while ``limit`` others are open: what a server with a
tiny listen backlog or worker pool does under the suite's 16 concurrent checks.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator

import httpx
import pytest

from pytest_osfoundry.client import ConnectionLost, HttpTransport, ReplyLost
from pytest_osfoundry.conformance.scheduling._in_flight import (
    MARK,
    InFlight,
    amend,
    connection_failure,
    hint,
    summary_line,
)
from pytest_osfoundry.server import LoopbackServer, Provisioned, ReferenceServer
from tests.conformance.osf_conformance_kit import SuiteRun


def _reset(sock: socket.socket) -> None:
    """Close ``sock`` with a TCP reset (no FIN: linger 0)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class CrowdedProxy:
    """Relays 127.0.0.1 connections to ``upstream``; resets any opened while ``limit``
    relayed connections are open."""

    def __init__(self, upstream: int, limit: int) -> None:
        self.upstream = upstream
        self.limit = limit
        self.open = 0
        self.resets = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.port = int(self._listener.getsockname()[1])
        self._closed = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                crowded = self.open >= self.limit
                if crowded:
                    self.resets += 1
                else:
                    self.open += 1
            if crowded:
                _reset(client)
                continue
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            client.close()
            with self._lock:
                self.open -= 1
            return
        done = threading.Event()

        def pump(source: socket.socket, sink: socket.socket) -> None:
            try:
                while chunk := source.recv(65536):
                    sink.sendall(chunk)
            except OSError:
                pass
            done.set()

        threading.Thread(target=pump, args=(server, client), daemon=True).start()
        pump(client, server)
        done.wait(5)
        for sock in (client, server):
            sock.close()
        with self._lock:
            self.open -= 1

    def close(self) -> None:
        """Stop accepting (relayed connections end with their peers)."""
        self._listener.close()


@pytest.fixture
def crowded() -> Iterator[tuple[CrowdedProxy, Provisioned]]:
    server = ReferenceServer()
    made = server.provision()
    loop = LoopbackServer(server)
    proxy = CrowdedProxy(loop.port, limit=6)  # above what the preflight opens at once
    try:
        yield proxy, made
    finally:
        proxy.close()
        loop.close()


def _suite_args(proxy: CrowdedProxy, made: Provisioned) -> list[str]:
    return [
        f"--osf-target=http://127.0.0.1:{proxy.port}/mcp",
        f"--osf-agent-token={made.agent_token}",
        f"--osf-other-agent-token={made.other_agent_token}",
        f"--osf-desktop-token={made.desktop_token}",
        f"--osf-project-id={made.project_id}",
        "-k",
        "queue or cancel or access",
    ]


def test_connection_failures_under_concurrency_say_so(
    run_suite: Callable[..., SuiteRun], crowded: tuple[CrowdedProxy, Provisioned]
) -> None:
    proxy, made = crowded
    run = run_suite(*_suite_args(proxy, made), "--osf-concurrency=16")
    assert proxy.resets > 0, "the proxy never had to reset: the test proves nothing"
    hinted = {c["id"]: c["message"] for c in run.report["checks"] if MARK in c["message"]}
    assert hinted, run.text[-4000:]
    for message in hinted.values():
        assert "no reply from " in message and message.index("no reply") < message.index(MARK)
        assert "(--osf-concurrency 16)" in message
        assert "lower --osf-concurrency" in message
    assert all(run.outcomes[i] == "failed" for i in hinted), "nothing is retried"
    line = run.report["concurrency_hint"]
    assert line is not None and "(--osf-concurrency 16)" in line
    assert all(i in line for i in hinted)
    assert line in " ".join(run.result.stdout.str().split())


def test_a_serial_run_gets_no_hint(
    run_suite: Callable[..., SuiteRun], crowded: tuple[CrowdedProxy, Provisioned]
) -> None:
    proxy, made = crowded
    run = run_suite(*_suite_args(proxy, made), "--osf-concurrency=1")
    assert run.report["checks"], run.text[-3000:]
    assert not [c for c in run.report["checks"] if MARK in c["message"]]
    assert run.report["concurrency_hint"] is None
    assert MARK not in run.text


# ---------------------------------------------------------------------- the transport
def _serve_once(answer: Callable[[socket.socket], None]) -> Iterator[int]:
    listener = socket.create_server(("127.0.0.1", 0))

    def one() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        answer(conn)

    thread = threading.Thread(target=one, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    thread.join(5)
    listener.close()


def _get(port: int) -> None:
    with HttpTransport(timeout=5) as transport:
        transport.request("GET", f"http://127.0.0.1:{port}/x", {}, b"")


def test_a_refused_connection_is_connection_lost() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectionLost, match="ConnectError"):
        _get(port)


def test_a_reset_before_the_headers_is_connection_lost() -> None:
    for port in _serve_once(_reset):
        with pytest.raises(ConnectionLost):
            _get(port)


def test_a_reset_in_the_body_is_not_connection_lost() -> None:
    def half(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
        _reset(conn)

    for port in _serve_once(half):
        with pytest.raises(ReplyLost) as caught:
            _get(port)
        assert not isinstance(caught.value, ConnectionLost)


# ---------------------------------------------------------------------- the words
def _lost() -> ConnectionLost:
    try:
        raise ConnectionLost("no reply from POST http://127.0.0.1:1/mcp: ConnectError (failed)")
    except ConnectionLost as err:
        return err


def test_amend_adds_the_hint_once_keeping_the_type() -> None:
    err = _lost()
    assert amend(err, 5, 16)
    assert isinstance(err, ConnectionLost)
    assert str(err) == err.message
    assert str(err).startswith("no reply from POST http://127.0.0.1:1/mcp: ConnectError (failed) (")
    assert hint(5, 16) in str(err) and "5 other checks were in flight" in str(err)
    assert not amend(err, 5, 16) and str(err).count(MARK) == 1


def test_amend_leaves_other_failures_and_lone_checks_alone() -> None:
    assert not amend(_lost(), 0, 16), "alone, concurrency cannot be the cause"
    assert not amend(ReplyLost("no answer within 10 s"), 3, 16)
    assert not amend(AssertionError("wrong status"), 3, 16)
    assert not amend(None, 3, 16)


def test_a_failure_raised_from_a_lost_connection_is_found() -> None:
    lost = _lost()
    try:
        raise AssertionError("the call failed") from lost
    except AssertionError as outer:
        assert connection_failure(outer) is lost
        assert amend(outer, 1, 4)
        assert "1 other check was in flight (--osf-concurrency 4)" in str(outer)
    assert connection_failure(httpx.ConnectError("x")) is None


def test_the_summary_line_names_the_hinted_checks_only() -> None:
    messages = [("A-1", f"ConnectionLost: x ({hint(2, 8)})"), ("B-2", "wrong status")]
    line = summary_line(messages, 8)
    assert line is not None and line.startswith("1 check got no answer")
    assert "(A-1)" in line and "B-2" not in line and "(--osf-concurrency 8)" in line
    assert summary_line(messages[1:], 8) is None


def test_in_flight_counts_across_threads() -> None:
    flight = InFlight()
    inside = threading.Barrier(3)
    leave = threading.Event()

    def work() -> None:
        with flight.running():
            inside.wait(5)
            leave.wait(5)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait(5)
    assert flight.count == 2
    leave.set()
    for t in threads:
        t.join(5)
    assert flight.count == 0
