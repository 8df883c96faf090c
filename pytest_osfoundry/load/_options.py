"""The load's own command-line options, added to Locust's (one group, "osfoundry-load").

Every duration is in *system seconds* (as the spec states them) and runs at
``--time-scale``. The master reads them; Locust hands them to its workers with the
job, so a worker needs only ``--worker`` and ``--master-host``.
"""

from __future__ import annotations

import argparse
from typing import Any

from pytest_osfoundry._cli_types import positive_int
from pytest_osfoundry.agent import parse_strategy

__all__ = ["add_options"]

#: The seed's advice for a minute-long Graph: first poll after one pass, then every 10 s.
DEFAULT_STRATEGY = "wait 20 s, then every 10 s"


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction from 0 to 1, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction from 0 to 1, got {text!r}")
    return value


def _scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value <= 1000:
        raise argparse.ArgumentTypeError(f"expected a number > 0 and at most 1000, got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value


def _positive_seconds(text: str) -> float:
    value = _seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text!r}")
    return value


def _strategy(text: str) -> str:
    try:
        parse_strategy(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def add_options(parser: Any) -> None:
    """Add the load's options to Locust's ``parser``."""
    group = parser.add_argument_group(
        "osfoundry-load", "the kit's agents and desktops against an osFoundry server"
    )
    group.add_argument(
        "--target", metavar="ACCOUNTS_FILE", default="",
        help="the server and its accounts: a JSON file (osfoundry-fake serve --accounts N "
        "writes one; docs/load.md gives the format). Read by the master only",
    )
    group.add_argument(
        "--desktops", type=positive_int, default=0, metavar="N",
        help="desktops to run, one per owner (default: one for every account)",
    )
    group.add_argument(
        "--agents", type=positive_int, default=0, metavar="N",
        help="agents to run, spread over the desktops' owners (default: one per agent token "
        "of those owners). -u defaults to desktops + agents",
    )
    group.add_argument(
        "--time-scale", type=_scale, default=1.0, metavar="F",
        help="run the system's rhythm at F times its durations (1: real time, a pass every "
        "20 s; 0.025: 40 times faster, a pass every 0.5 s)",
    )
    group.add_argument(
        "--strategy", type=_strategy, default=DEFAULT_STRATEGY, metavar="NAME",
        help=f"the agents' poll strategy, a seed name or module:function (default "
        f"'{DEFAULT_STRATEGY}')",
    )
    group.add_argument(
        "--cancel-share", type=_fraction, default=0.1, metavar="F",
        help="share of runs an agent cancels, 0-40 s after queueing (default 0.1)",
    )
    group.add_argument(
        "--lost-replies", type=_fraction, default=0.02, metavar="F",
        help="share of the agents' MCP replies dropped after the server answered, so agents "
        "retry with the same key (default 0.02; counted as failures in the statistics)",
    )
    group.add_argument(
        "--graph-median", type=_positive_seconds, default=60.0, metavar="SECONDS",
        help="the Graphs' median duration (default 60, the seed's; lognormal, at least 5 s "
        "or the median if shorter)",
    )
    group.add_argument(
        "--think", type=_seconds, default=0.0, metavar="SECONDS",
        help="an agent's pause between the end of one run and its next (default 0)",
    )
    group.add_argument(
        "--drain", type=_seconds, default=900.0, metavar="SECONDS",
        help="after the run time, how long the desktops keep running and the accounting "
        "waits for every run to end (default 900)",
    )
    group.add_argument(
        "--report-json", default="", metavar="PATH", help="write the accounting as JSON"
    )
    group.add_argument(
        "--report-md", default="", metavar="PATH", help="write the accounting as Markdown"
    )
