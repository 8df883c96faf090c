"""``osfoundry-sim --jobs 2`` against the plain simulation of the same experiments.

Both are whole processes computing all nine experiments at the seed's run counts:
A is ``python -m pytest_osfoundry.sim --jobs 2 --json`` (the kit's components),
B is ``python benchmarks/plain_sim.py --json`` (one standard-library process, the
floor of the work; its figures are held to the seed's tolerances by
``tests/sim/test_sim_plain_floor.py``). Runs are paired, A B A B ...; printed are
the medians of A, of B, of the pairs' wall ratios A/B (the aim, issue 23: at most 4)
and of their CPU ratios (user + system of the processes and their workers).

``--tree DIR`` runs A from the package in ``DIR`` (first on ``PYTHONPATH``), e.g. an
older commit's ``git archive``, to compare two versions against the same floor.

Usage::

    python benchmarks/bench_sim_floor.py [--pairs 5] [--tree DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

PLAIN = Path(__file__).resolve().parent / "plain_sim.py"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(args: list[str], tree: str | None = None) -> tuple[float, float]:
    """One whole process: its wall and CPU seconds (workers included)."""
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, env.get("PYTHONPATH")]))
    cpu = _children_cpu()
    start = time.perf_counter()
    # From a neutral folder: run from a checkout, ``-m`` would put it first on sys.path.
    done = subprocess.run(
        args, cwd=tempfile.gettempdir(), env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
        raise SystemExit(f"{' '.join(args)} failed (exit {done.returncode})")
    return wall, _children_cpu() - cpu


def measure(pairs: int, tree: str | None) -> dict[str, float | int]:
    """Paired runs of the kit's sim and the plain one; medians and pair ratios."""
    kit = [sys.executable, "-m", "pytest_osfoundry.sim", "--jobs", "2", "--json"]
    plain = [sys.executable, str(PLAIN), "--json"]
    run_once(kit, tree)  # warm caches, write bytecode
    run_once(plain)
    a: list[tuple[float, float]] = []
    b: list[tuple[float, float]] = []
    for _ in range(pairs):
        a.append(run_once(kit, tree))
        b.append(run_once(plain))
    pairs_ab = list(zip(a, b, strict=True))
    return {
        "pairs": pairs,
        "sim_wall_median_s": round(statistics.median(w for w, _ in a), 3),
        "plain_wall_median_s": round(statistics.median(w for w, _ in b), 3),
        "sim_cpu_median_s": round(statistics.median(c for _, c in a), 3),
        "plain_cpu_median_s": round(statistics.median(c for _, c in b), 3),
        "wall_ratio_median": round(statistics.median(x[0] / y[0] for x, y in pairs_ab), 2),
        "cpu_ratio_median": round(statistics.median(x[1] / y[1] for x, y in pairs_ab), 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5, help="A B pairs (default 5, at least 3)")
    parser.add_argument("--tree", help="run the kit's sim from the package in this folder")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    f = measure(max(3, args.pairs), args.tree)
    if args.json:
        print(json.dumps(f))
        return 0
    print(f"all nine experiments at the seed's run counts, {f['pairs']} pairs (medians)")
    print(
        f"  osfoundry-sim --jobs 2: {f['sim_wall_median_s']:.3f} s wall, "
        f"{f['sim_cpu_median_s']:.3f} s CPU"
    )
    print(
        f"  plain_sim.py:           {f['plain_wall_median_s']:.3f} s wall, "
        f"{f['plain_cpu_median_s']:.3f} s CPU"
    )
    print(
        f"  pair ratio, wall: {f['wall_ratio_median']:.2f}x (aim: at most 4x); "
        f"CPU: {f['cpu_ratio_median']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
