"""Benchmark ``osfoundry-sim``: all experiments at the seed's run counts.

Usage::

    python benchmarks/bench_sim.py [--jobs 2] [--repeat 3] [--profile] [--runs N]

Prints, for the best of ``--repeat`` runs: wall seconds, CPU seconds summed over
tasks, virtual-clock events and events per wall second, and the CPU seconds of each
experiment. ``--profile`` then runs everything once in this process under cProfile
and prints where the time goes: the share of CPU per source file (kit modules by
path, the standard library's ``json`` as one line) and the top functions.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import time

from pytest_osfoundry.sim import SimParams, simulate


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
    args = parser.parse_args()
    params = SimParams(runs=args.runs)
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
