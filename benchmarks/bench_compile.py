"""What .ci/run's two caching steps save each test process under PYTHONDONTWRITEBYTECODE.

With ``PYTHONDONTWRITEBYTECODE=1`` (common in CI containers) nothing is cached by the
processes themselves: an editable install's modules are compiled anew by every Python
process, and pytest rewrites the asserts of every installed plugin's package (Faker,
Hypothesis, anyio, respx, xdist) and of the rule book's checks in every pytest
process. ``.ci/run`` therefore, once after the install, compiles the project
(``python -m compileall``) and runs one collection with writing on (which writes
pytest's rewrite cache; later processes read it whatever the variable says).

This runs the conformance suite against ``embedded`` (a whole ``python -m pytest``
process, ``PYTHONDONTWRITEBYTECODE=1``) in rounds, A B C A B C ...:

* A: nothing cached (this checkout's ``__pycache__`` folders and pytest's rewrite
  caches in this environment's site-packages removed), as a fresh CI clone;
* B: after ``compileall`` alone;
* C: after ``compileall`` and the priming collection (what ``.ci/run`` does).

Prints each arm's median and the medians of the rounds' differences to A (wall and
CPU of the process), and what the two steps cost once. It deletes only
``__pycache__`` folders of this checkout and ``*-pytest-*.pyc`` files (pytest's own
rewrite cache, rebuilt on demand) of this environment.

Usage::

    python benchmarks/bench_compile.py [--rounds 5] [--json]
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
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("pytest_osfoundry", "conformance", "tests", "examples")
PRIME = ["-m", "pytest", "--collect-only", "-qq", "-p", "no:cacheprovider", "--osf-target=embedded"]


def _clear() -> None:
    """Remove the checkout's bytecode and pytest's rewrite caches of this environment."""
    for folder in FOLDERS:
        for cache in (ROOT / folder).rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
    site = Path(sysconfig.get_paths()["purelib"])
    for rewritten in site.rglob("*-pytest-*.pyc"):
        rewritten.unlink(missing_ok=True)


def _env(write: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSF_", "PYTEST_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "" if write else "1"
    return env


def _timed(args: list[str], write: bool = False) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=ROOT, env=_env(write), capture_output=True, check=True)
    return time.perf_counter() - start


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _suite() -> tuple[float, float]:
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    args.append("--osf-target=embedded")
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=_env(False), capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"the suite against embedded failed (exit {done.returncode})")
    return wall, cpu


def measure(rounds: int) -> dict[str, float | int]:
    """Rounds of the three arms; medians and the rounds' differences to A."""
    arms: dict[str, list[tuple[float, float]]] = {"A": [], "B": [], "C": []}
    compile_s: list[float] = []
    prime_s: list[float] = []
    for _ in range(rounds):
        _clear()
        arms["A"].append(_suite())
        compile_s.append(_timed([sys.executable, "-m", "compileall", "-q", *FOLDERS]))
        arms["B"].append(_suite())
        prime_s.append(_timed([sys.executable, *PRIME], write=True))
        arms["C"].append(_suite())

    def diff(arm: str, i: int) -> float:
        return round(
            statistics.median(a[i] - x[i] for a, x in zip(arms["A"], arms[arm], strict=True)), 3
        )

    return {
        "rounds": rounds,
        "nothing_cached_wall_s": round(statistics.median(w for w, _ in arms["A"]), 3),
        "compiled_wall_s": round(statistics.median(w for w, _ in arms["B"]), 3),
        "compiled_and_primed_wall_s": round(statistics.median(w for w, _ in arms["C"]), 3),
        "compiled_saves_wall_s": diff("B", 0),
        "compiled_saves_cpu_s": diff("B", 1),
        "both_save_wall_s": diff("C", 0),
        "both_save_cpu_s": diff("C", 1),
        "ratio_nothing_over_both": round(
            statistics.median(a[0] / c[0] for a, c in zip(arms["A"], arms["C"], strict=True)), 3
        ),
        "compileall_s": round(statistics.median(compile_s), 3),
        "priming_collection_s": round(statistics.median(prime_s), 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="A B C rounds (default 5, >= 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    f = measure(max(3, args.rounds))
    if args.json:
        print(json.dumps(f))
        return 0
    print(f"suite vs embedded, whole process, PYTHONDONTWRITEBYTECODE=1, {f['rounds']} rounds")
    print(f"  A nothing cached:              {f['nothing_cached_wall_s']:.3f} s")
    print(
        f"  B after compileall:            {f['compiled_wall_s']:.3f} s "
        f"(saves {f['compiled_saves_wall_s']:+.3f} s wall, {f['compiled_saves_cpu_s']:+.3f} s CPU)"
    )
    print(
        f"  C after compileall + priming:  {f['compiled_and_primed_wall_s']:.3f} s "
        f"(saves {f['both_save_wall_s']:+.3f} s wall, {f['both_save_cpu_s']:+.3f} s CPU; "
        f"A/C {f['ratio_nothing_over_both']:.2f}x)"
    )
    print(
        f"  once: compileall {f['compileall_s']:.2f} s, priming collection "
        f"{f['priming_collection_s']:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
