"""pytest11 entry point: the ``--osf-`` options, the markers and the ``osf_`` fixtures.

Every pytest run of a project that installs the kit loads this module, so it stays
thin: it imports only the option definitions
(:mod:`pytest_osfoundry.conformance.suite._options`) and the fixture functions
(:mod:`pytest_osfoundry._fixtures`, which import their components when a test first
uses one). The conformance suite's hooks (collection of checks, report masking, the
terminal summary, ...; :mod:`pytest_osfoundry.conformance.plugin._setup`) are registered,
under the name :data:`SUITE_PLUGIN`, only when the run is about the suite:

* a target is given (``--osf-target`` or ``OSF_TARGET``), or
* a test path given on the command line lies inside the installed suite's folder
  (without a target its checks then skip, saying that a target is needed).

Otherwise the suite is neither imported nor consulted.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path

import pytest

from pytest_osfoundry import _fixtures as fixtures
from pytest_osfoundry._fixtures import *  # noqa: F403 - pytest finds fixtures by module name
from pytest_osfoundry._marker import osf_marker_help
from pytest_osfoundry.conformance._internal import (
    AGENT_MODULE,
    RELAY_MODULE,
    SUITE_MODULE,
    Settings,
    add_options,
    hookspecs,
    rulebook_dir,
)

__all__ = [
    *fixtures.__all__,
    "RELAY_PLUGIN",
    "SUITE_PLUGIN",
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_configure",
    "pytest_pyfunc_call",
    "pytest_runtest_setup",
]

#: The name the conformance suite's hooks are registered under (``get_plugin(SUITE_PLUGIN)``).
SUITE_PLUGIN = "osfoundry-conformance"

#: The name the relay suite's hooks are registered under (with the suite's own).
RELAY_PLUGIN = "osfoundry-relay-conformance"

#: The name the agent suite's hooks are registered under (with the suite's own).
AGENT_PLUGIN = "osfoundry-agent-conformance"


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register the kit's hook, ``pytest_osf_extra_checks`` (where a project's own
    checks are; :mod:`pytest_osfoundry.conformance.suite._extra`), in every run: a
    ``conftest.py`` implementing it loads whether or not the suite runs."""
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--osf-...`` options (pytest's ``osfoundry`` group) and the
    ``osf_extra_checks`` ini option."""
    add_options(parser)
    hookspecs.add_ini_option(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers; register the suite's hooks if the run is about it.

    The suite's level markers are registered in every run: importing a check module
    (``all_checks()``, a rule book generator) applies them whether or not the suite runs.
    """
    config.addinivalue_line("markers", osf_marker_help())
    config.addinivalue_line(
        "markers", "documented: an osfoundry conformance check of documented behaviour"
    )
    config.addinivalue_line(
        "markers",
        "reconstructed: an osfoundry conformance check of behaviour the kit reconstructed",
    )
    # Settings validates every --osf- option (a malformed one is a usage error either way).
    try:
        settings = Settings.from_config(config)
    except pytest.UsageError as err:
        # The refused run still writes the reports it asks for (only then is that imported).
        from pytest_osfoundry.conformance._internal import REFUSED, refuse

        refuse(config, f"{REFUSED}{err}")
        raise
    outside = settings.relay_active or settings.agent_active
    if settings.active or outside or _names_the_suite(config, config.args):
        # By its name, through sys.modules: ``from pytest_osfoundry.conformance import
        # _plugin`` would take the package's attribute, which outlives a pytester
        # in-process run's sys.modules and would pair a stale plugin with fresh checks.
        suite = importlib.import_module(SUITE_MODULE)

        # pytest_configure is a historic hook: the suite's own runs as it is registered.
        config.pluginmanager.register(suite, SUITE_PLUGIN)
        if _runs_relay_checks(config, settings) and not config.pluginmanager.has_plugin(
            RELAY_PLUGIN
        ):
            config.pluginmanager.register(importlib.import_module(RELAY_MODULE), RELAY_PLUGIN)
        if _runs_agent_checks(config, settings) and not config.pluginmanager.has_plugin(
            AGENT_PLUGIN
        ):
            config.pluginmanager.register(importlib.import_module(AGENT_MODULE), AGENT_PLUGIN)


@pytest.hookimpl(trylast=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Refuse, at set-up and naming the fix, what would silently do nothing or hang.

    Runs once the test's fixtures are set up (after pytest's own set-up): an ``osf``
    marker on a test that uses no ``osf_`` fixture, a world that would hang its async
    test (:func:`pytest_osfoundry._aio_tests.check_async_test`). A test without a world
    costs a marker and a stash lookup.
    """
    fixtures.check_marker_use(item)
    world = item.stash.get(fixtures.WORLD, None)
    if world is not None and isinstance(item, pytest.Function):
        from pytest_osfoundry import _aio_tests

        _aio_tests.check_async_test(item, world)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an ``async def`` test whose world has ``virtual_loop=True`` on the virtual loop.

    Every other test is left to pytest and its other plugins (``None``); the check
    costs one stash lookup.
    """
    world = pyfuncitem.stash.get(fixtures.WORLD, None)
    if world is None or not world.config.virtual_loop or not fixtures.is_async_test(pyfuncitem):
        return None
    from pytest_osfoundry import _aio_tests

    return _aio_tests.run_virtual_test(pyfuncitem, world)


def _runs_relay_checks(config: pytest.Config, settings: Settings) -> bool:
    """Whether relay checks may be collected: a relay command is given, or test paths
    are (which may name relay checks). A server run with no paths collects only the
    server checks, so the relay suite's modules are not even imported."""
    given = getattr(config, "args_source", None) == pytest.Config.ArgsSource.ARGS
    return settings.relay_active or given


def _runs_agent_checks(config: pytest.Config, settings: Settings) -> bool:
    """Whether agent checks may be collected: an agent command is given, or test paths
    are (as :func:`_runs_relay_checks`)."""
    given = getattr(config, "args_source", None) == pytest.Config.ArgsSource.ARGS
    return settings.agent_active or given


def _names_the_suite(config: pytest.Config, args: Iterable[str]) -> bool:
    """Whether a path among ``args`` is the installed rule book's folder or lies inside it."""
    suite = rulebook_dir()
    base = config.invocation_params.dir
    for arg in args:
        path = Path(arg.split("::", 1)[0])
        try:
            resolved = (base / path).resolve()
        except (OSError, RuntimeError):  # an unreadable path is pytest's to report
            continue
        if resolved == suite or suite in resolved.parents:
            return True
    return False
