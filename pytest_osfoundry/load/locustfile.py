"""The locustfile ``osfoundry-load`` runs: its options, its users, its sides.

``osfoundry-load`` hands this file to Locust (``-f``), so every Locust option works
as Locust documents it (``--headless``, ``-t``, ``--master``, ``--worker``,
``--master-host``, ``--expect-workers``, the web UI ...); this file adds the load's own
options (``osfoundry-load --help`` lists them under "osfoundry-load") and, at Locust's
``init``, sets each user class's count, runs the preflight on the master
(``_preflight``: every URL answers, every token the run uses is accepted in its role,
or the load ends with exit status 2 before any user starts) and wires the process's
sides (``_coordination``): a worker's (its users' grants and
ledger), the master's (the handout, the drain, the accounting), or both in a run
without workers.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gevent.pool import Pool
from locust import events
from locust.env import Environment
from locust.runners import LocalRunner, MasterRunner

from pytest_osfoundry._process_time import refuse_frozen_time
from pytest_osfoundry.load._accounts import AccountsError, Handout, read_target
from pytest_osfoundry.load._coordination import MasterSide, sides
from pytest_osfoundry.load._options import add_options
from pytest_osfoundry.load._preflight import PreflightFailed, checks_of, preflight
from pytest_osfoundry.load._rhythm import Rhythm
from pytest_osfoundry.load._transport import wire
from pytest_osfoundry.load._users import AgentUser, DesktopUser

__all__ = ["AgentUser", "DesktopUser"]

#: Credentials the preflight tries at once.
PREFLIGHT_CONCURRENCY = 16


def rhythm_of(options: Any) -> Rhythm:
    """The load's ``Rhythm`` from its options."""
    return Rhythm(
        scale=options.time_scale,
        graph_median=options.graph_median,
        graph_minimum=min(options.graph_median, 5.0),
        think=options.think,
        cancel_share=options.cancel_share,
    )


@events.init_command_line_parser.add_listener
def _options(parser: argparse.ArgumentParser, **_: Any) -> None:
    add_options(parser)


#: The desktops' logger: a line per pass and per command of every desktop (INFO).
RELAY_LOGGER = "pytest_osfoundry.relay"


@events.init.add_listener
def _init(environment: Environment, **_: Any) -> None:
    refuse_frozen_time()
    options = environment.parsed_options
    runner = environment.runner
    if options is None or runner is None:
        return
    if str(getattr(options, "loglevel", "INFO")).upper() != "DEBUG":
        # Thousands of desktops' passes are no log to read: their warnings stay.
        logging.getLogger(RELAY_LOGGER).setLevel(logging.WARNING)
    master: Callable[[], MasterSide] | None = None
    if isinstance(runner, (MasterRunner, LocalRunner)):
        master = _master(environment, options)
    sides(environment, lambda: rhythm_of(environment.parsed_options), master)


def _clear_reports(options: Any) -> None:
    """Remove what an earlier run left at this run's report paths, before anything can
    stop this one: a run that ends without its accounting (a bad accounts file, a failed
    preflight, an interrupt before the load) leaves no report, never an older run's
    verdict to be read as its own."""
    for flag, path in (("--report-json", options.report_json),
                       ("--report-md", options.report_md)):
        if not path:
            continue
        try:
            Path(path).unlink()
        except FileNotFoundError:
            pass
        except OSError as err:
            raise SystemExit(f"osfoundry-load: {flag} {path}: cannot replace it "
                             f"({err.strerror or err})") from None


def _master(environment: Environment, options: Any) -> Callable[[], MasterSide]:
    """Read the target, set each user class's count, run the preflight; the master's
    side, to be made."""
    _clear_reports(options)
    if not options.target:
        raise SystemExit("osfoundry-load: --target ACCOUNTS_FILE is required (on the master)")
    try:
        target = read_target(options.target)
        desktops = options.desktops or len(target.accounts)
        handout = Handout(target, desktops)
    except AccountsError as err:
        raise SystemExit(f"osfoundry-load: {err}") from None
    agents = options.agents or sum(len(a.agent_tokens) for a in target.accounts[:desktops])
    try:
        preflight(target, checks_of(desktops, handout.agents_of(agents)), wire,
                  mapper=Pool(PREFLIGHT_CONCURRENCY).imap_unordered)
    except PreflightFailed as err:
        raise SystemExit(f"osfoundry-load: preflight: {err}") from None
    DesktopUser.fixed_count = desktops
    AgentUser.fixed_count = agents
    if options.num_users is None:
        options.num_users = desktops + agents
    if options.spawn_rate is None:
        options.spawn_rate = float(desktops + agents)
    rhythm = rhythm_of(options)
    return lambda: MasterSide(environment, target, handout, rhythm, options)
