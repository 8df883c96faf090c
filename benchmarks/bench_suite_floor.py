"""The conformance suite against its floors, side by side (issue 23, item 1).

Two paired measurements, each A B A B ... in this one invocation:

* **latency hidden**: the whole suite (a fresh ``python -m pytest`` process, default
  ``--osf-concurrency``) against ``osfoundry-fake serve --latency 0.03`` (every answer
  30 ms late) minus the same suite against ``osfoundry-fake serve`` without the
  delay; the median of the pairs' differences, whole process and pytest's session.
  Two floors are printed beside it (aim: at most 0.5 s): the longest chain of
  requests of one check times the delay (the JSON report's maximum ``requests``
  times 0.03 s: the floor with unbounded concurrency), and the throughput floor at
  the concurrency used, the suite's default unless ``--concurrency`` says another
  (every request of the run times the delay, over the concurrency: a check sends its
  requests one after another, so no schedule of that many checks at a time takes
  less, the race inside one check aside);
* **the suite's own cost**: the suite against ``--osf-target=embedded`` against a
  pytest run of one trivial test in the same environment; the median of the pairs'
  ratios (aim: at most 1.8);
* **what each saving of the main job pays** (``--only parts``, not part of the
  default): the suite against ``embedded`` as it runs, against the same with one
  saving undone by a plugin of this benchmark, each saving paired on its own; the
  median of the pairs' ratios and differences. The saving: the fake relay left
  unloaded by a server run (``relay/__init__.py``; undone by importing it). It says
  whether the code that buys it still pays for itself;
* **cold start** (``--only cold``, not part of the default): the suite against
  ``embedded`` with the rule book imported by Python's own import system (as it runs)
  and through pytest's assertion rewriting (as before issue 42, undone by a plugin of
  this benchmark that imports the check modules first, through pytest's hook), each
  cold and warm, in rounds (new cold, old cold, new warm, old warm, ...). Cold: what a
  fresh CI job or an image with ``PYTHONDONTWRITEBYTECODE=1`` has after installing
  the kit, Python's compiled modules (pip compiles them at install) but none of
  pytest's rewritten ones (removed before each cold run, and none written); warm:
  both caches. The medians of each arm and of the pairs' differences, wall and CPU
  (the process's user + system time, steadier on a shared machine).

The delayed server runs with ``--workers 128`` (``bench_latency.SERVER_WORKERS``), as
does the undelayed one: the delay holds no server thread (see
``bench_latency.SERVER_WORKERS``), and threads outnumbering the requests answered at
once keep the server from setting the pace.

Usage::

    python benchmarks/bench_suite_floor.py [--pairs 5] [--latency 0.03] [--concurrency N]
        [--only latency|embedded|parts|cold] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_latency import _CREDS, far_server, run_suite

from pytest_osfoundry.conformance.suite._options import Settings

DEFAULT_CONCURRENCY = Settings().osf_concurrency
"""``--osf-concurrency``'s default, which every run here uses unless told another."""

_TEST = "def test_one():\n    assert 1 + 1 == 2\n"


def trivial_run(env: dict[str, str]) -> float:
    """One whole pytest process running one trivial test: its wall seconds."""
    with tempfile.TemporaryDirectory(prefix="osf-bench-trivial-") as name:
        folder = Path(name)
        (folder / "test_one.py").write_text(_TEST, encoding="utf-8")
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        start = time.perf_counter()
        done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit("the trivial pytest run failed")
    return wall


def _env(base: dict[str, str], info: dict[str, Any]) -> dict[str, str]:
    return {**base, **{f"OSF_{k.upper()}": str(info[k]) for k in _CREDS}}


def _writing(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a warm-up run that writes Python's and pytest's caches (compiled
    modules, the rewritten plugin modules) even where ``PYTHONDONTWRITEBYTECODE`` is
    set, as ``.ci/run`` does once: without them every measured run compiles or
    rewrites anew what changed since they were last written, a cost no user's run
    pays twice."""
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure_latency(pairs: int, latency: float, concurrency: int) -> dict[str, Any]:
    """The suite against the delayed server minus the same suite against the undelayed
    one, pair by pair; medians of the pairs."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("OSF_")}
    far_runs: list[dict[str, Any]] = []
    near_runs: list[dict[str, Any]] = []
    with far_server(latency) as far, far_server(0.0) as near:
        far_env, near_env = _env(base, far), _env(base, near)
        run_suite(near["mcp_url"], concurrency, _writing(near_env))  # warm caches
        for _ in range(pairs):
            far_runs.append(run_suite(far["mcp_url"], concurrency, far_env))
            near_runs.append(run_suite(near["mcp_url"], concurrency, near_env))
    both = list(zip(far_runs, near_runs, strict=True))
    chain = max(r["requests_max"] for r in far_runs)
    total = max(r["requests_total"] for r in far_runs)
    return {
        "pairs": pairs,
        "latency_s": latency,
        "concurrency": concurrency,
        "delayed_minus_undelayed_wall_s": round(
            statistics.median(a["wall_s"] - b["wall_s"] for a, b in both), 3
        ),
        "delayed_minus_undelayed_session_s": round(
            statistics.median(a["session_s"] - b["session_s"] for a, b in both), 3
        ),
        "longest_chain_requests": chain,
        "floor_s": round(chain * latency, 3),
        "requests_total": total,
        "throughput_floor_s": round(total * latency / concurrency, 3),
    }


def measure_embedded(pairs: int, concurrency: int) -> dict[str, Any]:
    """The suite against ``embedded`` against a trivial run, pair by pair; medians."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("OSF_")}
    run_suite("embedded", concurrency, _writing(base))  # warm caches
    trivial_run(_writing(base))
    embedded, trivial = _paired(
        pairs,
        lambda: float(run_suite("embedded", concurrency, base)["wall_s"]),
        lambda: trivial_run(base),
    )
    return {
        "pairs": pairs,
        "concurrency": concurrency,
        "embedded_wall_median_s": round(statistics.median(embedded), 3),
        "trivial_wall_median_s": round(statistics.median(trivial), 3),
        "embedded_over_trivial": round(_median_ratio(embedded, trivial), 2),
    }


def _paired(
    pairs: int, first: Callable[[], float], second: Callable[[], float]
) -> tuple[list[float], list[float]]:
    """``first`` and ``second`` timed in turn, ``pairs`` times (A B A B ...)."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(pairs):
        a.append(first())
        b.append(second())
    return a, b


def _median_ratio(a: list[float], b: list[float]) -> float:
    """The median of the pairs' ratios ``a / b``."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


PARTS: dict[str, str] = {
    "the fake relay left unloaded": "import pytest_osfoundry.relay._desktop\n",
}
"""Each saving of the main job, and the source of a pytest plugin that undoes it (the
import the saving spares)."""


def measure_parts(pairs: int, concurrency: int) -> dict[str, Any]:
    """The suite against ``embedded`` as it runs, against it with each saving undone."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("OSF_")}
    figures: dict[str, Any] = {"pairs": pairs, "concurrency": concurrency, "parts": {}}
    run_suite("embedded", concurrency, _writing(base))  # warm caches
    with tempfile.TemporaryDirectory(prefix="osf-bench-plugin-") as folder:
        for n, (part, source) in enumerate(PARTS.items()):
            module = f"osf_bench_undo_{n}"
            (Path(folder) / f"{module}.py").write_text(source, encoding="utf-8")
            paths = [folder, *filter(None, [base.get("PYTHONPATH")])]
            addopts = " ".join(filter(None, [base.get("PYTEST_ADDOPTS"), f"-p {module}"]))
            undone = {**base, "PYTHONPATH": os.pathsep.join(paths), "PYTEST_ADDOPTS": addopts}
            run_suite("embedded", concurrency, _writing(undone))
            kept, without = _paired(
                pairs,
                lambda: float(run_suite("embedded", concurrency, base)["wall_s"]),
                lambda env=undone: float(run_suite("embedded", concurrency, env)["wall_s"]),
            )
            figures["parts"][part] = {
                "wall_median_s": round(statistics.median(kept), 3),
                "undone_wall_median_s": round(statistics.median(without), 3),
                "ratio": round(_median_ratio(kept, without), 3),
                "difference_s": round(
                    statistics.median(a - b for a, b in zip(kept, without, strict=True)), 3
                ),
            }
    return figures


REWRITTEN_RULEBOOK = """import importlib

from pytest_osfoundry.conformance.suite._layout import check_modules

for name in check_modules():
    importlib.import_module(name)
"""
"""A pytest plugin that imports the server checks through pytest's assertion rewriting
(loaded with ``-p`` after pytest installs its hook): the rule book as it was imported
before issue 42; the suite then finds them imported."""


def _timed(args: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """One whole process: its wall seconds and its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"a suite run failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _drop_rewritten(book: Path) -> None:
    """Remove pytest's rewritten modules of the rule book (``*.pyc`` tagged ``pytest``)."""
    for pyc in book.rglob("__pycache__/*-pytest-*.pyc"):
        pyc.unlink()


def measure_cold(pairs: int, concurrency: int) -> dict[str, Any]:
    """The suite against ``embedded``, the rule book imported as it runs (new) and
    rewritten by pytest (old), each cold and warm, in rounds; medians."""
    import pytest_osfoundry
    from pytest_osfoundry.conformance.suite._layout import rulebook_dir

    book = rulebook_dir()
    base = {k: v for k, v in os.environ.items() if not k.startswith("OSF_")}
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    args += ["--osf-target=embedded", f"--osf-concurrency={concurrency}"]
    times: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="osf-bench-cold-") as name:
        folder = Path(name)
        (folder / "osf_bench_rewritten.py").write_text(REWRITTEN_RULEBOOK, encoding="utf-8")
        paths = [name, *filter(None, [base.get("PYTHONPATH")])]
        old = {**base, "PYTHONPATH": os.pathsep.join(paths)}
        arms: dict[str, tuple[list[str], dict[str, str], bool]] = {
            "new cold": (args, {**base, "PYTHONDONTWRITEBYTECODE": "1"}, True),
            "old cold": (
                [*args, "-p", "osf_bench_rewritten"],
                {**old, "PYTHONDONTWRITEBYTECODE": "1"},
                True,
            ),
            "new warm": (args, base, False),
            "old warm": ([*args, "-p", "osf_bench_rewritten"], old, False),
        }
        # As an install does: Python's compiled modules of the kit and the rule book.
        for tree in {Path(pytest_osfoundry.__file__).parent, book}:
            compileall.compile_dir(str(tree), quiet=1)
        for arm, env, _ in arms.values():
            _timed(arm, env, folder)  # warm: both caches written once
        for _ in range(pairs):
            for label, (arm, env, cold) in arms.items():
                if cold:
                    _drop_rewritten(book)
                times.setdefault(label, []).append(_timed(arm, env, folder))

    def median(label: str, kind: int) -> float:
        return round(statistics.median(t[kind] for t in times[label]), 3)

    def saved(old_label: str, new_label: str, kind: int) -> float:
        pairs_ = zip(times[old_label], times[new_label], strict=True)
        return round(statistics.median(o[kind] - n[kind] for o, n in pairs_), 3)

    return {
        "pairs": pairs,
        "concurrency": concurrency,
        "wall_median_s": {label: median(label, 0) for label in times},
        "cpu_median_s": {label: median(label, 1) for label in times},
        "cold_saved_wall_s": saved("old cold", "new cold", 0),
        "cold_saved_cpu_s": saved("old cold", "new cold", 1),
        "warm_saved_wall_s": saved("old warm", "new warm", 0),
        "warm_saved_cpu_s": saved("old warm", "new warm", 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5, help="pairs of each kind (at least 3)")
    parser.add_argument("--latency", type=float, default=0.03, help="seconds added per answer")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"--osf-concurrency of every suite run (default {DEFAULT_CONCURRENCY}, the suite's)",
    )
    parser.add_argument(
        "--only",
        choices=("latency", "embedded", "parts", "cold"),
        help="measure one of them (default: latency and embedded)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    if not 0 < args.latency <= 1:
        parser.error(f"--latency must be in (0, 1] seconds, got {args.latency}")
    if args.concurrency < 1:
        parser.error(f"--concurrency must be at least 1, got {args.concurrency}")
    pairs = max(3, args.pairs)
    figures: dict[str, Any] = {}
    if args.only in (None, "latency"):
        figures["latency"] = measure_latency(pairs, args.latency, args.concurrency)
    if args.only in (None, "embedded"):
        figures["embedded"] = measure_embedded(pairs, args.concurrency)
    if args.only == "parts":
        figures["parts"] = measure_parts(pairs, args.concurrency)
    if args.only == "cold":
        figures["cold"] = measure_cold(pairs, args.concurrency)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"suite at --osf-concurrency {args.concurrency}, {pairs} pairs (medians of the pairs)")
    if "latency" in figures:
        f = figures["latency"]
        ms = f["latency_s"] * 1000
        print(
            f"  {ms:g} ms per answer minus none: {f['delayed_minus_undelayed_wall_s']:+.3f} s "
            f"whole process, {f['delayed_minus_undelayed_session_s']:+.3f} s session (aim: at "
            f"most +0.5 s; floor {f['floor_s']:.2f} s = {f['longest_chain_requests']} requests "
            f"in a row; at {f['concurrency']} at once {f['throughput_floor_s']:.2f} s = "
            f"{f['requests_total']} requests / {f['concurrency']})"
        )
    if "embedded" in figures:
        f = figures["embedded"]
        print(
            f"  embedded against one trivial test: {f['embedded_over_trivial']:.2f}x "
            f"({f['embedded_wall_median_s']:.2f} s against {f['trivial_wall_median_s']:.2f} s; "
            "aim: at most 1.8x)"
        )
    if "cold" in figures:
        f = figures["cold"]
        for label, wall in f["wall_median_s"].items():
            print(f"  {label}: {wall:.2f} s wall, {f['cpu_median_s'][label]:.2f} s CPU")
        print(
            f"  rule book not rewritten, saved cold: {f['cold_saved_wall_s']:+.3f} s wall, "
            f"{f['cold_saved_cpu_s']:+.3f} s CPU; warm: {f['warm_saved_wall_s']:+.3f} s "
            f"wall, {f['warm_saved_cpu_s']:+.3f} s CPU"
        )
    for part, f in figures.get("parts", {}).get("parts", {}).items():
        print(
            f"  {part}: {f['ratio']:.3f}x, {f['difference_s']:+.3f} s against it undone "
            f"({f['wall_median_s']:.2f} s against {f['undone_wall_median_s']:.2f} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
