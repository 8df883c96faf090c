"""How long the whole conformance suite takes against ``--osf-target=embedded``.

Runs ``python -m pytest --osf-target=embedded -q`` (no timing check) in a fresh
process from an empty temporary folder, ``--repeat`` times, and prints the wall time
of each run (process start to exit, imports included) and the session time pytest
reports, then the best and the median. The target on a 2-core machine is under 10 s.

``--against PYTHON`` compares two installs (say this branch's venv and main's):
runs alternate A B A B in one invocation (A: this interpreter, B: ``PYTHON``), and
the figure is the ratio of the two median wall times (B / A: above 1, B is slower).

Usage::

    python benchmarks/bench_conformance.py [--repeat 5] [--workers N] [--json]
    python benchmarks/bench_conformance.py --against OTHER/.venv/bin/python [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

_SESSION = re.compile(r"(\d+) passed.* in ([0-9.]+)s")


def run_once(workers: int, python: str = sys.executable) -> tuple[float, float, int]:
    """One suite run: (wall seconds, pytest's session seconds, checks passed)."""
    args = [python, "-m", "pytest", "--osf-target=embedded", "-q", "-p", "no:cacheprovider"]
    if workers:
        args += ["-n", str(workers)]
    with tempfile.TemporaryDirectory(prefix="osf-bench-") as folder:
        start = time.perf_counter()
        done = subprocess.run(args, cwd=folder, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"the suite did not pass (exit {done.returncode})")
    match = _SESSION.search(done.stdout.strip().splitlines()[-1])
    if match is None:
        raise SystemExit(f"cannot read pytest's last line: {done.stdout[-300:]!r}")
    return wall, float(match.group(2)), int(match.group(1))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs to make (default 5)")
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist workers (-n)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.add_argument("--against", metavar="PYTHON", help="paired runs against this interpreter")
    args = parser.parse_args(argv)
    if args.against:
        return _paired(args.against, max(1, args.repeat), args.workers, args.json)
    runs = [run_once(args.workers) for _ in range(max(1, args.repeat))]
    walls = [r[0] for r in runs]
    sessions = [r[1] for r in runs]
    figures = {
        "checks": runs[0][2],
        "workers": args.workers,
        "runs": len(runs),
        "wall_best_s": round(min(walls), 2),
        "wall_median_s": round(statistics.median(walls), 2),
        "session_best_s": round(min(sessions), 2),
        "session_median_s": round(statistics.median(sessions), 2),
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    for n, (wall, session, _) in enumerate(runs, start=1):
        print(f"run {n}: {wall:6.2f} s wall, {session:6.2f} s in pytest's session")
    print(
        f"{figures['checks']} checks against --osf-target=embedded"
        f"{f' with -n {args.workers}' if args.workers else ''}: best {figures['wall_best_s']} s "
        f"wall ({figures['session_best_s']} s session), median {figures['wall_median_s']} s "
        f"wall ({figures['session_median_s']} s session)"
    )
    return 0


def _paired(other: str, repeat: int, workers: int, as_json: bool) -> int:
    """A B A B ...: this interpreter's install (A) against ``other``'s (B)."""
    walls: dict[str, list[float]] = {"A": [], "B": []}
    sessions: dict[str, list[float]] = {"A": [], "B": []}
    checks: dict[str, int] = {}
    for _ in range(repeat):
        for name, python in (("A", sys.executable), ("B", other)):
            wall, session, passed = run_once(workers, python)
            walls[name].append(wall)
            sessions[name].append(session)
            checks[name] = passed
    med = {
        f"{k}_{n}": statistics.median(v[n])
        for k, v in (("wall", walls), ("session", sessions))
        for n in "AB"
    }
    figures = {
        "runs_each": repeat,
        "checks_a": checks["A"],
        "checks_b": checks["B"],
        **{f"median_{k.lower()}_s": round(v, 3) for k, v in med.items()},
        "wall_ratio_b_over_a": round(med["wall_B"] / med["wall_A"], 3),
        "session_ratio_b_over_a": round(med["session_B"] / med["session_A"], 3),
    }
    if as_json:
        print(json.dumps(figures))
        return 0
    print(
        f"A ({sys.executable}, {checks['A']} checks): median {med['wall_A']:.3f} s wall, "
        f"{med['session_A']:.3f} s session; B ({other}, {checks['B']} checks): median "
        f"{med['wall_B']:.3f} s wall, {med['session_B']:.3f} s session; B / A = "
        f"{figures['wall_ratio_b_over_a']} wall, {figures['session_ratio_b_over_a']} session "
        f"over {repeat} pairs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
