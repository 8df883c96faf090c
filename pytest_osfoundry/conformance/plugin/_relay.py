"""The relay suite's pytest hooks: ``--osf-relay-command`` points pytest at the relay checks.

Registered beside the suite's own hooks (:mod:`pytest_osfoundry.conformance.plugin._setup`,
which collects, masks and reports every check, relay checks included: levels,
baseline, strict, JSON / Markdown / JUnit). This module adds what is the relay
suite's alone:

* with ``--osf-relay-command`` and no test paths, the run is the installed rule
  book's ``relay/`` folder;
* the preflight (:mod:`~pytest_osfoundry.conformance.relay._preflight`): a problem
  is one ``ERROR:`` line and exit status 4, the reports written all the same
  (:func:`~pytest_osfoundry.conformance.plugin._sessionfinish.refuse`, as the server suite's);
* the real-time checks are deselected unless ``--osf-relay-realtime``;
* the fixtures ``osf_relay`` (the run's :class:`RelaySuite`) and ``osf_relay_conf``
  (one :class:`RelayConformance` per check, its relay stopped after);
* a relay check's report tells of what its relay had done when the check ended, every
  part of it alike; with ``--osf-relay-record=DIR``, every relay check's record in
  ``DIR/<check id>.json``, passed or failed
  (:func:`~pytest_osfoundry.conformance.relay._evidence.relay_record`);
* Ctrl-C kills every relay and wakes every check's wait at once
  (:meth:`RelaySuite.interrupt`); at the end, no relay process is left (their process
  groups are killed) and no check's door stays open.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.client import mask_token
from pytest_osfoundry.conformance.command._internal import CommandError, kill_all
from pytest_osfoundry.conformance.plugin._sessionfinish import refuse
from pytest_osfoundry.conformance.plugin._stash import SECRETS, SUITE_PATHS, WATCHER
from pytest_osfoundry.conformance.relay import RelayConformance, RelaySuite, Timing
from pytest_osfoundry.conformance.relay._internal import (
    RELAY_CONF,
    RelayConcurrentRunner,
    RelayPreflightError,
    relay_argv,
    relay_preflight,
    relay_record,
    write_relay_record,
)
from pytest_osfoundry.conformance.reporting._internal import REFUSED
from pytest_osfoundry.conformance.scheduling._internal import INTERRUPTED, Interrupted
from pytest_osfoundry.conformance.suite._internal import (
    RELAY_CHECKS,
    Settings,
    check_info,
    checks_dir,
)

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
_SUITE = pytest.StashKey[RelaySuite]()
_RECORD = pytest.StashKey[Path]()
_RUNNER = "osfoundry-relay-concurrent"


def _settings(config: pytest.Config) -> Settings:
    return Settings.from_config(config)


def pytest_configure(config: pytest.Config) -> None:
    """With a relay command (and no target), run the relay checks when no paths are given;
    a command that cannot be split ends the run (its reports written: :func:`refuse`)."""
    settings = _settings(config)
    if not settings.relay_active:
        return
    try:
        relay_argv(settings.osf_relay_command or "")
    except CommandError as err:
        message = f"--osf-relay-command: {err}"
        refuse(config, f"{REFUSED}{message}", settings)
        raise pytest.UsageError(message) from None
    if settings.osf_relay_record:
        try:
            config.stash[_RECORD] = _record_folder(settings.osf_relay_record)
        except pytest.UsageError as err:
            refuse(config, f"{REFUSED}{err}", settings)
            raise
    source = getattr(config, "args_source", None)
    if source is not None and source != pytest.Config.ArgsSource.ARGS:
        relay_checks = str(checks_dir(RELAY_CHECKS))
        if settings.active:  # a target too: its server checks, then the relay checks
            config.args.append(relay_checks)
        else:
            config.args[:] = [relay_checks]
        config.stash[SUITE_PATHS] = True
    if settings.osf_relay_concurrency > 1:
        runner = RelayConcurrentRunner(
            settings.osf_relay_concurrency,
            lambda item: _context(item, _suite(config)),
            on_interrupt=config.stash[WATCHER].stop_now,
        )
        config.pluginmanager.register(runner, _RUNNER)


def _record_folder(value: str) -> Path:
    """The ``--osf-relay-record`` folder, made if missing; a usage error naming what is
    wrong when it cannot be written in."""
    folder = Path(value)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise pytest.UsageError(f"--osf-relay-record: {value} is a file; name a folder") from None
    except OSError as err:
        raise pytest.UsageError(
            f"--osf-relay-record: cannot make the folder {value}: {err.strerror or err}"
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"--osf-relay-record: cannot write in {value} (permission denied)")
    return folder


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """A relay check has ended: its report tells of what its relay had done by then
    (:meth:`RelayConformance.freeze`); with ``--osf-relay-record``, write its record."""
    conf = item.stash.get(RELAY_CONF, None)
    if conf is not None and call.when == "call":
        conf.freeze()
    result = yield
    folder = item.config.stash.get(_RECORD, None)
    if folder is None or conf is None or call.when != "call":
        return
    report: pytest.TestReport = result.get_result()
    if hasattr(report, "wasxfail"):
        outcome = "xpassed" if report.passed else "xfailed"
    else:
        outcome = report.outcome
    failure = call.excinfo.value if call.excinfo is not None else None
    message = str(failure).strip() or type(failure).__name__ if failure is not None else None
    secrets = {*item.config.stash.get(SECRETS, set()), conf.token}
    write_relay_record(folder, relay_record(conf, outcome, message), secrets)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the run's server and driver; kill any relay process still running."""
    suite = config.stash.get(_SUITE, None)
    if suite is not None:
        suite.close()
    kill_all()
    runner = config.pluginmanager.get_plugin(_RUNNER)
    if runner is not None:
        config.pluginmanager.unregister(runner)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the relay command under test."""
    settings = _settings(config)
    if not settings.relay_active:
        return []
    command = mask_token(settings.osf_relay_command or "", settings.secrets())
    realtime = ", real-time checks on" if settings.osf_relay_realtime else ""
    return [f"osfoundry relay suite: relay command {command!r}{realtime}"]


def _suite(config: pytest.Config) -> RelaySuite:
    suite = config.stash.get(_SUITE, None)
    if suite is None:
        suite = RelaySuite(_settings(config).osf_relay_command or "")
        config.stash[_SUITE] = suite
        # Ctrl-C: every relay killed, every check's wait woken (the run ends at once).
        config.stash[WATCHER].on_stop(suite.interrupt)
    return suite


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Preflight the relay command before any check: exit 4 with one message on a
    problem, the run's reports written all the same (also on Ctrl-C, exit 2)."""
    config = session.config
    settings = _settings(config)
    if not settings.relay_active or hasattr(config, "workerinput"):
        return
    if config.getoption("collectonly", False):
        return
    try:
        relay_preflight(_suite(config))
    except RelayPreflightError as err:
        refuse(config, f"the relay preflight refused the relay command: {err}", settings)
        raise pytest.UsageError(f"osfoundry relay preflight: {err}") from None
    except KeyboardInterrupt:
        refuse(config, f"{INTERRUPTED}, during the relay preflight", settings, exit_status=2)
        raise


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Deselect the real-time relay checks unless ``--osf-relay-realtime``."""
    if _settings(config).osf_relay_realtime:
        return
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        info = check_info(getattr(item, "obj", None))
        (dropped if info is not None and info.opt_in == REALTIME_OPT_IN else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.fixture(scope="session")
def osf_relay(pytestconfig: pytest.Config) -> RelaySuite:
    """The run's instrumented server and driver API (skips without a relay command)."""
    if not _settings(pytestconfig).relay_active:
        pytest.skip("no relay: pass --osf-relay-command=CMD or --osf-relay-command=embedded")
    return _suite(pytestconfig)


def _context(item: pytest.Item, suite: RelaySuite) -> RelayConformance:
    info = check_info(getattr(item, "obj", None))
    if info is None:
        raise pytest.UsageError("osf_relay_conf is only for conformance checks (@check functions)")
    timing = Timing(None, None) if info.opt_in == REALTIME_OPT_IN else Timing()
    return suite.context(info.check_id, timing=timing)


@pytest.fixture
def osf_relay_conf(
    request: pytest.FixtureRequest, osf_relay: RelaySuite
) -> Iterator[RelayConformance]:
    """A fresh context for the relay check being run; its relay stopped after."""
    conf = _context(request.node, osf_relay)
    # The report shows what its relay sent; a check the concurrent runner pre-ran
    # before this set-up keeps the context it ran with.
    request.node.stash.setdefault(RELAY_CONF, conf)
    try:
        yield conf
    finally:
        with contextlib.suppress(Interrupted):
            conf.close()
