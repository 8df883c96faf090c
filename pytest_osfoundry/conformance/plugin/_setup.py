"""The conformance suite's pytest hooks and fixtures.

:mod:`pytest_osfoundry.plugin` (the pytest11 entry point, which also registers the
``--osf-...`` options of :mod:`~pytest_osfoundry.conformance.suite._options`) registers this
module only when a run is about the suite: a target is given, or a test path lies in
the suite's folder. Projects that use the kit for its fixtures never load it.

* ``pytest --osf-target=...`` with no test paths runs the suite shipped in this
  rule book (:mod:`pytest_osfoundry.conformance.suite._layout`), from any folder.
* Each check is collected as one item named by its check id, marked ``documented``
  or ``reconstructed``; ``--osf-level=documented`` deselects the reconstructed ones,
  opt-in checks are deselected unless enabled, and baseline entries become
  non-strict ``xfail`` markers.
* Fixtures: ``osf_target`` (session: the resolved target, embedded server started)
  and ``osf_conf`` (one :class:`~pytest_osfoundry.conformance.server._harness.Conformance`
  per check).
* Reports: every test report of a check is masked (no credential reaches the
  terminal, JUnit XML or any file) and carries an ``osf`` attribute (id, level,
  outcome, one-line message, the failing exchange) that xdist ships to the
  controller, which prints the summary by area and writes JSON, Markdown and
  baseline files; a stale baseline entry fails the run.

This module holds the run's set-up (options, preflight, the header) and, as it is
registered, registers each of the suite's other hook modules as a plugin of its own
(:data:`HOOK_MODULES`): :mod:`~pytest_osfoundry.conformance.plugin._collection`,
:mod:`~pytest_osfoundry.conformance.plugin._fixtures`,
:mod:`~pytest_osfoundry.conformance.plugin._makereport` and
:mod:`~pytest_osfoundry.conformance.plugin._sessionfinish`. pytest finds each hook and fixture on
the module that defines it; no module re-exports another's
(``tests/test_plugin.py``). The run's state is kept under the keys of
:mod:`~pytest_osfoundry.conformance.plugin._stash`.
"""

from __future__ import annotations

import importlib

import pytest

from pytest_osfoundry import SPEC_REVISION, __version__
from pytest_osfoundry.client import mask_token
from pytest_osfoundry.conformance.plugin._fixtures import attach_context, new_context
from pytest_osfoundry.conformance.plugin._makereport import ResultsGatherer
from pytest_osfoundry.conformance.plugin._sessionfinish import refuse, refuse_crash
from pytest_osfoundry.conformance.plugin._stash import (
    BASELINE,
    PREFLIGHTED,
    RESULTS,
    SECRETS,
    SETTINGS,
    SUITE_PATHS,
    WATCHER,
    WRITTEN,
    is_worker,
    run_settings,
)
from pytest_osfoundry.conformance.reporting._internal import (
    REFUSED,
    BaselineError,
    EndWatcher,
    Results,
    check_output_paths,
    read_baseline,
)
from pytest_osfoundry.conformance.scheduling._internal import INTERRUPTED, freeze_collected
from pytest_osfoundry.conformance.server._internal import (
    RUNNER_PLUGIN,
    ConcurrentRunner,
    PreflightError,
    TargetError,
    describe_target,
    parse_target,
    preflight,
    resolve_target,
)
from pytest_osfoundry.conformance.suite._internal import Settings, checks_dir, extra_check_paths

__all__ = [
    "CHECKS_DIR",
    "HOOK_MODULES",
    "pytest_collection_finish",
    "pytest_configure",
    "pytest_report_header",
    "pytest_sessionstart",
    "pytest_unconfigure",
    "register_hook_modules",
]

#: Where the installed suite's server checks live (a checkout's ``conformance/checks``
#: when the kit is installed editable).
CHECKS_DIR = checks_dir()

HOOK_MODULES: dict[str, str] = {
    "osfoundry-conformance-collection": "pytest_osfoundry.conformance.plugin._collection",
    "osfoundry-conformance-fixtures": "pytest_osfoundry.conformance.plugin._fixtures",
    "osfoundry-conformance-makereport": "pytest_osfoundry.conformance.plugin._makereport",
    "osfoundry-conformance-finish": "pytest_osfoundry.conformance.plugin._sessionfinish",
}
"""The suite's other hook modules, each registered as a plugin of its own under its
name here: collecting the rule book, the ``osf_target`` and ``osf_conf`` fixtures,
the reports' masking and ``osf`` data, the end of a run."""


def register_hook_modules(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register each of :data:`HOOK_MODULES` (once).

    Each is taken by its name through ``sys.modules``, as the kit's plugin takes this
    module: a package attribute can outlive a pytester in-process run's modules and
    would pair a stale hook module with fresh checks."""
    for name, module in HOOK_MODULES.items():
        if not pluginmanager.has_plugin(name):
            pluginmanager.register(importlib.import_module(module), name)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Register the suite's other hook modules (:data:`HOOK_MODULES`), read the
    options, point pytest at the suite if asked (markers: plugin.py).

    A refused option (an unreadable baseline, a report path that cannot be written, a
    malformed target) ends the run here: its reports are written
    (:func:`~pytest_osfoundry.conformance.plugin._sessionfinish.refuse`), then the usage error."""
    register_hook_modules(config.pluginmanager)
    settings = Settings.from_config(config)
    config.stash[SETTINGS] = settings
    config.stash[SECRETS] = set(settings.secrets())
    results = Results()
    config.stash[RESULTS] = results
    config.pluginmanager.register(ResultsGatherer(results), "osfoundry-conformance-results")
    watcher = EndWatcher()
    config.stash[WATCHER] = watcher
    config.pluginmanager.register(watcher, "osfoundry-conformance-ending")
    config.stash[WRITTEN] = []
    try:
        _configure(config, settings, watcher)
    except pytest.UsageError as err:
        refuse(config, f"{REFUSED}{err}", settings)
        raise


def _configure(config: pytest.Config, settings: Settings, watcher: EndWatcher) -> None:
    baseline = None
    if settings.osf_baseline:
        try:
            baseline = read_baseline(settings.osf_baseline)
        except BaselineError as err:
            raise pytest.UsageError(f"--osf-baseline: {err}") from None
    config.stash[BASELINE] = baseline
    check_output_paths(settings)
    if not settings.active:
        return
    try:
        parse_target(settings.osf_target or "")
    except TargetError as err:
        raise pytest.UsageError(mask_token(str(err), settings.secrets())) from None
    source = getattr(config, "args_source", None)
    if source is not None and source != pytest.Config.ArgsSource.ARGS:
        # No test paths: the rule book, then the project's own checks (_extra).
        config.args[:] = [str(CHECKS_DIR), *map(str, extra_check_paths(config))]
        config.stash[SUITE_PATHS] = True
    if settings.osf_concurrency > 1:
        runner = ConcurrentRunner(
            settings.osf_concurrency, new_context, attach_context, on_interrupt=watcher.stop_now
        )
        config.pluginmanager.register(runner, RUNNER_PLUGIN)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Unregister the results gatherer and the concurrent runner; close a preflight's
    target no check took."""
    leftover = config.stash.get(PREFLIGHTED, None)
    if leftover is not None:
        del config.stash[PREFLIGHTED]
        leftover.close()
    for name in (
        "osfoundry-conformance-results",
        "osfoundry-conformance-ending",
        RUNNER_PLUGIN,
    ):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the target, the suite version and the spec revision."""
    settings = run_settings(config)
    if not settings.active:
        return []
    line = (
        f"osfoundry conformance suite {__version__} (spec {SPEC_REVISION}): "
        f"target {describe_target(settings)}, level {settings.osf_level}, "
        f"MCP protocol {settings.osf_protocol}" + (", strict" if settings.osf_strict else "")
    )
    baseline = config.stash.get(BASELINE, None)
    if baseline is not None:
        line += f", baseline {baseline.path} ({len(baseline.ids)} listed)"
    return [line, *_what_runs(config)]


def _what_runs(config: pytest.Config) -> list[str]:
    """The header's line naming the checks' folders, when the suite chose them."""
    if not config.stash.get(SUITE_PATHS, False):
        return []
    return [f"osfoundry checks: {', '.join(config.args)}"]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Preflight: one cheap request per credential before any check (and before xdist
    starts its workers), so a configuration error is one message and exit code 4; the
    run's reports are written all the same (also on Ctrl-C meanwhile, exit code 2, and on
    a crash, exit code 3)."""
    config = session.config
    settings = run_settings(config)
    _name_what_runs(config)
    if not settings.active or is_worker(config) or _collect_only(config):
        return
    problem = None
    try:
        try:
            target = resolve_target(settings)
        except TargetError as err:
            refuse(config, f"{REFUSED}{err}", settings)
            raise pytest.UsageError(str(err)) from None
        try:
            preflight(target, settings.osf_protocol)
        except PreflightError as err:
            problem = str(err)
        except BaseException:  # Ctrl-C or a crash: the target is closed all the same
            target.close()
            raise
    except KeyboardInterrupt:
        refuse(config, f"{INTERRUPTED}, during the preflight", settings, exit_status=2)
        raise
    except (pytest.UsageError, pytest.exit.Exception):  # refused (reports written); pytest.exit
        raise
    except Exception as err:  # a crash: pytest's internal error, the reports say so
        refuse_crash(config, "the preflight", err, settings)
        raise
    if problem is None and not _distributed(config):
        config.stash[PREFLIGHTED] = target  # the checks of this process go on with it
    else:
        target.close()
    if problem is not None:
        refuse(config, f"the preflight refused the target: {problem}", settings)
        raise pytest.UsageError(f"osfoundry preflight: {problem}")


def _name_what_runs(config: pytest.Config) -> None:
    """When the suite chose the test paths, pytest's header names them, not the
    ``testpaths`` of the folder's configuration (which the run does not run)."""
    if config.stash.get(SUITE_PATHS, False):
        config.args_source = pytest.Config.ArgsSource.ARGS


def pytest_collection_finish(session: pytest.Session) -> None:
    """Leave what the run keeps (modules, items) out of the collector's full passes
    (:mod:`~pytest_osfoundry.conformance.scheduling._gc`)."""
    if run_settings(session.config).active:
        freeze_collected()


def _distributed(config: pytest.Config) -> bool:
    """Whether xdist runs the checks in worker processes (each resolves its own target)."""
    dist = getattr(config.option, "dist", "no")
    return bool(getattr(config.option, "numprocesses", None)) and dist != "no"


def _collect_only(config: pytest.Config) -> bool:
    return bool(config.getoption("collectonly", False))
