"""Benchmark ``osfoundry-sim``: all experiments at the seed's run counts.

Usage::

    python benchmarks/bench_sim.py [--jobs 2] [--repeat 3] [--profile] [--exchanges] [--runs N]
                                   [--protocol REV] [--compare-protocols]

Prints first the whole command, ``python -m pytest_osfoundry.sim --jobs N``, timed
from outside ``--repeat`` times (start-up and imports included: the figure a user
sees; its bytecode is compiled first, as ``pip install`` does), then, for the best
of ``--repeat`` in-process runs: wall seconds, CPU seconds summed over tasks,
virtual-clock events and events per wall second, and the CPU seconds of each
experiment. ``--exchanges`` then runs everything once in this process, timing every
in-process HTTP exchange (client request to server reply, server included) by kind:
how many, microseconds each, and their share of the run. ``--profile`` runs it once
more under cProfile and prints the share of CPU per source file (kit modules by
path, the standard library's ``json`` as one line) and the top functions.
``--protocol`` is the agents' MCP revision (default: the sim's, 2025-11-25);
``--compare-protocols`` runs everything in this process under the sim's default
revision and under 2026-07-28, alternating ``--repeat`` times, and prints the CPU of
each (best run) and their ratio: the figure behind the sim's default revision.
"""

from __future__ import annotations

import argparse
import collections
import compileall
import cProfile
import os
import pstats
import subprocess
import sys
import time

from pytest_osfoundry.client._mcp_client import MODERN_PROTOCOL_VERSION, PROTOCOL_CHOICES
from pytest_osfoundry.client._transport import DirectTransport
from pytest_osfoundry.http import Response
from pytest_osfoundry.sim import SimParams, simulate
from pytest_osfoundry.sim._params import SIM_PROTOCOL


def _exchanges(params: SimParams) -> None:
    """One in-process run with every DirectTransport exchange timed, by kind."""
    spent: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    original = DirectTransport.request
    clock = time.perf_counter

    def timed(
        self: DirectTransport, method: str, url: str, headers: dict[str, str], body: bytes
    ) -> Response:
        began = clock()
        reply = original(self, method, url, headers, body)
        kind = "MCP " + body[body.find(b'"name":"') + 8 :].split(b'"', 1)[0].decode()
        if not url.endswith("/mcp"):
            kind = "relay " + url.rsplit("/", 1)[-1]
        elif b'"tools/call"' not in body:
            kind = "MCP other"
        spent[kind] += clock() - began
        count[kind] += 1
        return reply

    DirectTransport.request = timed  # type: ignore[method-assign,assignment]
    try:
        started = time.process_time()
        simulate(None, params, jobs=1)
        whole = time.process_time() - started
    finally:
        DirectTransport.request = original  # type: ignore[method-assign]
    inside = sum(spent.values())
    print(f"\nexchanges (one in-process run, {whole:.2f} s CPU, timer overhead included)")
    print(f"  {'kind':28s} {'count':>9s} {'us each':>8s} {'share':>6s}")
    for kind, seconds in spent.most_common():
        each = seconds / count[kind] * 1e6
        print(f"  {kind:28s} {count[kind]:9,d} {each:8.1f} {100 * seconds / whole:5.1f}%")
    print(
        f"  {'all exchanges':28s} {sum(count.values()):9,d} "
        f"{inside / sum(count.values()) * 1e6:8.1f} {100 * inside / whole:5.1f}%"
    )


def _compare_protocols(runs: int | None, repeat: int) -> None:
    """In-process CPU of every experiment under the sim's revision and the modern one."""
    cpu: dict[str, list[float]] = {SIM_PROTOCOL: [], MODERN_PROTOCOL_VERSION: []}
    for _ in range(repeat):
        for protocol in cpu:
            started = time.process_time()
            simulate(None, SimParams(runs=runs, protocol=protocol), jobs=1)
            cpu[protocol].append(time.process_time() - started)
    print(f"\nagents' MCP revision, all experiments in-process (best of {repeat}, CPU)")
    for protocol, times in cpu.items():
        print(f"  {protocol}      {min(times):8.2f} s")
    ratio = min(cpu[MODERN_PROTOCOL_VERSION]) / min(cpu[SIM_PROTOCOL])
    print(f"  {MODERN_PROTOCOL_VERSION} / {SIM_PROTOCOL}  {ratio:6.2f}x")


def _whole_command(jobs: int, repeat: int, runs: int | None, protocol: str) -> None:
    """Time ``python -m pytest_osfoundry.sim --jobs N`` as a user runs it."""
    import pytest_osfoundry

    compileall.compile_dir(os.path.dirname(pytest_osfoundry.__file__), quiet=1)
    command = [sys.executable, "-m", "pytest_osfoundry.sim", "--jobs", str(jobs)]
    command += ["--protocol", protocol]
    if runs is not None:
        command += ["--runs", str(runs)]
    walls = []
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - began)
    walls.sort()
    print(
        f"python -m pytest_osfoundry.sim --jobs {jobs} --protocol {protocol}, "
        f"timed from outside ({repeat} runs)"
    )
    print(
        f"  wall            {walls[0]:8.2f} s best, {walls[len(walls) // 2]:.2f} s median, "
        f"{walls[-1]:.2f} s worst\n"
    )


def _by_file(stats: pstats.Stats) -> list[tuple[float, str]]:
    totals: collections.Counter[str] = collections.Counter()
    raw = stats.stats  # type: ignore[attr-defined]
    for (filename, _line, _name), (_cc, _nc, tottime, _ct, _callers) in raw.items():
        if "pytest_osfoundry" in filename:
            key = "pytest_osfoundry/" + filename.split("pytest_osfoundry/", 1)[1]
        elif "/json/" in filename:
            key = "json (stdlib)"
        elif filename == "~":
            key = "builtins (isinstance, dict.get, str methods, json C code, ...)"
        else:
            key = filename.rsplit("/", 1)[-1]
        totals[key] += tottime
    whole = sum(totals.values()) or 1.0
    return [(100 * t / whole, k) for k, t in totals.most_common()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--exchanges", action="store_true")
    parser.add_argument("--protocol", choices=PROTOCOL_CHOICES, default=SIM_PROTOCOL)
    parser.add_argument("--compare-protocols", action="store_true")
    args = parser.parse_args()
    params = SimParams(runs=args.runs, protocol=args.protocol)
    _whole_command(args.jobs, args.repeat, args.runs, args.protocol)
    best = None
    for _ in range(args.repeat):
        run = simulate(None, params, jobs=args.jobs)
        if best is None or run.wall < best.wall:
            best = run
    assert best is not None
    print(f"osfoundry-sim, all experiments, --jobs {args.jobs} (best of {args.repeat})")
    print(f"  wall            {best.wall:8.2f} s")
    print(f"  CPU (tasks)     {best.cpu:8.2f} s")
    print(f"  clock events    {best.events:8,d}")
    print(
        f"  events / s      {best.events_per_second:8,.0f} (wall), "
        f"{best.events / best.cpu:,.0f} (CPU)"
    )
    per: collections.Counter[str] = collections.Counter()
    events: collections.Counter[str] = collections.Counter()
    for kind, option, _index, cpu, ev in best.task_times:
        name = f"{kind}" + (f" x{option}" if kind == "fanout" else "")
        per[name] += cpu
        events[name] += ev
    print("  CPU by task kind:")
    for name, cpu in per.most_common():
        print(f"    {name:14s} {cpu:6.2f} s  {events[name]:9,d} events")
    if args.exchanges:
        _exchanges(params)
    if args.compare_protocols:
        _compare_protocols(args.runs, args.repeat)
    if args.profile:
        profiler = cProfile.Profile()
        started = time.perf_counter()
        profiler.enable()
        simulate(None, params, jobs=1)
        profiler.disable()
        took = time.perf_counter() - started
        print(f"\nprofile (one in-process run, {took:.1f} s under cProfile)")
        stats = pstats.Stats(profiler)
        for share, key in _by_file(stats)[:20]:
            print(f"  {share:5.1f}%  {key}")
        print()
        stats.sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
