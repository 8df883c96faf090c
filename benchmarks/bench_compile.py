"""What compiling the project once (``.ci/run``'s ``compileall``) saves each test process.

With ``PYTHONDONTWRITEBYTECODE=1`` (common in CI containers) an editable install's
modules are compiled anew by every Python process. This runs the conformance suite
against ``embedded`` (a whole ``python -m pytest`` process) in pairs, A B A B ...:

* A: the checkout's ``__pycache__`` folders removed, ``PYTHONDONTWRITEBYTECODE=1``
  (every process compiles the kit, as CI did before issue 23);
* B: the same, after ``python -m compileall -q`` of the four folders ``.ci/run`` compiles.

Prints the median of A, of B, of the pairs' ratios A/B and differences A-B (wall, and
CPU of the process), and the
cost of the one ``compileall``. It deletes and rewrites only ``__pycache__`` folders
of this checkout.

Usage::

    python benchmarks/bench_compile.py [--pairs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("pytest_osfoundry", "conformance", "tests", "examples")


def _clear_bytecode() -> None:
    for folder in FOLDERS:
        for cache in (ROOT / folder).rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)


def _compile() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "compileall", "-q", *FOLDERS], cwd=ROOT, check=True)
    return time.perf_counter() - start


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _suite() -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSF_", "PYTEST_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "--osf-target=embedded",
    ]
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"the suite against embedded failed (exit {done.returncode})")
    return wall, cpu


def measure(pairs: int) -> dict[str, float | int]:
    """Paired runs without and with the bytecode written; medians of each and of the pairs."""
    uncompiled: list[tuple[float, float]] = []
    compiled: list[tuple[float, float]] = []
    compile_costs: list[float] = []
    for _ in range(pairs):
        _clear_bytecode()
        uncompiled.append(_suite())
        compile_costs.append(_compile())
        compiled.append(_suite())
    pairs_ab = list(zip(uncompiled, compiled, strict=True))
    ratios = [a[0] / b[0] for a, b in pairs_ab]
    diffs = [a[0] - b[0] for a, b in pairs_ab]
    cpu_diffs = [a[1] - b[1] for a, b in pairs_ab]
    return {
        "pairs": pairs,
        "uncompiled_median_s": round(statistics.median(w for w, _ in uncompiled), 3),
        "compiled_median_s": round(statistics.median(w for w, _ in compiled), 3),
        "pair_cpu_difference_median_s": round(statistics.median(cpu_diffs), 3),
        "pair_ratio_median": round(statistics.median(ratios), 3),
        "pair_difference_median_s": round(statistics.median(diffs), 3),
        "compileall_median_s": round(statistics.median(compile_costs), 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5, help="A B pairs (default 5, at least 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    figures = measure(max(3, args.pairs))
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"suite vs embedded, whole process, PYTHONDONTWRITEBYTECODE=1, {figures['pairs']} pairs")
    print(f"  not compiled (every process compiles): {figures['uncompiled_median_s']:.3f} s")
    print(f"  after compileall:                      {figures['compiled_median_s']:.3f} s")
    print(f"  pair ratio, median:                    {figures['pair_ratio_median']:.3f}")
    print(f"  pair difference, median:               {figures['pair_difference_median_s']:.3f} s")
    cpu_diff = figures["pair_cpu_difference_median_s"]
    print(f"  pair CPU difference, median:           {cpu_diff:.3f} s")
    print(f"  one compileall of {', '.join(FOLDERS)}: {figures['compileall_median_s']:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
