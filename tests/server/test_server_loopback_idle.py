"""``LoopbackServer.idle()``: what the virtual loop waits on (issue 37).

Idle is nothing held for any client: no connection to accept, no byte unread or request
half gathered, no request in a worker, no answer unsent."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

from pytest_osfoundry import aio
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer


def eventually(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def test_idle_follows_a_request_from_arrival_to_the_answer_read() -> None:
    gate = threading.Event()

    def handler(request: Request) -> Response:
        gate.wait(10)
        return Response(200, {}, b"ok")

    with LoopbackServer(handler) as server:
        assert server.idle()
        client = socket.create_connection((server.host, server.port))
        try:
            assert eventually(server.idle)  # accepted, nothing sent: idle
            client.sendall(b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nab")
            time.sleep(0.05)
            assert not server.idle()  # half a body gathered
            client.sendall(b"cd")
            time.sleep(0.05)
            assert not server.idle()  # whole, in a worker
            gate.set()
            assert eventually(server.idle)  # answered: the answer is in the client's socket
            assert client.recv(4096).startswith(b"HTTP/1.1 200")
            assert server.idle()
        finally:
            client.close()


def test_a_running_server_is_registered_until_closed() -> None:
    server = LoopbackServer(lambda r: Response(200))
    assert server in aio._SERVERS
    server.close()
    assert server not in aio._SERVERS
    assert server.idle()  # closed: it holds nothing
