"""The suite's HTTP client path against what it replaced.

    python benchmarks/bench_http_paths.py [--requests 2000] [--rounds 8] [--json]

Paired in this one invocation (A B A B ..., the median of the per-round ratios):
one keep-alive round trip of a JSON-RPC ``ping`` through
:class:`~pytest_osfoundry.client.SocketTransport` (the suite's, for ``http://``)
against :class:`~pytest_osfoundry.client.HttpxTransport` (httpx, what the suite used
before, and still uses for ``https://``), both to the same loopback server; and, for
scale, the same request as raw bytes on one socket (no client library in the way).

The server answers with a fixed small JSON body, so the figures are the HTTP path's
alone, not the reference server's logic. Microseconds per round trip, this machine.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from pytest_osfoundry.client import HttpxTransport, SocketTransport
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer

BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "Authorization": "Bearer bench-token-not-a-secret",
    "Mcp-Protocol-Version": "2025-11-25",
}


def _answer(_request: Request) -> Response:
    return Response(
        200, {"content-type": "application/json"}, b'{"jsonrpc":"2.0","id":1,"result":{}}'
    )


def _raw_request() -> bytes:
    """The request as the suite's client writes it."""
    fields = {
        "Host": "127.0.0.1",
        "Content-Length": str(len(BODY)),
        "Accept-Encoding": "gzip, deflate",
        "Connection": "keep-alive",
        "User-Agent": "pytest-osfoundry/bench",
        **HEADERS,
    }
    head = "POST /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    return (head + "\r\n").encode() + BODY


def _per_request(run: Callable[[], None], requests: int) -> float:
    start = time.perf_counter()
    for _ in range(requests):
        run()
    return (time.perf_counter() - start) / requests * 1e6


def measure(requests: int, rounds: int) -> dict[str, Any]:
    """Microseconds per round trip of each path, paired round by round; medians."""
    figures: dict[str, list[float]] = {k: [] for k in ("socket", "httpx", "raw")}
    with LoopbackServer(_answer) as server:
        url = server.origin + "/mcp"
        mine = SocketTransport(timeout=10.0, max_bytes=1024 * 1024)
        theirs = HttpxTransport(timeout=10.0)
        raw = _raw_request()
        sock = socket.create_connection((server.host, server.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def bytes_only() -> None:
            sock.sendall(raw)
            sock.recv(65536)

        try:
            for run in (mine, theirs):  # warm both: connections open, code loaded
                run.request("POST", url, HEADERS, BODY)
            for _ in range(rounds):
                figures["socket"].append(
                    _per_request(lambda: mine.request("POST", url, HEADERS, BODY), requests)
                )
                figures["httpx"].append(
                    _per_request(lambda: theirs.request("POST", url, HEADERS, BODY), requests)
                )
                figures["raw"].append(_per_request(bytes_only, requests))
        finally:
            sock.close()
            mine.close()
            theirs.close()

    def ratio(a: str, b: str) -> float:
        return round(
            statistics.median(x / y for x, y in zip(figures[a], figures[b], strict=True)), 2
        )

    return {
        "requests": requests,
        "rounds": rounds,
        "us_per_round_trip": {k: round(statistics.median(v)) for k, v in figures.items()},
        "httpx_over_socket": ratio("httpx", "socket"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="round trips a round")
    parser.add_argument("--rounds", type=int, default=8, help="paired rounds")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.requests < 1 or args.rounds < 1:
        parser.error("--requests and --rounds must be at least 1")
    figures = measure(args.requests, args.rounds)
    if args.json:
        print(json.dumps(figures))
        return 0
    us = figures["us_per_round_trip"]
    print(f"{args.rounds} paired rounds of {args.requests} round trips (medians)")
    print(
        f"  client: SocketTransport {us['socket']} us, HttpxTransport {us['httpx']} us "
        f"(httpx / socket = {figures['httpx_over_socket']}x)"
    )
    print(f"  raw bytes on one socket (no client): {us['raw']} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
