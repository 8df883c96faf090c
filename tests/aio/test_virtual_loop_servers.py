"""The virtual loop holds time while an in-process server holds a request (issue 37).

A :class:`~pytest_osfoundry.server.LoopbackServer` answers on its own threads; the
loop waits for it (``idle()``) before every jump, so a read timeout never fires because
a worker was slow, and an answer written is read before time moves on."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from pytest_osfoundry import aio
from pytest_osfoundry.clock import DEFAULT_START, VirtualClock
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer

GET = b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def slow(seconds: float, gate: threading.Event | None = None):
    """A handler that takes ``seconds`` of wall time (or waits for ``gate``) to answer."""

    def answer(request: Request) -> Response:
        if gate is not None:
            gate.wait(10)
        time.sleep(seconds)
        return Response(200, {"content-type": "text/plain"}, b"late")

    return answer


async def fetch(server: LoopbackServer, timeout: float) -> bytes:
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        writer.write(GET)
        return await asyncio.wait_for(reader.readuntil(b"late"), timeout)
    finally:
        writer.close()


def test_a_read_timeout_waits_for_a_slow_in_process_server_in_virtual_time() -> None:
    clock = VirtualClock()

    async def main() -> tuple[bytes, float]:
        ticks = asyncio.create_task(asyncio.sleep(3600))  # a timer of the loop's own
        try:
            return await fetch(server, timeout=1), clock.now()
        finally:
            ticks.cancel()

    with LoopbackServer(slow(0.05)) as server:
        body, now = aio.run(main(), clock)
    assert body.endswith(b"late")
    assert now == DEFAULT_START  # the 50 ms of wall time in the worker took no virtual time


def test_an_answer_in_the_socket_is_read_before_a_clock_event_runs() -> None:
    clock = VirtualClock()
    seen: list[str] = []
    clock.call_later(5, lambda: seen.append("clock event"))

    async def main() -> None:
        await fetch(server, timeout=60)
        seen.append("answer read")

    with LoopbackServer(slow(0.02)) as server:
        aio.run(main(), clock)
    assert seen == ["answer read"]  # the clock never reached 5: nothing had to wait


def test_a_server_holding_a_request_past_stall_timeout_fails_the_loop() -> None:
    clock = VirtualClock()
    gate = threading.Event()
    with LoopbackServer(slow(0, gate)) as server:
        with pytest.raises(aio.VirtualLoopStalled, match=r"in-process server .* held a request"):
            aio.run(fetch(server, timeout=60), clock, stall_timeout=0.2)
        gate.set()
    assert clock.now() == DEFAULT_START


def test_a_closed_server_holds_nothing() -> None:
    clock = VirtualClock()
    LoopbackServer(slow(0)).close()

    async def main() -> float:
        await asyncio.sleep(30)
        return clock.now()

    assert aio.run(main(), clock, stall_timeout=0.2) == DEFAULT_START + 30


def test_only_something_with_idle_registers() -> None:
    with pytest.raises(TypeError, match="idle"):
        aio.serve_in_process(object())  # type: ignore[arg-type]
