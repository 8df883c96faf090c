"""How long the whole relay suite takes against ``--osf-relay-command=embedded``.

Runs ``python -m pytest --osf-relay-command=embedded -q`` in a fresh process from an
empty temporary folder, ``--repeat`` times, and prints the wall time of each run
(process start to exit: preflight, every relay process, imports) and pytest's session
time, then the median. The goal on this 2-core machine is under 30 s. With
``--command CMD`` it times another relay (the goal for the Node example is 45 s).

Usage::

    python benchmarks/bench_relay_suite.py [--repeat 3] [--command CMD] [--concurrency N]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

_SESSION = re.compile(r"(\d+) passed.* in ([0-9.]+)s")


def run_once(command: str, concurrency: int | None) -> tuple[float, float, int]:
    """One suite run: (wall seconds, pytest's session seconds, checks passed)."""
    args = [sys.executable, "-m", "pytest", f"--osf-relay-command={command}", "-q"]
    args += ["-p", "no:cacheprovider", "-p", "no:randomly"]
    if concurrency is not None:
        args.append(f"--osf-relay-concurrency={concurrency}")
    with tempfile.TemporaryDirectory(prefix="osf-bench-relay-") as folder:
        start = time.perf_counter()
        done = subprocess.run(args, cwd=folder, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"the relay suite did not pass (exit {done.returncode})")
    match = _SESSION.search(done.stdout.strip().splitlines()[-1])
    if match is None:
        raise SystemExit(f"cannot read pytest's last line: {done.stdout[-300:]!r}")
    return wall, float(match.group(2)), int(match.group(1))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs to make (default 3)")
    parser.add_argument("--command", default="embedded", help="the relay command (embedded)")
    parser.add_argument("--concurrency", type=int, default=None, help="--osf-relay-concurrency")
    parser.add_argument("--goal", type=float, default=30.0, help="seconds (default 30)")
    args = parser.parse_args(argv)
    walls = []
    for i in range(args.repeat):
        wall, session, passed = run_once(args.command, args.concurrency)
        walls.append(wall)
        print(f"run {i + 1}: {wall:6.1f} s wall, {session:6.1f} s session, {passed} checks passed")
    median = statistics.median(walls)
    verdict = "meets" if median < args.goal else "MISSES"
    print(f"median {median:.1f} s over {len(walls)} runs: {verdict} the goal of {args.goal:g} s")
    return 0 if median < args.goal else 1


if __name__ == "__main__":
    sys.exit(main())
