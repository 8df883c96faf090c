"""What installing the kit adds to an unrelated trivial pytest run, plugin by plugin.

A project that installs the kit also installs its dependencies, and pytest loads
every installed ``pytest11`` plugin in every run: Faker's (registered whenever Faker
is installed), respx's and anyio's (httpx brings anyio), besides the kit's own. This
runs a one-test project's whole ``python -m pytest`` process in rounds; each round
runs every arm once, in one order (A B C ... A B C ...), so the machine's drift hits
all alike:

* ``as installed``: every plugin loaded;
* ``-p no:osfoundry``: the kit's own plugin off;
* ``-p no:faker``: Faker's plugin off;
* ``-p no:respx -p no:anyio``: respx's and anyio's off;
* ``-p no:faker -p no:respx -p no:anyio``: all three dependencies' plugins off (what
  ``addopts`` can do for a project that uses none of their fixtures).

For each arm it prints the median of its own wall times and the medians, over the
rounds, of the difference and the ratio to ``as installed`` of the same round.

``--fresh`` builds, in a temporary folder, two new virtual environments -- one with
the kit installed from a wheel of this checkout (plain, not editable; its
dependencies from your package index), one with pytest alone (the same version) --
and adds the arm ``pytest alone`` (the second one's interpreter) to the rounds.
``--python PATH`` measures another environment's interpreter instead of this one.

Usage::

    python benchmarks/bench_startup.py [--rounds 10] [--fresh] [--python PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_TEST = "def test_one():\n    assert 1 + 1 == 2\n"
_DEPS = ("-p", "no:faker", "-p", "no:respx", "-p", "no:anyio")
ARMS: dict[str, tuple[str, ...]] = {
    "as installed": (),
    "-p no:osfoundry": ("-p", "no:osfoundry"),
    "-p no:faker": ("-p", "no:faker"),
    "-p no:respx -p no:anyio": ("-p", "no:respx", "-p", "no:anyio"),
    "-p no:faker -p no:respx -p no:anyio": _DEPS,
}
BARE = "pytest alone"


def run_once(python: str, folder: Path, extra: Sequence[str]) -> float:
    """One whole ``python -m pytest -q`` process in ``folder``: its wall seconds."""
    args = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSF_", "PYTEST_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed wheel runs: from bytecode
    start = time.perf_counter()
    done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0 or "1 passed" not in done.stdout:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"the one-test project did not pass with {' '.join(extra) or 'all'}")
    return wall


def _pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "install", "-q", *args], check=True)


def fresh_environments(where: Path) -> tuple[str, str]:
    """Two new environments under ``where``: the kit from a wheel, and pytest alone."""
    import pytest

    wheels = where / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(wheels)],
        check=True,
    )
    wheel = next(wheels.glob("pytest_osfoundry-*.whl"))
    made = []
    for name in ("kit", "bare"):
        venv.create(where / name, with_pip=True)
        made.append(where / name / "bin" / "python")
    _pip(made[0], str(wheel), f"pytest=={pytest.__version__}")
    _pip(made[1], f"pytest=={pytest.__version__}")
    return str(made[0]), str(made[1])


def measure(rounds: int, python: str, bare: str | None) -> dict[str, dict[str, float]]:
    """Rounds of every arm; per arm its median wall time and its median difference and
    ratio to ``as installed`` within a round."""
    arms = [(name, python, extra) for name, extra in ARMS.items()]
    if bare is not None:
        arms.append((BARE, bare, ()))
    with tempfile.TemporaryDirectory(prefix="osf-bench-startup-") as name:
        folder = Path(name)
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (folder / "test_one.py").write_text(_TEST, encoding="utf-8")
        for _, exe, extra in arms:  # warm the caches, write bytecode
            run_once(exe, folder, extra)
        times: dict[str, list[float]] = {arm: [] for arm, _, _ in arms}
        for _ in range(rounds):
            for arm, exe, extra in arms:
                times[arm].append(run_once(exe, folder, extra))
    full = times["as installed"]
    figures = {}
    for arm, walls in times.items():
        figures[arm] = {
            "median_s": round(statistics.median(walls), 3),
            "difference_median_s": round(
                statistics.median(w - f for w, f in zip(walls, full, strict=True)), 3
            ),
            "ratio_median": round(
                statistics.median(w / f for w, f in zip(walls, full, strict=True)), 3
            ),
        }
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="rounds (default 10, at least 5)")
    parser.add_argument("--fresh", action="store_true", help="measure two new environments")
    parser.add_argument("--python", help="the interpreter of the environment to measure")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    python, bare = args.python or sys.executable, None
    with tempfile.TemporaryDirectory(prefix="osf-bench-venvs-") as where:
        if args.fresh:
            python, bare = fresh_environments(Path(where))
        figures = measure(max(5, args.rounds), python, bare)
    if args.json:
        print(json.dumps(figures))
        return 0
    rounds = max(5, args.rounds)
    print(f"one-test project, whole pytest process, {rounds} rounds (medians)")
    print(f"  {'arm':<38} {'wall':>8} {'minus as installed':>19} {'ratio':>7}")
    for arm, row in figures.items():
        print(
            f"  {arm:<38} {row['median_s']:>7.3f}s {row['difference_median_s']:>+18.3f}s "
            f"{row['ratio_median']:>7.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
