"""The agent suite's pytest hooks: ``--osf-agent-command`` points pytest at the agent checks.

Registered beside the suite's own hooks (:mod:`pytest_osfoundry.conformance.plugin._setup`,
which collects, masks and reports every check, agent checks included: levels,
baseline, strict, JSON / Markdown / JUnit). What every suite of an outside command
does (its paths, preflight, fixtures, records, Ctrl-C) is
:mod:`~pytest_osfoundry.conformance.plugin._command_suite`'s, as for the relay suite
(:mod:`pytest_osfoundry.conformance.plugin._relay`); this module adds what is the agent
suite's alone:

* the preflight is :mod:`~pytest_osfoundry.conformance.agent._preflight`'s;
* the tier (scaled, or ``--osf-agent-realtime``) sets the suite's pickup interval and
  how many checks run at once;
* the opt-in checks (``R5-agent-resumes-after-restart``) are deselected unless
  ``--osf-agent-restart``, as the relay suite's real-time checks are;
* the fixtures ``osf_agent`` (the run's :class:`AgentSuite`, at the tier's pickup
  interval) and ``osf_agent_conf`` (one :class:`AgentConformance` per check, its agent
  and desktop stopped after);
* every agent check's report carries its record, and its measures as JUnit
  properties; ``--osf-agent-record=DIR`` keeps the whole record
  (:mod:`~pytest_osfoundry.conformance.agent._evidence`).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest

from pytest_osfoundry.client import mask_token
from pytest_osfoundry.conformance.agent._internal import (
    AGENT_CONF,
    DEFAULT_INTERVAL,
    REALTIME_INTERVAL,
    AgentConformance,
    AgentPreflightError,
    AgentSuite,
    agent_preflight,
    default_concurrency,
    measure_properties,
    split_agent_command,
    write_agent_record,
)
from pytest_osfoundry.conformance.plugin._command_suite import CommandSuiteHooks
from pytest_osfoundry.conformance.suite._internal import AGENT_CHECKS, Settings

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


def _suite(settings: Settings) -> AgentSuite:
    return AgentSuite(
        settings.osf_agent_command or "",
        interval=settings.osf_agent_interval,
        realtime=settings.osf_agent_realtime,
        blind=settings.osf_agent_blind,
    )


RESTART_OPT_IN = "--osf-agent-restart"


_HOOKS = CommandSuiteHooks[AgentSuite, AgentConformance](
    name="agent",
    active=lambda settings: settings.agent_active,
    after=lambda settings: settings.active or settings.relay_active,  # another suite too
    checks=AGENT_CHECKS,
    split=split_agent_command,
    make_suite=_suite,
    make_context=lambda suite, info: suite.context(info.check_id),
    context_key=AGENT_CONF,
    preflight=agent_preflight,
    preflight_error=AgentPreflightError,
    write_record=write_agent_record,
    on_freeze=lambda item, conf: item.user_properties.extend(measure_properties(conf)),
    workers=lambda settings: (
        settings.osf_agent_concurrency or default_concurrency(settings.osf_agent_realtime)
    ),
)


def pytest_configure(config: pytest.Config) -> None:
    """With an agent command, run the agent checks when no paths are given; a command
    that cannot be split, or a record folder that cannot be written, ends the run."""
    _HOOKS.configure(config)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """An agent check has ended: its record is frozen, its measures become JUnit
    properties; with ``--osf-agent-record``, its record is written."""
    yield from _HOOKS.makereport(item, call)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Deselect the opt-in agent checks unless ``--osf-agent-restart``."""
    if not Settings.from_config(config).osf_agent_restart:
        _HOOKS.deselect(config, items, RESTART_OPT_IN)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the run's server; kill any agent process still running."""
    _HOOKS.unconfigure(config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the agent command under test and the tier."""
    settings = Settings.from_config(config)
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


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Preflight the agent command before any check: exit 4 with one message on a
    problem, the run's reports written all the same (also on Ctrl-C, exit 2)."""
    _HOOKS.sessionstart(session)


@pytest.fixture(scope="session")
def osf_agent(pytestconfig: pytest.Config) -> AgentSuite:
    """The run's instrumented server (skips without an agent command)."""
    return _HOOKS.suite_fixture(pytestconfig)


@pytest.fixture
def osf_agent_conf(
    request: pytest.FixtureRequest, osf_agent: AgentSuite
) -> Iterator[AgentConformance]:
    """A fresh context for the agent check being run; its agent and desktop stopped after."""
    yield from _HOOKS.conf_fixture(request, osf_agent)
