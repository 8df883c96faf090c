"""Benchmark the fixtures' hot paths: virtual-clock events and whole in-process round trips.

Run ``python benchmarks/bench_fixtures.py`` (``--json`` for a machine-readable line).
It measures, in one process and one run so the figures can be compared:

* **clock events/s** — bare ``VirtualClock`` callbacks scheduled and run in order;
* **process steps/s** — generator processes yielding delays (what relay passes and
  agents are made of);
* **round trips/s** — ``get_graph_run`` calls from a scripted agent's MCP client
  through the direct transport into the reference server, with a relay running;
* **runs/s** — whole runs (agent queues → relay syncs, starts, polls control,
  completes → agent polls until it sees the result), many interleaved on one clock.

Times are best of ``--rounds``; the machine is shared, so compare the rows of one run.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable

from pytest_osfoundry.agent._strategies import every
from pytest_osfoundry.clock import ProcessGen, VirtualClock
from pytest_osfoundry.engine._graph import Fixed, Graph
from pytest_osfoundry.world import OsfWorld, WorldConfig


def best(rounds: int, fn: Callable[[], int]) -> tuple[float, int]:
    """Run ``fn`` ``rounds`` times; return the best seconds and the work count."""
    times = []
    count = 0
    for _ in range(rounds):
        start = time.perf_counter()
        count = fn()
        times.append(time.perf_counter() - start)
    return min(times), count


def clock_events(n: int) -> int:
    clock = VirtualClock()
    rng = random.Random(1)
    for _ in range(n):
        clock.call_later(rng.random() * 1000, lambda: None)
    clock.run_all()
    return clock.events_run


def process_steps(n_procs: int, steps: int) -> int:
    clock = VirtualClock()

    def proc() -> ProcessGen:
        for _ in range(steps):
            yield 1.5

    for i in range(n_procs):
        clock.spawn(proc(), delay=i * 0.01)
    clock.run_all()
    return n_procs * steps


def round_trips(n: int) -> int:
    world = OsfWorld(WorldConfig(seed=1, graph=Graph(duration=Fixed(1e6))))
    client = world.agent_client()
    ticket = client.run_graph_session(world.sessions[0].graph_session_id, "bench-key-0001")
    for _ in range(n):
        client.get_graph_run(ticket["command_id"])
    return n


def whole_runs(n: int) -> int:
    world = OsfWorld(WorldConfig(seed=2, graph=Graph(duration=Fixed(30), result="ok")))
    agent = world.make_agent(strategy=every(10))
    gsid = world.sessions[0].graph_session_id
    records = [agent.start(gsid, delay=i * 40.0) for i in range(n)]
    world.clock.run_until(lambda: all(r.done.is_set for r in records), limit=n * 60.0 + 3600)
    assert all(r.status == "completed" for r in records)
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = {
        "clock events/s": best(args.rounds, lambda: clock_events(100_000)),
        "process steps/s": best(args.rounds, lambda: process_steps(1_000, 100)),
        "agent->server round trips/s": best(args.rounds, lambda: round_trips(20_000)),
        "whole runs/s (agent+relay+engine+server)": best(args.rounds, lambda: whole_runs(500)),
    }
    figures = {name: count / seconds for name, (seconds, count) in rows.items()}
    if args.json:
        print(json.dumps({k: round(v) for k, v in figures.items()}))
        return
    for name, rate in figures.items():
        print(f"{name:45s} {rate:12,.0f}")


if __name__ == "__main__":
    main()
