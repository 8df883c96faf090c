"""What the reference server and the fake relay hold in memory as work piles up (issue 39).

Each scenario runs in a fresh Python process of its own (so one scenario's heap is
never another's), warms up, then measures the process's resident set (RSS, Linux
``/proc/self/statm``) before and after, with a garbage collection at each reading:

* ``small`` / ``near-bound``: completed runs driven through the reference server's
  HTTP app (``tools/call run_graph_session``, the relay's start and complete, one
  ``get_graph_run`` of the final view), with a short result or one of ~99,000
  characters (the completion just under the 100,000-character bound). It prints the
  growth per completed run below the retention caps, then the RSS after 10,000 and
  after 20,000 completed runs: past the caps (``Retention``: 10,000 terminal runs,
  50,000,000 characters of completions) the oldest-finished runs are forgotten, so
  only the idempotency keys (kept 24 hours) still grow.
* ``unbounded``: ``small`` with ``Retention.unbounded()``, what the server kept before
  (every run for its lifetime), for comparison.
* ``idle-relay``: an idle fake desktop (a world on the virtual clock, relay calls
  straight into the server's state): the growth per pass, and the RSS after 10,000
  and 50,000 passes (its history keeps the newest 10,000 passes and events).

    python benchmarks/bench_memory.py [--only NAME ...] [--json]

Figures depend on the machine and Python; ``benchmarks/RESULTS.md`` records them.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
from typing import Any

SCENARIOS = ("small", "near-bound", "unbounded", "idle-relay")
RESULT_CHARS = 99_000
"""Result text of a near-bound run: its completion is just under 100,000 characters."""
WARM_UP = 50
MARKS = (10_000, 20_000, 40_000)
"""Completed runs after which RSS is read: the caps are reached at the first; the
timestamp formatter's cache (65,536 stamps, about 3 a run) is full by the last."""


def _rss() -> int:
    """The process's resident set, in bytes (after a full collection)."""
    gc.collect()
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def _runs(name: str) -> dict[str, Any]:
    """Completed runs through the reference server's HTTP app; RSS along the way."""
    from pytest_osfoundry.clock import VirtualClock
    from pytest_osfoundry.http import Request
    from pytest_osfoundry.server import ReferenceServer, Retention

    clock = VirtualClock()
    retention = Retention.unbounded() if name == "unbounded" else Retention()
    server = ReferenceServer(clock, retention=retention)
    made = server.provision()
    gsid = "gs_" + "b" * 32
    session = {
        "graph_session_id": gsid,
        "slug": "bench",
        "name": "b",
        "description": "",
        "version": 1,
        "status": "active",
    }
    server.state.share(made.project_id, [session])
    agent = {
        "authorization": f"Bearer {made.agent_token}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    desktop = {"authorization": f"Bearer {made.desktop_token}", "content-type": "application/json"}
    text = "x" * (RESULT_CHARS if name == "near-bound" else 20)
    relay = "/external-assistants/graph-relays/commands/"

    def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        ).encode()
        reply = server(Request("POST", "/mcp", agent, body))
        structured: dict[str, Any] = json.loads(reply.body)["result"]["structuredContent"]
        return structured

    def one(i: int) -> None:
        ticket = call(
            "run_graph_session",
            {
                "graph_session_id": gsid,
                "idempotency_key": f"bench-key-{i:08d}",
                "arguments": {"n": i},
            },
        )
        command_id = ticket["command_id"]
        execution = f"exec_{i:032x}"
        start = json.dumps({"execution_id": execution}).encode()
        server(Request("POST", f"{relay}{command_id}/start", desktop, start))
        completion = {
            "execution_id": execution,
            "status": "completed",
            "result": f"{i:08d}{text}",
            "total_tokens": 1200,
            "reported_cost": 0.02,
        }
        reply = server(
            Request(
                "POST", f"{relay}{command_id}/complete", desktop, json.dumps(completion).encode()
            )
        )
        assert reply.status == 200, reply.body
        assert call("get_graph_run", {"command_id": command_id})["status"] == "completed"
        clock.advance(1.0)

    for i in range(WARM_UP):
        one(i)
    base = _rss()
    below = 2_000 if name != "near-bound" else 300  # under the caps: growth per run
    for i in range(WARM_UP, WARM_UP + below):
        one(i)
    per_run = (_rss() - base) / below
    marks = {}
    done = WARM_UP + below
    for mark in MARKS:
        for i in range(done, mark):
            one(i)
        done = mark
        marks[mark] = _rss() - base
    return {
        "per_run_bytes": per_run,
        "rss_growth_after": marks,
        "kept": server.state.kept(),
    }


def _idle_relay() -> dict[str, Any]:
    """An idle fake desktop on the virtual clock: RSS per pass, then after many."""
    from pytest_osfoundry.world import OsfWorld, WorldConfig

    world = OsfWorld(WorldConfig(direct=True))
    interval = world.config.interval
    world.clock.advance(interval * WARM_UP)
    base = _rss()
    below = 5_000
    world.clock.advance(interval * below)
    per_pass = (_rss() - base) / below
    marks = {}
    for mark in (10_000, 50_000):
        world.clock.advance(
            interval * (mark - len(world.relay.passes) - world.relay.passes.dropped)
        )
        marks[mark] = _rss() - base
    return {
        "per_pass_bytes": per_pass,
        "rss_growth_after": marks,
        "kept": {"passes": len(world.relay.passes), "events": len(world.relay.events)},
    }


def _child(name: str) -> dict[str, Any]:
    return _idle_relay() if name == "idle-relay" else _runs(name)


def measure(names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Each scenario in a fresh process of its own."""
    out = {}
    for name in names:
        done = subprocess.run(
            [sys.executable, __file__, "--child", name],
            check=True,
            capture_output=True,
            text=True,
        )
        out[name] = json.loads(done.stdout)
    return out


def _mib(value: float) -> str:
    return f"{value / 1_048_576:7.1f} MiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", choices=SCENARIOS, metavar="NAME")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--child", choices=SCENARIOS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child)))
        return 0
    if not sys.platform.startswith("linux"):
        print("bench_memory reads /proc/self/statm: Linux only", file=sys.stderr)
        return 2
    figures = measure(tuple(args.only or SCENARIOS))
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"Python {sys.version.split()[0]}, RSS growth over the warmed-up process")
    for name, got in figures.items():
        if name == "idle-relay":
            print(f"\n{name}: {got['per_pass_bytes']:,.0f} B per pass below its history bound")
            unit = "passes"
        else:
            print(f"\n{name}: {got['per_run_bytes']:,.0f} B per completed run below the caps")
            unit = "completed runs"
        for mark, grown in got["rss_growth_after"].items():
            print(f"  after {int(mark):>6,} {unit}: {_mib(grown)}")
        print(f"  kept at the end: {got['kept']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
