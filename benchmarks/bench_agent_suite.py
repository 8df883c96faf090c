"""How long the whole agent suite takes, its checks run at once, against an agent command.

Runs ``python -m pytest --osf-agent-command=CMD -q`` in a fresh process from an empty
temporary folder and prints the wall time of each run (process start to exit: the
preflight, every agent process, imports), pytest's session time and the checks that
passed, then the median per command. With several ``--command`` options the runs are
paired, A B A B ..., so that a machine's load falls on every command alike. The goal
on a 2-core machine is 90 s for the scaled tier (issue 45); ``--realtime`` times the
real-time tier (its goal: 6 minutes).

Usage::

    python benchmarks/bench_agent_suite.py [--repeat 3] [--command CMD ...]
        [--interval SECONDS] [--concurrency N] [--realtime] [--restart] [--goal SECONDS]

Run it from the repository root: the suite runs in an empty folder, with the folder it
was started from on ``PYTHONPATH`` (so ``python -m tests.agent_conformance.broken NAME``
works); give a script in ``CMD`` by its absolute path.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

_SESSION = re.compile(r"(\d+) passed.* in ([0-9.]+)s")


def run_once(command: str, options: Sequence[str]) -> tuple[float, float, int]:
    """One suite run: (wall seconds, pytest's session seconds, checks passed)."""
    args = [sys.executable, "-m", "pytest", f"--osf-agent-command={command}", "-q"]
    args += ["-p", "no:cacheprovider", "-p", "no:randomly", *options]
    paths = [os.getcwd(), os.environ.get("PYTHONPATH", "")]  # CMD's -m modules importable
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    with tempfile.TemporaryDirectory(prefix="osf-bench-agent-") as folder:
        start = time.perf_counter()
        done = subprocess.run(
            args, cwd=folder, env=env, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(
            f"the agent suite did not pass against {command!r} (exit {done.returncode})"
        )
    match = _SESSION.search(done.stdout.strip().splitlines()[-1])
    if match is None:
        raise SystemExit(f"cannot read pytest's last line: {done.stdout[-300:]!r}")
    return wall, float(match.group(2)), int(match.group(1))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures; exit 1 when a median misses the goal."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (default 3)")
    parser.add_argument(
        "--command",
        action="append",
        default=None,
        help="an agent command (default: embedded); repeat it for paired runs A B A B",
    )
    parser.add_argument("--interval", default=None, help="--osf-agent-interval (scaled tier)")
    parser.add_argument("--concurrency", default=None, help="--osf-agent-concurrency")
    parser.add_argument("--realtime", action="store_true", help="--osf-agent-realtime")
    parser.add_argument("--restart", action="store_true", help="--osf-agent-restart")
    parser.add_argument(
        "--goal", type=float, default=None, help="seconds (default 90, 360 with --realtime)"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.realtime and args.interval is not None:
        parser.error("--realtime runs at the production 20 s: leave out --interval")
    commands: list[str] = args.command or ["embedded"]
    options: list[str] = []
    if args.interval is not None:
        options.append(f"--osf-agent-interval={args.interval}")
    if args.concurrency is not None:
        options.append(f"--osf-agent-concurrency={args.concurrency}")
    if args.realtime:
        options.append("--osf-agent-realtime")
    if args.restart:
        options.append("--osf-agent-restart")
    goal = args.goal if args.goal is not None else (360.0 if args.realtime else 90.0)
    walls: dict[str, list[float]] = {command: [] for command in commands}
    for i in range(args.repeat):
        for command in commands:
            wall, session, passed = run_once(command, options)
            walls[command].append(wall)
            print(
                f"run {i + 1} {command!r}: {wall:6.1f} s wall, {session:6.1f} s session, "
                f"{passed} checks passed",
                flush=True,
            )
    missed = False
    for command, times in walls.items():
        median = statistics.median(times)
        verdict = "meets" if median <= goal else "MISSES"
        missed = missed or median > goal
        print(
            f"median {median:.1f} s over {len(times)} runs of {command!r}: "
            f"{verdict} the goal of {goal:g} s"
        )
    if len(commands) > 1:
        first = statistics.median(walls[commands[0]])
        for command in commands[1:]:
            ratio = statistics.median(walls[command]) / first
            print(f"{command!r} / {commands[0]!r}: {ratio:.3f}x wall (medians)")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
