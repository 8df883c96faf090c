"""The whole conformance suite against a far-away server, serial against concurrent.

Starts ``osfoundry-fake serve --latency SECONDS --workers 128`` (the reference server
on loopback, every answer delayed by 30 ms by default, like a nearby cloud region;
the delay holds no server thread), then runs
``python -m pytest --osf-target=URL`` against it once per ``--osf-concurrency`` value
asked for, and against ``--osf-target=embedded`` (no added latency) serially and at
the chosen concurrency. Each run is a fresh process from an empty folder; the wall
time (process start to exit) and pytest's session time are measured, and the JSON
report of each run gives the requests per check (median and maximum). Runs alternate
between settings and the best of ``--repeat`` (by session time, which is what the
concurrency changes) is kept, so that the ratios come from one noisy machine at one
moment. The default concurrency the suite ships with is the smallest value within
10 % of the fastest far-away session (more threads buy little beyond it).

Usage::

    python benchmarks/bench_latency.py [--latency 0.03] [--levels 1,8,16,32,64] [--repeat 2]
        [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_SESSION = re.compile(r" in ([0-9.]+)s")
_CREDS = ("agent_token", "other_agent_token", "read_token", "desktop_token", "project_id")


SERVER_WORKERS = 128
"""Threads of the measured server (``serve --workers``). The added latency holds no
thread (the loopback server keeps a delayed request in its selector until it is due),
so these only have to outnumber the requests being answered at once: the suite's
concurrency plus the ten callers of its races, so that the server never sets the pace."""


@contextmanager
def far_server(latency: float, workers: int = SERVER_WORKERS) -> Iterator[dict[str, Any]]:
    """A reference server answering ``latency`` seconds late; its JSON line."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest_osfoundry",
            "serve",
            "--latency",
            str(latency),
            "--workers",
            str(workers),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("osfoundry-fake serve printed nothing")
        yield json.loads(line)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def run_suite(target: str, concurrency: int, env: dict[str, str]) -> dict[str, Any]:
    """One suite run: wall seconds, outcomes by check and requests per check."""
    with tempfile.TemporaryDirectory(prefix="osf-bench-") as folder:
        report = Path(folder) / "report.json"
        args = [
            sys.executable,
            "-m",
            "pytest",
            f"--osf-target={target}",
            f"--osf-concurrency={concurrency}",
            f"--osf-report={report}",
            "-q",
            "-p",
            "no:cacheprovider",
        ]
        start = time.perf_counter()
        done = subprocess.run(
            args, cwd=folder, capture_output=True, text=True, check=False, env=env
        )
        wall = time.perf_counter() - start
        if done.returncode != 0 or not report.exists():
            sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
            raise SystemExit(f"the suite did not pass against {target} (exit {done.returncode})")
        document = json.loads(report.read_text(encoding="utf-8"))
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    match = _SESSION.search(last)
    if match is None:
        raise SystemExit(f"cannot read pytest's last line: {last!r}")
    checks = document["checks"]
    requests = [int(c.get("requests", 0)) for c in checks if c["outcome"] != "skipped"]
    return {
        "wall_s": wall,
        "session_s": float(match.group(1)),
        "outcomes": {c["id"]: c["outcome"] for c in checks},
        "requests_median": statistics.median(requests) if requests else 0,
        "requests_max": max(requests, default=0),
        "requests_total": sum(requests),
    }


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    best = min(runs, key=lambda r: r["session_s"])
    return {**best, "wall_s": round(best["wall_s"], 2)}


def choose(seconds: dict[int, float]) -> int:
    """The smallest concurrency within 10 % of the fastest run."""
    fastest = min(seconds.values())
    return min(n for n, took in seconds.items() if took <= fastest * 1.10)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.03, help="seconds added per answer")
    parser.add_argument(
        "--levels", default="1,8,16,32,64", help="concurrency values to compare"
    )
    parser.add_argument("--repeat", type=int, default=2, help="runs per setting (best kept)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    levels = sorted({int(n) for n in args.levels.split(",")})
    if not levels or min(levels) < 1:
        parser.error("--levels: whole numbers of at least 1")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("OSF_")}
    far: dict[int, list[dict[str, Any]]] = {n: [] for n in levels}
    with far_server(args.latency) as info:
        env = {**base_env, **{f"OSF_{k.upper()}": str(info[k]) for k in _CREDS}}
        for _ in range(max(1, args.repeat)):
            for n in levels:
                far[n].append(run_suite(info["mcp_url"], n, env))
    far_best = {n: _best(runs) for n, runs in far.items()}
    chosen = choose({n: r["session_s"] for n, r in far_best.items()})
    near: dict[int, list[dict[str, Any]]] = {1: [], chosen: []}
    for _ in range(max(1, args.repeat)):
        for n in near:
            near[n].append(run_suite("embedded", n, base_env))
    near_best = {n: _best(runs) for n, runs in near.items()}
    same = all(r["outcomes"] == far_best[levels[0]]["outcomes"] for r in far_best.values())
    figures = {
        "latency_s": args.latency,
        "far": {n: {k: v for k, v in r.items() if k != "outcomes"} for n, r in far_best.items()},
        "embedded": {
            n: {k: v for k, v in r.items() if k != "outcomes"} for n, r in near_best.items()
        },
        "chosen_concurrency": chosen,
        "same_outcomes_at_every_concurrency": same,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"reference server on loopback, {args.latency * 1000:g} ms added to every answer:")
    for n, r in far_best.items():
        print(
            f"  --osf-concurrency {n:>2}: {r['wall_s']:6.2f} s wall, "
            f"{r['session_s']:5.2f} s in pytest's session  "
            f"(requests per check: median {r['requests_median']}, max {r['requests_max']})"
        )
    print("--osf-target=embedded:")
    for n, r in near_best.items():
        print(
            f"  --osf-concurrency {n:>2}: {r['wall_s']:6.2f} s wall, "
            f"{r['session_s']:5.2f} s in pytest's session"
        )
    print(f"chosen default concurrency: {chosen}; same outcomes at every concurrency: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
