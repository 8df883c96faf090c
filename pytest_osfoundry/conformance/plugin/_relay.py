"""The relay suite's pytest hooks: ``--osf-relay-command`` points pytest at the relay checks.

Registered beside the suite's own hooks (:mod:`pytest_osfoundry.conformance.plugin._setup`,
which collects, masks and reports every check, relay checks included: levels,
baseline, strict, JSON / Markdown / JUnit). What every suite of an outside command
does (its paths, preflight, fixtures, records, Ctrl-C) is
:mod:`~pytest_osfoundry.conformance.plugin._command_suite`'s; this module adds what is
the relay suite's alone:

* the preflight is :mod:`~pytest_osfoundry.conformance.relay._preflight`'s;
* the real-time checks are deselected unless ``--osf-relay-realtime``; the others
  start the relay at the scaled tier's cadence (:class:`Timing`);
* the fixtures ``osf_relay`` (the run's :class:`RelaySuite`) and ``osf_relay_conf``
  (one :class:`RelayConformance` per check, its relay stopped after);
* a relay check's record (``--osf-relay-record=DIR``) is
  :func:`~pytest_osfoundry.conformance.relay._evidence.relay_record`, the check's own
  desktop token masked; the driver's door is closed with the run.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.client import mask_token
from pytest_osfoundry.conformance.plugin._command_suite import CommandSuiteHooks
from pytest_osfoundry.conformance.relay import RelayConformance, RelaySuite, Timing
from pytest_osfoundry.conformance.relay._internal import (
    RELAY_CONF,
    RelayPreflightError,
    relay_argv,
    relay_preflight,
    relay_record,
    write_relay_record,
)
from pytest_osfoundry.conformance.suite._internal import RELAY_CHECKS, CheckInfo, Settings

__all__ = [
    "REALTIME_OPT_IN",
    "osf_relay",
    "osf_relay_conf",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_report_header",
    "pytest_runtest_makereport",
    "pytest_sessionstart",
    "pytest_unconfigure",
]

REALTIME_OPT_IN = "--osf-relay-realtime"


def _context(suite: RelaySuite, info: CheckInfo) -> RelayConformance:
    timing = Timing(None, None) if info.opt_in == REALTIME_OPT_IN else Timing()
    return suite.context(info.check_id, timing=timing)


def _write_record(
    folder: Path, conf: RelayConformance, outcome: str, message: str | None, secrets: set[str]
) -> None:
    write_relay_record(folder, relay_record(conf, outcome, message), {*secrets, conf.token})


_HOOKS = CommandSuiteHooks[RelaySuite, RelayConformance](
    name="relay",
    active=lambda settings: settings.relay_active,
    after=lambda settings: settings.active,  # a target too: its server checks first
    checks=RELAY_CHECKS,
    split=relay_argv,
    make_suite=lambda settings: RelaySuite(settings.osf_relay_command or ""),
    make_context=_context,
    context_key=RELAY_CONF,
    preflight=relay_preflight,
    preflight_error=RelayPreflightError,
    write_record=_write_record,
)


def pytest_configure(config: pytest.Config) -> None:
    """With a relay command, run the relay checks when no paths are given; a command that
    cannot be split, or a record folder that cannot be written, ends the run."""
    _HOOKS.configure(config)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """A relay check has ended: its report tells of what its relay had done by then
    (:meth:`RelayConformance.freeze`); with ``--osf-relay-record``, write its record."""
    yield from _HOOKS.makereport(item, call)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the run's server and driver; kill any relay process still running."""
    _HOOKS.unconfigure(config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the relay command under test."""
    settings = Settings.from_config(config)
    if not settings.relay_active:
        return []
    command = mask_token(settings.osf_relay_command or "", settings.secrets())
    realtime = ", real-time checks on" if settings.osf_relay_realtime else ""
    return [f"osfoundry relay suite: relay command {command!r}{realtime}"]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Preflight the relay command before any check: exit 4 with one message on a
    problem, the run's reports written all the same (also on Ctrl-C, exit 2)."""
    _HOOKS.sessionstart(session)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Deselect the real-time relay checks unless ``--osf-relay-realtime``."""
    if not Settings.from_config(config).osf_relay_realtime:
        _HOOKS.deselect(config, items, REALTIME_OPT_IN)


@pytest.fixture(scope="session")
def osf_relay(pytestconfig: pytest.Config) -> RelaySuite:
    """The run's instrumented server and driver API (skips without a relay command)."""
    return _HOOKS.suite_fixture(pytestconfig)


@pytest.fixture
def osf_relay_conf(
    request: pytest.FixtureRequest, osf_relay: RelaySuite
) -> Iterator[RelayConformance]:
    """A fresh context for the relay check being run; its relay stopped after."""
    yield from _HOOKS.conf_fixture(request, osf_relay)
