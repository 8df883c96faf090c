"""How fast the reference server answers ``get_graph_run``, through each door; and a
load run against ``osfoundry-fake serve`` that counts what was lost or duplicated.

    python benchmarks/bench_server.py            # a small table
    python benchmarks/bench_server.py --json     # the same figures as JSON
    python benchmarks/bench_server.py --load 30 [--agents 8] [--json]

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

``--load SECONDS`` instead starts ``osfoundry-fake serve`` in a process of its own and
drives it for that long over keep-alive HTTP (the standard library's client, one
connection a thread): ``--agents`` threads, playing the two run-scoped agents in turn,
each queue runs with keys of their own (every fifth call replays a key the thread
used before and must get the same command id back, R5) and read one back with
``get_graph_run``; one desktop thread syncs, starts and completes every command it
is handed, as the relay does. When the agents stop, the desktop drains the queue.
Printed: the calls made (agents' and desktop's), the agents' rate and latency
percentiles, and the counts that must be 0 -- runs lost (queued, never handed out or
never completed), runs duplicated (a replayed key answered with another command id,
or a command handed out again after it started), refusals (any non-200 answer) --
with the server's CPU time a call and its resident memory before and after.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

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


RELAY = "/external-assistants/graph-relays"
LOAD_GS = "gs_" + "c" * 32


class _Http:
    """One keep-alive connection of the standard library's client; JSON in and out."""

    def __init__(self, origin: str) -> None:
        parts = urlsplit(origin)
        self.conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)

    def call(self, path: str, token: str, payload: Any, method: str = "POST") -> Any:
        body = json.dumps(payload).encode() if payload is not None else None
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        }
        self.conn.request(method, path, body, headers)
        reply = self.conn.getresponse()
        data = reply.read()
        if reply.status != 200:
            raise _Refused(f"{method} {path}: HTTP {reply.status}: {data[:200]!r}")
        return json.loads(data)


class _Refused(Exception):
    """An answer other than 200."""


def _rss_kib(pid: int) -> int:
    """The resident memory of process ``pid`` in KiB (0 where /proc is missing)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_s(pid: int) -> float:
    """The CPU seconds process ``pid`` has used (user and system; 0 without /proc)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(seconds: float, agents: int) -> dict[str, Any]:
    """Drive ``osfoundry-fake serve`` for ``seconds``; what was called, how fast, and
    what was lost or duplicated."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_osfoundry", "serve"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        return _drive(info, proc.pid, seconds, agents)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _drive(info: dict[str, Any], pid: int, seconds: float, agents: int) -> dict[str, Any]:
    origin = info["relay_url"]
    mcp_path = urlsplit(info["mcp_url"]).path
    tokens = [info["agent_token"], info["other_agent_token"]]
    desktop = _Http(origin)
    sessions = [
        {
            "graph_session_id": LOAD_GS,
            "name": "load",
            "description": "the load run's Graph",
            "slug": "load",
            "version": 1,
            "status": "active",
        }
    ]
    sync_body = {"project_id": info["project_id"], "sessions": sessions}
    desktop.call(RELAY + "/sync", info["desktop_token"], sync_body)
    rss_before = _rss_kib(pid)
    cpu_before = _cpu_s(pid)
    stop = threading.Event()
    lock = threading.Lock()
    latencies: list[float] = []
    by_key: dict[tuple[int, str], set[str]] = {}
    problems: list[str] = []
    counts = {"agent_calls": 0, "desktop_calls": 0}
    rpc_ids = itertools.count(1)

    def agent(index: int) -> None:
        client = _Http(origin)
        token = tokens[index % 2]
        keys: list[str] = []
        mine: list[float] = []
        seen: dict[tuple[int, str], set[str]] = {}
        calls = 0
        try:
            for n in itertools.count():
                if stop.is_set():
                    break
                replay = n % 5 == 4 and keys
                key = keys[n % len(keys)] if replay else f"load-{index}-{n:08d}"
                message = {
                    "jsonrpc": "2.0",
                    "id": next(rpc_ids),
                    "method": "tools/call",
                    "params": {
                        "name": "run_graph_session",
                        "arguments": {"graph_session_id": LOAD_GS, "idempotency_key": key},
                    },
                }
                start = time.perf_counter()
                ticket = client.call(mcp_path, token, message)["result"]["structuredContent"]
                mine.append(time.perf_counter() - start)
                if not replay:
                    keys.append(key)
                seen.setdefault((index % 2, key), set()).add(ticket["command_id"])
                read = {
                    "jsonrpc": "2.0",
                    "id": next(rpc_ids),
                    "method": "tools/call",
                    "params": {
                        "name": "get_graph_run",
                        "arguments": {"command_id": ticket["command_id"]},
                    },
                }
                start = time.perf_counter()
                client.call(mcp_path, token, read)
                mine.append(time.perf_counter() - start)
                calls += 2
        except (OSError, _Refused, KeyError, ValueError) as err:
            with lock:
                problems.append(f"agent {index}: {type(err).__name__}: {err}")
        with lock:
            latencies.extend(mine)
            counts["agent_calls"] += calls
            for k, ids in seen.items():
                by_key.setdefault(k, set()).update(ids)

    started: set[str] = set()
    completed: set[str] = set()
    handed_again: list[str] = []

    def desk() -> int:
        """Sync once and run every command handed out; the number handed out."""
        commands = desktop.call(RELAY + "/sync", info["desktop_token"], sync_body)["commands"]
        calls = 1
        for command in commands:
            cid = command["command_id"]
            if cid in started:
                handed_again.append(cid)
                continue
            started.add(cid)
            base = f"{RELAY}/commands/{cid}"
            run = desktop.call(base + "/start", info["desktop_token"], {"execution_id": cid})
            if run["status"] == "running":
                done = {"status": "completed", "result": "ok", "execution_id": cid}
                desktop.call(base + "/complete", info["desktop_token"], done)
                completed.add(cid)
                calls += 1
            calls += 1
        counts["desktop_calls"] += calls
        return len(commands)

    def desktop_loop() -> None:
        try:
            while not stop.is_set():
                if not desk():
                    time.sleep(0.01)
        except (OSError, _Refused, KeyError, ValueError) as err:
            with lock:
                problems.append(f"desktop: {type(err).__name__}: {err}")

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(agents)]
    desk_thread = threading.Thread(target=desktop_loop)
    begin = time.perf_counter()
    for thread in [*threads, desk_thread]:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - begin
    desk_thread.join()
    while desk():  # the rest of the queue
        pass
    rss_after = _rss_kib(pid)
    cpu = _cpu_s(pid) - cpu_before
    queued = {cid for ids in by_key.values() for cid in ids}
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 2)

    return {
        "seconds": round(elapsed, 2),
        "agents": agents,
        "agent_calls": counts["agent_calls"],
        "desktop_calls": counts["desktop_calls"],
        "agent_calls_per_s": round(counts["agent_calls"] / elapsed),
        "agent_call_ms": {"p50": pct(0.50), "p99": pct(0.99), "max": pct(1.0)},
        "server_cpu_us_per_call": round(
            cpu * 1e6 / max(1, counts["agent_calls"] + counts["desktop_calls"])
        ),
        "runs_queued": len(queued),
        "lost": len(queued - completed),
        "duplicated": sum(len(ids) - 1 for ids in by_key.values()) + len(handed_again),
        "refused": len(problems),
        "problems": problems[:5],
        "server_rss_kib": {"before": rss_before, "after": rss_after},
        "python": sys.version.split()[0],
    }


def _load_table(figures: dict[str, Any]) -> str:
    ms = figures["agent_call_ms"]
    rss = figures["server_rss_kib"]
    return "\n".join(
        [
            f"load run against osfoundry-fake serve: {figures['seconds']} s, "
            f"{figures['agents']} agent threads + 1 desktop",
            f"  calls: {figures['agent_calls']:,} agents' ({figures['agent_calls_per_s']:,}/s) "
            f"+ {figures['desktop_calls']:,} desktop's",
            f"  agents' calls: p50 {ms['p50']} ms, p99 {ms['p99']} ms, max {ms['max']} ms; "
            f"the server's CPU {figures['server_cpu_us_per_call']} us a call",
            f"  runs queued {figures['runs_queued']:,}: lost {figures['lost']}, "
            f"duplicated {figures['duplicated']}, refused calls {figures['refused']}",
            f"  server RSS {rss['before']:,} KiB -> {rss['after']:,} KiB",
            *(f"  problem: {p}" for p in figures["problems"]),
        ]
    )


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
    parser.add_argument("--load", type=float, metavar="SECONDS", help="a load run this long")
    parser.add_argument("--agents", type=int, default=8, help="agent threads of the load run")
    args = parser.parse_args(argv)
    if args.load is not None:
        if not args.load > 0 or args.agents < 1:
            parser.error("--load must be positive seconds and --agents at least 1")
        figures = load(args.load, args.agents)
        print(json.dumps(figures, indent=2) if args.json else _load_table(figures))
        return 1 if figures["lost"] or figures["duplicated"] or figures["refused"] else 0
    figures = run(args.seconds, args.rounds)
    print(json.dumps(figures, indent=2) if args.json else _table(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
