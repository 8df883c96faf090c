"""How long the whole conformance suite takes against ``--osf-target=embedded``.

Runs ``python -m pytest --osf-target=embedded -q`` (no timing check) in a fresh
process from an empty temporary folder, ``--repeat`` times, and prints the wall time
of each run (process start to exit, imports included) and the session time pytest
reports, then the best and the median. The target on a 2-core machine is under 10 s.

With ``--against PYTHON`` (another environment's interpreter, e.g. one with the
kit's main branch installed) the runs are paired, A (that interpreter) then B (this
one), ``--repeat`` times, and the ratio of the medians B/A is printed: how much slower
(or faster) this tree's suite is, measured under the same load.

Usage::

    python benchmarks/bench_conformance.py [--repeat 5] [--workers N] [--json]
    python benchmarks/bench_conformance.py --against ../main/.venv/bin/python --repeat 8
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
    parser.add_argument("--against", help="pair each run with one by this Python (A B A B ...)")
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


def _paired(against: str, repeat: int, workers: int, as_json: bool) -> int:
    """A (``against``) and B (this interpreter) alternately; the ratio of medians."""
    a: list[tuple[float, float, int]] = []
    b: list[tuple[float, float, int]] = []
    for _ in range(repeat):
        a.append(run_once(workers, against))
        b.append(run_once(workers, sys.executable))
    figures = {
        "runs": repeat,
        "a_checks": a[0][2],
        "b_checks": b[0][2],
        "a_wall_median_s": round(statistics.median(r[0] for r in a), 3),
        "b_wall_median_s": round(statistics.median(r[0] for r in b), 3),
        "a_session_median_s": round(statistics.median(r[1] for r in a), 3),
        "b_session_median_s": round(statistics.median(r[1] for r in b), 3),
    }
    figures["wall_ratio_b_over_a"] = round(
        figures["b_wall_median_s"] / figures["a_wall_median_s"], 3
    )
    figures["session_ratio_b_over_a"] = round(
        figures["b_session_median_s"] / figures["a_session_median_s"], 3
    )
    if as_json:
        print(json.dumps(figures))
        return 0
    for n, (ra, rb) in enumerate(zip(a, b, strict=True), start=1):
        print(
            f"pair {n}: A {ra[0]:6.2f} s wall ({ra[1]:5.2f} s session), "
            f"B {rb[0]:6.2f} s wall ({rb[1]:5.2f} s session)"
        )
    print(
        f"A ({a[0][2]} checks) median {figures['a_wall_median_s']} s wall, "
        f"{figures['a_session_median_s']} s session; B ({b[0][2]} checks) median "
        f"{figures['b_wall_median_s']} s wall, {figures['b_session_median_s']} s session; "
        f"B/A {figures['wall_ratio_b_over_a']} wall, {figures['session_ratio_b_over_a']} session"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
