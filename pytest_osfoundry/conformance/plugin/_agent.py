"""The agent suite's pytest hooks: ``--osf-agent-command`` points pytest at the agent checks.

Registered beside the suite's own hooks (:mod:`pytest_osfoundry.conformance.plugin._setup`,
which collects, masks and reports every check, agent checks included: levels,
baseline, strict, JSON / Markdown / JUnit), as the relay suite's
(:mod:`pytest_osfoundry.conformance.plugin._relay`) are. This module adds what is the
agent suite's alone:

* with ``--osf-agent-command`` and no test paths, the run is the installed rule book's
  ``agent/`` folder;
* the opt-in checks (``R5-agent-resumes-after-restart``) are deselected unless
  ``--osf-agent-restart``, as the relay suite's real-time checks are;
* the preflight (:mod:`~pytest_osfoundry.conformance.agent._preflight`): a problem is
  one ``ERROR:`` line and exit status 4, the reports written all the same;
* the fixtures ``osf_agent`` (the run's :class:`AgentSuite`) and ``osf_agent_conf``
  (one :class:`AgentConformance` per check, its agent and desktop stopped after);
* every agent check's report carries its record, and its measures as JUnit
  properties; with ``--osf-agent-record=DIR``, the whole record in
  ``DIR/<check id>.json`` (:mod:`~pytest_osfoundry.conformance.agent._evidence`);
* Ctrl-C kills every agent and wakes every check's wait at once; at the end no agent
  process is left (their process groups are killed).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.client import mask_token
from pytest_osfoundry.conformance.agent._internal import (
    AGENT_CONF,
    DEFAULT_INTERVAL,
    REALTIME_INTERVAL,
    AgentCommandError,
    AgentConcurrentRunner,
    AgentConformance,
    AgentPreflightError,
    AgentSuite,
    agent_preflight,
    default_concurrency,
    kill_all,
    measure_properties,
    split_agent_command,
    write_agent_record,
)
from pytest_osfoundry.conformance.plugin._sessionfinish import refuse
from pytest_osfoundry.conformance.plugin._stash import SECRETS, SUITE_PATHS, WATCHER
from pytest_osfoundry.conformance.reporting._internal import REFUSED
from pytest_osfoundry.conformance.scheduling._internal import INTERRUPTED, Interrupted
from pytest_osfoundry.conformance.suite._internal import (
    AGENT_CHECKS,
    Settings,
    check_info,
    checks_dir,
)

__all__ = [
    "osf_agent",
    "osf_agent_conf",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_report_header",
    "pytest_runtest_makereport",
    "pytest_sessionstart",
    "pytest_unconfigure",
]

_SUITE = pytest.StashKey[AgentSuite]()
_RECORD = pytest.StashKey[Path]()
_RUNNER = "osfoundry-agent-concurrent"
RESTART_OPT_IN = "--osf-agent-restart"


def _settings(config: pytest.Config) -> Settings:
    return Settings.from_config(config)


def pytest_configure(config: pytest.Config) -> None:
    """With an agent command, run the agent checks when no paths are given; a command
    that cannot be split, or a record folder that cannot be written, ends the run."""
    settings = _settings(config)
    if not settings.agent_active:
        return
    try:
        split_agent_command(settings.osf_agent_command or "")
        if settings.osf_agent_record:
            config.stash[_RECORD] = _record_folder(settings.osf_agent_record)
    except (AgentCommandError, pytest.UsageError) as err:
        message = str(err) if isinstance(err, pytest.UsageError) else f"--osf-agent-command: {err}"
        refuse(config, f"{REFUSED}{message}", settings)
        raise pytest.UsageError(message) from None
    source = getattr(config, "args_source", None)
    if source is not None and source != pytest.Config.ArgsSource.ARGS:
        agent_checks = str(checks_dir(AGENT_CHECKS))
        if settings.active or settings.relay_active:  # another suite too: both run
            config.args.append(agent_checks)
        else:
            config.args[:] = [agent_checks]
        config.stash[SUITE_PATHS] = True
    concurrency = settings.osf_agent_concurrency or default_concurrency(
        settings.osf_agent_realtime
    )
    if concurrency > 1:
        runner = AgentConcurrentRunner(
            concurrency,
            lambda item: _context(item, _suite(config)),
            on_interrupt=config.stash[WATCHER].stop_now,
        )
        config.pluginmanager.register(runner, _RUNNER)


def _record_folder(value: str) -> Path:
    """The ``--osf-agent-record`` folder, made if missing; a usage error naming what is wrong."""
    folder = Path(value)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise pytest.UsageError(f"--osf-agent-record: {value} is a file; name a folder") from None
    except OSError as err:
        raise pytest.UsageError(
            f"--osf-agent-record: cannot make the folder {value}: {err.strerror or err}"
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"--osf-agent-record: cannot write in {value} (permission denied)")
    return folder


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Deselect the opt-in agent checks unless ``--osf-agent-restart``."""
    if _settings(config).osf_agent_restart:
        return
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        info = check_info(getattr(item, "obj", None))
        (dropped if info is not None and info.opt_in == RESTART_OPT_IN else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """An agent check has ended: its record is frozen, its measures become JUnit
    properties; with ``--osf-agent-record``, its record is written."""
    conf = item.stash.get(AGENT_CONF, None)
    if conf is not None and call.when == "call":
        conf.freeze()
        item.user_properties.extend(measure_properties(conf))
    result = yield
    folder = item.config.stash.get(_RECORD, None)
    if folder is None or conf is None or call.when != "call":
        return
    report: pytest.TestReport = result.get_result()
    outcome: str = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xpassed" if report.passed else "xfailed"
    failure = call.excinfo.value if call.excinfo is not None else None
    message = (str(failure).strip() or type(failure).__name__) if failure is not None else None
    secrets: set[str] = item.config.stash.get(SECRETS, set())
    write_agent_record(folder, conf, outcome, message, secrets)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the run's server; kill any agent process still running."""
    suite = config.stash.get(_SUITE, None)
    if suite is not None:
        suite.close()
    kill_all()
    runner = config.pluginmanager.get_plugin(_RUNNER)
    if runner is not None:
        config.pluginmanager.unregister(runner)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the agent command under test and the tier."""
    settings = _settings(config)
    if not settings.agent_active:
        return []
    command = mask_token(settings.osf_agent_command or "", settings.secrets())
    blind = ", blind" if settings.osf_agent_blind else ""
    restart = ", restart check on" if settings.osf_agent_restart else ""
    if settings.osf_agent_realtime:
        tier = f"real-time tier, pickup interval {REALTIME_INTERVAL:g} s, no timing variables"
    else:
        tier = f"scaled tier, pickup interval {settings.osf_agent_interval or DEFAULT_INTERVAL:g} s"
    return [f"osfoundry agent suite: agent command {command!r}, {tier}{blind}{restart}"]


def _suite(config: pytest.Config) -> AgentSuite:
    suite = config.stash.get(_SUITE, None)
    if suite is None:
        settings = _settings(config)
        suite = AgentSuite(
            settings.osf_agent_command or "",
            interval=settings.osf_agent_interval,
            realtime=settings.osf_agent_realtime,
            blind=settings.osf_agent_blind,
        )
        config.stash[_SUITE] = suite
        config.stash[WATCHER].on_stop(suite.interrupt)
    return suite


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Preflight the agent command before any check: exit 4 with one message on a
    problem, the run's reports written all the same (also on Ctrl-C, exit 2)."""
    config = session.config
    settings = _settings(config)
    if not settings.agent_active or hasattr(config, "workerinput"):
        return
    if config.getoption("collectonly", False):
        return
    try:
        agent_preflight(_suite(config))
    except AgentPreflightError as err:
        refuse(config, f"the agent preflight refused the agent command: {err}", settings)
        raise pytest.UsageError(f"osfoundry agent preflight: {err}") from None
    except KeyboardInterrupt:
        refuse(config, f"{INTERRUPTED}, during the agent preflight", settings, exit_status=2)
        raise


@pytest.fixture(scope="session")
def osf_agent(pytestconfig: pytest.Config) -> AgentSuite:
    """The run's instrumented server (skips without an agent command)."""
    if not _settings(pytestconfig).agent_active:
        pytest.skip("no agent: pass --osf-agent-command=CMD or --osf-agent-command=embedded")
    return _suite(pytestconfig)


def _context(item: pytest.Item, suite: AgentSuite) -> AgentConformance:
    info = check_info(getattr(item, "obj", None))
    if info is None:
        raise pytest.UsageError("osf_agent_conf is only for conformance checks (@check functions)")
    return suite.context(info.check_id)


@pytest.fixture
def osf_agent_conf(
    request: pytest.FixtureRequest, osf_agent: AgentSuite
) -> Iterator[AgentConformance]:
    """A fresh context for the agent check being run; its agent and desktop stopped after."""
    conf = _context(request.node, osf_agent)
    request.node.stash.setdefault(AGENT_CONF, conf)
    try:
        yield conf
    finally:
        with contextlib.suppress(Interrupted):
            conf.close()
