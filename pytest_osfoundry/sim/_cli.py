"""``osfoundry-sim``: the seed's experiments, reproduced from the kit's own components.

Usage::

    osfoundry-sim [EXPERIMENT ...] [--runs N] [--seed S] [--json] [--jobs N]
                  [--poll-interval S] [--control-poll S] [--duration-median S]
                  [--duration-sigma X] [--strategy SPEC ...] [--plot PATH] ...

With no experiment named, all of them run (``pickup fanout polling cancel
idempotency offline outbox truncation access``). Text output puts each figure beside
the seed's, with the difference; ``--json`` prints one object instead (documented in
docs/experiments.md). ``--fit-sigma`` fits the Graph durations' lognormal spread to
the seed's fan-out table and prints the grid. Exit status: 0 on success, 2 for bad
arguments, 1 when a simulation could not read a figure from the components.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_osfoundry._cli_types import number, positive_int
from pytest_osfoundry.client._internal import PROTOCOL_CHOICES
from pytest_osfoundry.sim._params import DEFAULT_RUNS, DEFAULT_STRATEGIES, SIM_PROTOCOL, SimParams
from pytest_osfoundry.sim._tasks import NAMES, SimulationError
from pytest_osfoundry.world import SEED_SIGMA

__all__ = ["build_parser", "main"]

PROG = "osfoundry-sim"

#: The image formats ``--plot`` writes (by suffix), as matplotlib's Agg backend names them.
PLOT_FORMATS = (
    "eps",
    "jpeg",
    "jpg",
    "pdf",
    "pgf",
    "png",
    "ps",
    "svg",
    "svgz",
    "tif",
    "tiff",
    "webp",
)

#: What ``--fit-sigma`` took at the seed's run counts on the project's 2-core machine.
FIT_SECONDS = 76


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Reproduce the seed's experiments (conformance/spec.md#figures) from the kit's "
            "fake server, "
            "relay, engine and agents on a virtual clock, and print each table beside "
            "the seed's figures."
        ),
    )
    parser.add_argument(
        "experiments",
        nargs="*",
        metavar="EXPERIMENT",
        help=f"which experiments to run (default: all): {', '.join(NAMES)}",
    )
    parser.add_argument(
        "--runs",
        type=positive_int,
        default=None,
        help="runs per statistical experiment (default: the seed's: "
        + ", ".join(f"{k} {v}" for k, v in DEFAULT_RUNS.items())
        + "; fanout: N single runs and N/3 batches of 3 and of 5)",
    )
    parser.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=1,
        help="worker processes (default 1; results do not depend on it)",
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOL_CHOICES,
        default=SIM_PROTOCOL,
        metavar="REV",
        help=f"MCP revision the simulated agents speak: {', '.join(PROTOCOL_CHOICES)} "
        f"(default {SIM_PROTOCOL}; no figure depends on it, and it is the cheapest to run)",
    )
    parser.add_argument(
        "--full-stack",
        action="store_true",
        help="send every simulated call of the many-run experiments through JSON-RPC, "
        "HTTP framing and the wire checks (slower; the same figures)",
    )
    model = parser.add_argument_group("model parameters")
    model.add_argument(
        "--poll-interval",
        type=number,
        default=20.0,
        metavar="S",
        help="seconds between relay passes (default 20)",
    )
    model.add_argument(
        "--control-poll",
        type=number,
        default=3.0,
        metavar="S",
        help="seconds between the relay's control polls (default 3)",
    )
    model.add_argument(
        "--duration-median",
        type=number,
        default=60.0,
        metavar="S",
        help="median Graph duration (default 60)",
    )
    model.add_argument(
        "--duration-sigma",
        type=number,
        default=SEED_SIGMA,
        metavar="X",
        help=f"lognormal spread of Graph durations (default {SEED_SIGMA}, "
        "fitted to the seed's fan-out table)",
    )
    model.add_argument(
        "--duration-min",
        type=number,
        default=5.0,
        metavar="S",
        help="shortest Graph duration (default 5)",
    )
    model.add_argument(
        "--stop-latency",
        type=number,
        default=0.5,
        metavar="S",
        help="seconds from the engine's cancel to the run stopping (default 0.5)",
    )
    model.add_argument(
        "--strategy",
        action="append",
        default=None,
        metavar="SPEC",
        help="a poll strategy for the polling table, repeatable; replaces the seed's six. "
        "A table name ('every 5 s', 'backoff 2, 4, 8 … 30 s', 'wait 20 s, then every 10 s') "
        "or 'package.module:function' returning seconds to wait from (attempt, elapsed)",
    )
    model.add_argument(
        "--cancel-window",
        type=number,
        default=40.0,
        metavar="S",
        help="cancel at a uniform 0..S s after queueing (default 40)",
    )
    model.add_argument(
        "--drop-replies",
        type=number,
        default=0.3,
        metavar="F",
        help="fraction of replies dropped in the idempotency runs (default 0.3)",
    )
    model.add_argument(
        "--offline-seconds",
        type=number,
        default=600.0,
        metavar="S",
        help="how long the desktop is offline (default 600)",
    )
    model.add_argument(
        "--scenario-duration",
        type=number,
        default=25.6,
        metavar="S",
        help="fixed Graph duration of the offline, outbox and truncation scenarios (default 25.6)",
    )
    parser.add_argument(
        "--plot",
        metavar="PATH",
        default=None,
        help="also draw calls per run against lateness for the strategies "
        "(needs matplotlib: pip install matplotlib, or the kit's [plot] extra)",
    )
    parser.add_argument(
        "--fit-sigma",
        action="store_true",
        help="fit the lognormal spread to the seed's fan-out table "
        "(grid 0.70-0.95, master seeds S, S+1, S+2) instead of running "
        f"the experiments; slow: about {FIT_SECONDS} s at the seed's run counts "
        "(--runs 300 for a rough fit in seconds)",
    )
    return parser


def _plot_problem(path: str) -> str | None:
    """Why ``--plot PATH`` cannot be written, found before the simulation runs."""
    target = Path(path)
    suffix = target.suffix.lower().lstrip(".")
    if suffix not in PLOT_FORMATS:
        return (
            f"--plot {path}: cannot tell the image format from {target.suffix or 'no suffix'!r}; "
            f"name a file ending in one of .{', .'.join(PLOT_FORMATS)}"
        )
    if target.is_dir():
        return f"--plot {path} is a folder; name an image file in it"
    folder = target.parent
    if not folder.is_dir():
        return f"--plot {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK):
        return f"--plot {path}: cannot write in {folder} (permission denied)"
    if importlib.util.find_spec("matplotlib") is None:
        return (
            "--plot needs matplotlib: pip install matplotlib "
            "(or the kit's [plot] extra: pip install -e '.[plot]' in its clone)"
        )
    return None


def _importable_from_here(strategies: Sequence[str] | None) -> None:
    """Let ``--strategy mypkg.polling:adaptive`` find a package in the current folder,
    as ``python -m`` and pytest would (the console script's path does not hold it)."""
    if strategies and any(":" in spec for spec in strategies):
        here = os.getcwd()
        if here not in sys.path and "" not in sys.path:
            sys.path.insert(0, here)


def _params(args: argparse.Namespace) -> SimParams:
    _importable_from_here(args.strategy)
    return SimParams(
        seed=args.seed,
        runs=args.runs,
        poll_interval=args.poll_interval,
        control_poll=args.control_poll,
        duration_median=args.duration_median,
        duration_sigma=args.duration_sigma,
        duration_min=args.duration_min,
        stop_latency=args.stop_latency,
        strategies=tuple(args.strategy) if args.strategy else DEFAULT_STRATEGIES,
        cancel_window=args.cancel_window,
        drop_replies=args.drop_replies,
        offline_seconds=args.offline_seconds,
        scenario_duration=args.scenario_duration,
        protocol=args.protocol,
        full_stack=args.full_stack,
    )


def _fit(params: SimParams, jobs: int, as_json: bool) -> int:
    from pytest_osfoundry.sim._fit import fit_sigma

    best, points = fit_sigma(params, jobs=jobs)
    if as_json:
        data: dict[str, Any] = {
            "best_sigma": best,
            "grid": [{"sigma": p.sigma, "loss": p.loss, "fanout": list(p.rows)} for p in points],
        }
        print(json.dumps(data, ensure_ascii=False))
        return 0
    print("sigma   loss     " + "   ".join(f"{k} last median / p95" for k in params.fanout))
    for p in points:
        cells = "   ".join(f"{r['last_median']:7.1f} / {r['last_p95']:6.1f}" for r in p.rows)
        mark = "  <- best" if p.sigma == best else ""
        print(f"{p.sigma:.2f}   {p.loss:.5f}  {cells}{mark}")
    print(f"best sigma: {best:.2f}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``osfoundry-sim`` with ``argv`` (``sys.argv[1:]`` by default); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as stop:  # argparse has printed the usage and the error
        return stop.code if isinstance(stop.code, int) else 2
    unknown = [name for name in args.experiments if name not in NAMES]
    if unknown:
        parser.print_usage(sys.stderr)
        print(
            f"{PROG}: error: unknown experiment(s) {', '.join(unknown)}; "
            f"choose from {', '.join(NAMES)}",
            file=sys.stderr,
        )
        return 2
    try:
        params = _params(args)
    except ValueError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    if args.plot is not None and args.experiments and "polling" not in args.experiments:
        print(f"{PROG}: error: --plot draws the polling experiment; add 'polling'", file=sys.stderr)
        return 2
    problem = _plot_problem(args.plot) if args.plot is not None else None
    if problem is None and args.fit_sigma and args.experiments:
        problem = "--fit-sigma runs its own fan-out grid and no experiment; leave out " + ", ".join(
            repr(name) for name in args.experiments
        )
    if problem is not None:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2
    if args.fit_sigma and args.runs is None:
        print(
            f"{PROG}: fitting sigma at the seed's run counts takes about {FIT_SECONDS} s "
            "(--runs 300 for a rough fit in seconds)",
            file=sys.stderr,
        )
    from pytest_osfoundry.sim._report import render
    from pytest_osfoundry.sim._runner import simulate

    try:
        if args.fit_sigma:
            return _fit(params, args.jobs, args.json)
        run = simulate(args.experiments, params, jobs=args.jobs)
    except SimulationError as err:
        print(f"{PROG}: simulation failed: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(run.to_json(), ensure_ascii=False))
    else:
        sys.stdout.write(render(run))
    if args.plot is not None:
        from pytest_osfoundry.sim._plot import PlotUnavailable, plot_polling

        try:
            path = plot_polling(run.experiments["polling"], args.plot)
        except (PlotUnavailable, OSError) as err:
            print(f"{PROG}: error: {err}", file=sys.stderr)
            return 2
        print(f"{PROG}: plot written to {path}", file=sys.stderr)
    return 0
