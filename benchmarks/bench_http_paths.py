"""The kit's one HTTP client path (the standard library's http.client) against httpx.

    python benchmarks/bench_http_paths.py [--requests 2000] [--rounds 8] [--json]
    python benchmarks/bench_http_paths.py --suite [--pairs 5] [--json]

Round trips (the default): a keep-alive JSON-RPC ``ping`` to the reference server on
the loopback door, paired in this one invocation (A B C A B C ..., medians of the
rounds) through :class:`~pytest_osfoundry.client.HttpTransport` (http.client, every
exchange bounded), through a bare ``httpx.Client`` (no deadline, no size cap, no
event-stream watch: the least any httpx path could cost), and, for scale, as raw
bytes on one socket (no client at all). Microseconds per round trip, this machine.

``--suite``: the whole conformance suite against ``--osf-target=embedded`` (a fresh
``python -m pytest`` each run), paired A B A B ...: as it runs, against the same with
a pytest plugin of this benchmark sending every request through httpx instead (an
httpx client streaming each reply under the same size cap and event-stream watch,
its deadline httpx's per-read time-out). The median of the pairs' ratios (httpx /
http.client); above 1, httpx is slower.

What the kit keeps follows from these figures: docs/choices.md, "One HTTP client".
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_latency import run_suite

from pytest_osfoundry.client import HttpTransport
from pytest_osfoundry.conformance.suite._options import Settings
from pytest_osfoundry.server import LoopbackServer, ReferenceServer

BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()

_HTTPX_PLUGIN = '''"""The suite sending every request through httpx (bench_http_paths.py)."""

import httpx

from pytest_osfoundry.client import ReplyLost
from pytest_osfoundry.client._jsonrpc import AnswerWatch, content_type, request_id_of
from pytest_osfoundry.conformance.server import _target
from pytest_osfoundry.http import Response


class HttpxTransport:
    def __init__(self, *, timeout, max_bytes, keep):
        self.timeout, self.max_bytes, self.keep = timeout, max_bytes, keep
        limits = httpx.Limits(max_connections=max(100, keep), max_keepalive_connections=keep)
        self.client = httpx.Client(timeout=timeout, limits=limits)

    def request(self, method, url, headers, body):
        try:
            with self.client.stream(method, url, headers=dict(headers), content=body) as reply:
                parts, size, watch = [], 0, None
                if content_type(reply.headers) == "text/event-stream":
                    rid = request_id_of(body)
                    if rid is None:
                        return Response(reply.status_code, dict(reply.headers.items()), b"")
                    watch = AnswerWatch(rid)
                for chunk in reply.iter_bytes():
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise ReplyLost("the response exceeded the cap", url=url)
                    parts.append(chunk)
                    if watch is not None and watch.feed(chunk):
                        break
                return Response(reply.status_code, dict(reply.headers.items()), b"".join(parts))
        except httpx.TransportError as err:
            raise ReplyLost(f"no reply from {method} {url}: {type(err).__name__}", url=url)

    def close(self):
        self.client.close()


_target.HttpTransport = HttpxTransport
'''


def _per_request(run: Callable[[], object], requests: int) -> float:
    start = time.perf_counter()
    for _ in range(requests):
        run()
    return (time.perf_counter() - start) / requests * 1e6


def measure_round_trips(requests: int, rounds: int) -> dict[str, Any]:
    """Microseconds per round trip of each path, paired round by round; medians."""
    server = ReferenceServer()
    token = server.provision().agent_token
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": "2025-11-25",
    }
    figures: dict[str, list[float]] = {k: [] for k in ("http.client", "httpx", "raw")}
    with LoopbackServer(server) as door:
        url = door.origin + "/mcp"
        ours = HttpTransport(timeout=10.0)
        theirs = httpx.Client(timeout=10.0)
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        raw = (
            f"POST /mcp HTTP/1.1\r\nHost: {door.host}:{door.port}\r\n{head}"
            f"Content-Length: {len(BODY)}\r\n\r\n"
        ).encode() + BODY
        sock = socket.create_connection((door.host, door.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def bytes_only() -> None:
            sock.sendall(raw)
            sock.recv(65536)

        paths: dict[str, Callable[[], object]] = {
            "http.client": lambda: ours.request("POST", url, headers, BODY),
            "httpx": lambda: theirs.post(url, headers=headers, content=BODY).content,
            "raw": bytes_only,
        }
        try:
            for run in paths.values():  # warm each: connection open, code loaded
                run()
            for _ in range(rounds):
                for name, run in paths.items():
                    figures[name].append(_per_request(run, requests))
        finally:
            sock.close()
            ours.close()
            theirs.close()
    return {
        "requests": requests,
        "rounds": rounds,
        "us_per_round_trip": {k: round(statistics.median(v)) for k, v in figures.items()},
        "httpx_over_http_client": _ratio(figures["httpx"], figures["http.client"]),
    }


def measure_suite(pairs: int) -> dict[str, Any]:
    """The suite against ``embedded`` through http.client and through httpx, paired."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("OSF_")}
    concurrency = Settings().osf_concurrency
    with tempfile.TemporaryDirectory(prefix="osf-bench-httpx-") as folder:
        (Path(folder) / "osf_bench_httpx.py").write_text(_HTTPX_PLUGIN, encoding="utf-8")
        paths = [folder, *filter(None, [base.get("PYTHONPATH")])]
        addopts = " ".join(filter(None, [base.get("PYTEST_ADDOPTS"), "-p osf_bench_httpx"]))
        httpx_env = {**base, "PYTHONPATH": os.pathsep.join(paths), "PYTEST_ADDOPTS": addopts}
        run_suite("embedded", concurrency, base)  # warm caches, both ways
        run_suite("embedded", concurrency, httpx_env)
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(pairs):
            ours.append(float(run_suite("embedded", concurrency, base)["wall_s"]))
            theirs.append(float(run_suite("embedded", concurrency, httpx_env)["wall_s"]))
    return {
        "pairs": pairs,
        "http_client_wall_median_s": round(statistics.median(ours), 3),
        "httpx_wall_median_s": round(statistics.median(theirs), 3),
        "httpx_over_http_client": _ratio(theirs, ours),
    }


def _ratio(a: list[float], b: list[float]) -> float:
    """The median of the pairs' ratios ``a / b``."""
    return round(statistics.median(x / y for x, y in zip(a, b, strict=True)), 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="round trips a round")
    parser.add_argument("--rounds", type=int, default=8, help="paired rounds")
    parser.add_argument("--suite", action="store_true", help="the whole suite instead")
    parser.add_argument("--pairs", type=int, default=5, help="paired suite runs (--suite)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if min(args.requests, args.rounds, args.pairs) < 1:
        parser.error("--requests, --rounds and --pairs must be at least 1")
    if args.suite:
        suite = measure_suite(args.pairs)
        if args.json:
            print(json.dumps(suite))
            return 0
        print(
            f"{args.pairs} paired runs of the suite against embedded (medians): http.client "
            f"{suite['http_client_wall_median_s']} s, httpx {suite['httpx_wall_median_s']} s "
            f"(httpx / http.client = {suite['httpx_over_http_client']}x)"
        )
        return 0
    figures = measure_round_trips(args.requests, args.rounds)
    if args.json:
        print(json.dumps(figures))
        return 0
    us = figures["us_per_round_trip"]
    print(f"{args.rounds} paired rounds of {args.requests} round trips (medians)")
    print(
        f"  HttpTransport (http.client) {us['http.client']} us, bare httpx.Client "
        f"{us['httpx']} us (httpx / http.client = {figures['httpx_over_http_client']}x)"
    )
    print(f"  raw bytes on one socket (no client): {us['raw']} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
