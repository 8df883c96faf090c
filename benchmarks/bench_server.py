"""How fast the reference server answers ``get_graph_run``, through each door.

    python benchmarks/bench_server.py            # a small table
    python benchmarks/bench_server.py --json     # the same figures as JSON

Measures calls per second for one ``tools/call get_graph_run`` (a queued run of the
caller's own) (a) in-process: the app handler called with a ``Request`` (and through
``DirectTransport`` when the client package provides it), (b) through an httpx client
mounted with respx, (c) over loopback HTTP with one keep-alive httpx client; and (d)
what the server's logic adds to a loopback round trip, against an empty handler (a
fixed small JSON ``Response``) served by the same ``LoopbackServer`` stack:
``(server rt - empty rt) / empty rt``.

Aims: direct >= 20,000 calls/s; the logic adds under 30 % to a loopback round trip.
Each rate is the best of ``--rounds`` rounds of about ``--seconds`` each; the overhead
is the median over rounds that time the two loopback servers back to back.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.http import Request, Response
from pytest_osfoundry.server import LoopbackServer, ReferenceServer, mount

GS = "gs_" + "b" * 32
AIM_DIRECT = 20_000.0
AIM_OVERHEAD = 0.30
EMPTY_BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'


def _setup() -> tuple[ReferenceServer, dict[str, str], bytes]:
    server = ReferenceServer(VirtualClock(), seed=1)
    info = server.provision()
    server.state.share(info.project_id, [{"graph_session_id": GS, "slug": "bench"}])
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {info.agent_token}",
    }
    queue = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "run_graph_session",
            "arguments": {"graph_session_id": GS, "idempotency_key": "bench-key-1"},
        },
    }
    reply = server(
        Request("POST", "/mcp", {**headers, "host": "osf.test"}, json.dumps(queue).encode())
    )
    command_id = reply.json()["result"]["structuredContent"]["command_id"]
    get = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "get_graph_run", "arguments": {"command_id": command_id}},
    }
    return server, headers, json.dumps(get).encode()


def _check(status: int, body: bytes) -> None:
    if status != 200:
        raise SystemExit(f"benchmark call failed: HTTP {status}: {body[:200]!r}")
    payload = json.loads(body)
    result = payload.get("result", {})
    if "structuredContent" in result and result["structuredContent"].get("status") != "queued":
        raise SystemExit(f"unexpected answer: {payload}")


def _rate(call: Callable[[], None], seconds: float, rounds: int) -> float:
    """Best calls per second over ``rounds`` rounds of about ``seconds`` each."""
    for _ in range(50):  # warm up (connections, caches)
        call()
    best = 0.0
    for _ in range(rounds):
        n = 0
        batch = 50
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(batch):
                call()
            n += batch
            now = time.perf_counter()
            if now >= deadline:
                break
        best = max(best, n / (now - start))
    return best


def run(seconds: float, rounds: int) -> dict[str, Any]:
    server, headers, body = _setup()
    figures: dict[str, Any] = {}

    # (a) in-process: the app handler itself
    request = Request("POST", "/mcp", {**headers, "host": "osf.test"}, body)
    first = server(request)
    _check(first.status, first.body)
    figures["direct_handler"] = _rate(lambda: server(request), seconds, rounds)

    try:
        from pytest_osfoundry.client._transport import DirectTransport
    except ImportError:
        figures["direct_transport"] = None
    else:
        transport = DirectTransport(server)
        url = "https://osf.test/mcp"
        reply = transport.request("POST", url, {**headers, "Host": "osf.test"}, body)
        _check(reply.status, reply.body)
        figures["direct_transport"] = _rate(
            lambda: transport.request("POST", url, headers, body), seconds, rounds
        )

    # (b) respx-mounted httpx
    with mount(server, "https://osf.test"), httpx.Client() as client:
        reply_b = client.post("https://osf.test/mcp", content=body, headers=headers)
        _check(reply_b.status_code, reply_b.content)
        figures["respx_httpx"] = _rate(
            lambda: client.post("https://osf.test/mcp", content=body, headers=headers),
            seconds,
            rounds,
        )

    # (c) loopback HTTP, one keep-alive client; (d) the same stack with an empty handler
    def empty(_: Request) -> Response:
        return Response(200, {"content-type": "application/json"}, EMPTY_BODY)

    with (
        LoopbackServer(server) as loop,
        LoopbackServer(empty) as empty_loop,
        httpx.Client() as client,
    ):
        url = loop.origin + "/mcp"
        empty_url = empty_loop.origin + "/mcp"
        reply_c = client.post(url, content=body, headers=headers)
        _check(reply_c.status_code, reply_c.content)
        # Interleave the two, alternating which goes first, and pair them per round:
        # drift in the machine's load then hits both sides of each ratio alike.
        loop_rates, empty_rates, ratios = [], [], []
        for i in range(max(rounds, 3)):

            def post_server() -> None:
                client.post(url, content=body, headers=headers)

            def post_empty() -> None:
                client.post(empty_url, content=body, headers=headers)

            if i % 2:
                empty_rate = _rate(post_empty, seconds / 2, 1)
                loop_rate = _rate(post_server, seconds / 2, 1)
            else:
                loop_rate = _rate(post_server, seconds / 2, 1)
                empty_rate = _rate(post_empty, seconds / 2, 1)
            loop_rates.append(loop_rate)
            empty_rates.append(empty_rate)
            ratios.append((1.0 / loop_rate - 1.0 / empty_rate) * empty_rate)
        figures["loopback_httpx"] = max(loop_rates)
        figures["loopback_empty_handler"] = max(empty_rates)
    figures["logic_overhead"] = statistics.median(ratios)
    figures["logic_overhead_rounds"] = ratios
    figures["aims"] = {
        "direct_calls_per_s_min": AIM_DIRECT,
        "logic_overhead_max": AIM_OVERHEAD,
        "direct_met": figures["direct_handler"] >= AIM_DIRECT,
        "overhead_met": figures["logic_overhead"] < AIM_OVERHEAD,
    }
    figures["python"] = sys.version.split()[0]
    return figures


def _table(figures: dict[str, Any]) -> str:
    rows = [
        ("(a) direct: app handler", figures["direct_handler"]),
        ("(a) direct: DirectTransport", figures["direct_transport"]),
        ("(b) respx-mounted httpx", figures["respx_httpx"]),
        ("(c) loopback HTTP, keep-alive httpx", figures["loopback_httpx"]),
        ("(d) loopback, empty handler", figures["loopback_empty_handler"]),
    ]
    lines = [f"{'get_graph_run through':<38} {'calls/s':>10} {'us/call':>9}"]
    for name, rate in rows:
        if rate is None:
            lines.append(f"{name:<38} {'n/a':>10} {'':>9}")
        else:
            lines.append(f"{name:<38} {rate:>10,.0f} {1e6 / rate:>9.1f}")
    aims = figures["aims"]
    lines.append("")
    lines.append(
        f"server logic over a loopback round trip: {figures['logic_overhead']:+.1%} "
        f"(aim < {AIM_OVERHEAD:.0%}: {'met' if aims['overhead_met'] else 'MISSED'})"
    )
    lines.append(
        f"direct calls/s aim >= {AIM_DIRECT:,.0f}: {'met' if aims['direct_met'] else 'MISSED'}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per figure (best kept)")
    args = parser.parse_args(argv)
    figures = run(args.seconds, args.rounds)
    print(json.dumps(figures, indent=2) if args.json else _table(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
