"""What installing the kit costs a project that does not use it: the plugin's overhead.

Runs a one-test project's whole ``pytest`` process (interpreter start, plugin
loading, collection, the test, exit) from a fresh temporary folder, once with the kit
installed as it is and once with ``-p no:osfoundry`` (the kit's pytest11 plugin not
loaded), the two interleaved in pairs (A B A B ...) so that the machine's drift hits
both alike. Prints the median wall time of each, their ratio and the median of the
pairs' ratios (the aim, issue 23: at most 1.03), and the same for the processes' CPU
time (user + system), which a loaded machine disturbs less.

``--tree DIR`` measures the package found in ``DIR`` instead (put first on
``PYTHONPATH``), e.g. an older commit's ``git archive``, so that two versions are
compared in one session.

Usage::

    python benchmarks/bench_plugin.py [--repeat 9] [--isolated] [--tree DIR] [--json]
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

_TEST = "def test_one():\n    assert 1 + 1 == 2\n"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(
    folder: Path, *extra: str, isolated: bool = False, tree: str | None = None
) -> tuple[float, float]:
    """One whole ``python -m pytest -q`` process in ``folder``: its wall and CPU seconds.

    ``isolated``: no plugin is loaded from entry points (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``),
    so ``extra`` alone says which are.
    """
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSF_", "PYTEST_"))}
    # As an installed wheel runs: from bytecode (written by the warm-up runs).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if isolated:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if tree:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, env.get("PYTHONPATH")]))
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if done.returncode != 0 or "1 passed" not in done.stdout:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"the one-test project did not pass (exit {done.returncode})")
    return wall, cpu


def measure(repeat: int, isolated: bool, tree: str | None = None) -> dict[str, float | int | bool]:
    """Interleaved runs with and without the kit's plugin; medians and their ratio."""
    if isolated:
        with_args, without_args = ("-p", "pytest_osfoundry.plugin"), ()
    else:
        with_args, without_args = (), ("-p", "no:osfoundry")
    with tempfile.TemporaryDirectory(prefix="osf-bench-plugin-") as name:
        folder = Path(name)
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (folder / "test_one.py").write_text(_TEST, encoding="utf-8")
        run_once(folder, *with_args, isolated=isolated, tree=tree)  # warm caches, write bytecode
        run_once(folder, *without_args, isolated=isolated, tree=tree)
        with_kit: list[tuple[float, float]] = []
        without: list[tuple[float, float]] = []
        for _ in range(repeat):
            with_kit.append(run_once(folder, *with_args, isolated=isolated, tree=tree))
            without.append(run_once(folder, *without_args, isolated=isolated, tree=tree))
    pairs = list(zip(with_kit, without, strict=True))
    pair_ratio = statistics.median(k[0] / b[0] for k, b in pairs)
    pair_cpu_ratio = statistics.median(k[1] / b[1] for k, b in pairs)
    kit, bare = statistics.median(w for w, _ in with_kit), statistics.median(w for w, _ in without)
    kit_cpu = statistics.median(c for _, c in with_kit)
    bare_cpu = statistics.median(c for _, c in without)
    return {
        "isolated": isolated,
        "runs": repeat,
        "with_kit_median_s": round(kit, 3),
        "without_kit_median_s": round(bare, 3),
        "ratio": round(kit / bare, 3),
        "with_kit_cpu_median_s": round(kit_cpu, 3),
        "without_kit_cpu_median_s": round(bare_cpu, 3),
        "cpu_ratio": round(kit_cpu / bare_cpu, 3),
        "pair_ratio_median": round(pair_ratio, 3),
        "pair_cpu_ratio_median": round(pair_cpu_ratio, 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs of each kind (default 9)")
    parser.add_argument(
        "--isolated",
        action="store_true",
        help="load no other installed plugin (PYTEST_DISABLE_PLUGIN_AUTOLOAD): the kit's "
        "plugin alone (-p pytest_osfoundry.plugin) against bare pytest",
    )
    parser.add_argument("--tree", help="measure the package in this folder (first on PYTHONPATH)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    figures = measure(max(7, args.repeat), args.isolated, args.tree)
    if args.json:
        print(json.dumps(figures))
        return 0
    if args.isolated:
        kit, bare = "-p pytest_osfoundry.plugin, no autoload", "bare pytest, no autoload"
    else:
        kit, bare = "with the kit installed", "with -p no:osfoundry"
    print(f"one-test project, whole pytest process, median of {figures['runs']} interleaved runs")
    print(f"  {kit + ':':<42} {figures['with_kit_median_s']:.3f} s")
    print(f"  {bare + ':':<42} {figures['without_kit_median_s']:.3f} s")
    ratio = float(figures["ratio"])
    print(f"  ratio of medians: {ratio:.3f} ({(ratio - 1) * 100:+.1f} %)")
    pair = float(figures["pair_ratio_median"])
    pair_cpu = float(figures["pair_cpu_ratio_median"])
    print(
        f"  median of the pairs' ratios: wall {pair:.3f} ({(pair - 1) * 100:+.1f} %), "
        f"CPU {pair_cpu:.3f} ({(pair_cpu - 1) * 100:+.1f} %)  (aim: at most +3 %)"
    )
    print(
        f"  CPU time, median: {figures['with_kit_cpu_median_s']:.3f} s against "
        f"{figures['without_kit_cpu_median_s']:.3f} s, ratio {figures['cpu_ratio']:.3f} "
        f"({(float(figures['cpu_ratio']) - 1) * 100:+.1f} %)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
