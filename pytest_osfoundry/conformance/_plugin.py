"""The conformance suite's pytest hooks and fixtures.

:mod:`pytest_osfoundry.plugin` (the pytest11 entry point, which also registers the
``--osf-...`` options of :mod:`~pytest_osfoundry.conformance._options`) registers this
module only when a run is about the suite: a target is given, or a test path lies in
the suite's folder. Projects that use the kit for its fixtures never load it.

* ``pytest --osf-target=...`` with no test paths runs the suite shipped in this
  rule book (:mod:`pytest_osfoundry.conformance._layout`), from any folder.
* Each check is collected as one item named by its check id, marked ``documented``
  or ``reconstructed``; ``--osf-level=documented`` deselects the reconstructed ones,
  opt-in checks are deselected unless enabled, and baseline entries become
  non-strict ``xfail`` markers.
* Fixtures: ``osf_target`` (session: the resolved target, embedded server started)
  and ``osf_conf`` (one :class:`~pytest_osfoundry.conformance._harness.Conformance`
  per check).
* Reports: every test report of a check is masked (no credential reaches the
  terminal, JUnit XML or any file) and carries an ``osf`` attribute (id, level,
  outcome, one-line message, the failing exchange) that xdist ships to the
  controller, which prints the summary by area and writes JSON, Markdown and
  baseline files; a stale baseline entry fails the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import importlib
import json
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry import SPEC_REVISION, __version__
from pytest_osfoundry.client import mask_token
from pytest_osfoundry.conformance._baseline import (
    Baseline,
    BaselineError,
    read_baseline,
)
from pytest_osfoundry.conformance._concurrent import ConcurrentRunner
from pytest_osfoundry.conformance._crowding import summary_line
from pytest_osfoundry.conformance._ending import (
    EndWatcher,
    exit_reason,
    stop_reason,
    unrun_reports,
)
from pytest_osfoundry.conformance._eras import NOT_SERVED, describe_protocol, settled_revision
from pytest_osfoundry.conformance._extra import extra_check_paths
from pytest_osfoundry.conformance._harness import CheckFailure, Conformance
from pytest_osfoundry.conformance._layout import check_module_name, checks_dir, rulebook_dir
from pytest_osfoundry.conformance._liveness import stop_if_gone
from pytest_osfoundry.conformance._options import Settings
from pytest_osfoundry.conformance._outputs import check_output_paths
from pytest_osfoundry.conformance._preflight import PreflightError, preflight
from pytest_osfoundry.conformance._registry import all_checks, check_info
from pytest_osfoundry.conformance._report import (
    Results,
    Summary,
    report_document,
    terminal_lines,
)
from pytest_osfoundry.conformance._target import (
    Target,
    TargetError,
    describe_target,
    parse_target,
    probe,
    resolve_target,
)
from pytest_osfoundry.conformance._writing import refused_run, write_reports

__all__ = [
    "CHECKS_DIR",
    "CheckItem",
    "osf_conf",
    "osf_target",
    "pytest_collect_file",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_pycollect_makeitem",
    "pytest_report_header",
    "pytest_runtest_makereport",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_unconfigure",
]

#: Where the installed suite's server checks live (a checkout's ``conformance/checks``
#: when the kit is installed editable).
CHECKS_DIR = checks_dir()

_SETTINGS = pytest.StashKey[Settings]()
_SECRETS = pytest.StashKey[set[str]]()
_RESULTS = pytest.StashKey[Results]()
_BASELINE = pytest.StashKey[Baseline | None]()
_SUMMARY = pytest.StashKey[Summary]()
_WRITTEN = pytest.StashKey[list[str]]()
_CONF = pytest.StashKey[Conformance]()
_PREFLIGHT_FAILED = pytest.StashKey[bool]()
_COLLECTED = pytest.StashKey[set[str]]()
"""The ids of the checks collected in this process (extra checks included)."""
_WATCHER = pytest.StashKey[EndWatcher]()
_SETTLED = pytest.StashKey[set[str]]()
"""The revisions ``--osf-protocol auto`` settled on in the run (this process's target,
noted when its fixture ends, and every xdist worker's)."""
#: The ``workeroutput`` key under which an xdist worker hands the controller the
#: revisions ``--osf-protocol auto`` settled on in it.
_SETTLED_OUTPUT = "osf_settled_revisions"

_CURL_LIMIT = 20_000
_HISTORY = 8


# ---------------------------------------------------------------------- options
def _settings(config: pytest.Config) -> Settings:
    settings = config.stash.get(_SETTINGS, None)
    if settings is None:
        settings = Settings.from_config(config)
        config.stash[_SETTINGS] = settings
    return settings


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Read the options, point pytest at the suite if asked (markers: plugin.py)."""
    settings = Settings.from_config(config)
    config.stash[_SETTINGS] = settings
    config.stash[_SECRETS] = set(settings.secrets())
    results = Results()
    config.stash[_RESULTS] = results
    config.pluginmanager.register(_ResultsGatherer(results), "osfoundry-conformance-results")
    watcher = EndWatcher()
    config.stash[_WATCHER] = watcher
    config.pluginmanager.register(watcher, "osfoundry-conformance-ending")
    config.stash[_WRITTEN] = []
    baseline = None
    if settings.osf_baseline:
        try:
            baseline = read_baseline(settings.osf_baseline)
        except BaselineError as err:
            raise pytest.UsageError(f"--osf-baseline: {err}") from None
    config.stash[_BASELINE] = baseline
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
    if settings.osf_concurrency > 1:
        runner = ConcurrentRunner(settings.osf_concurrency, _new_context, _attach_context)
        config.pluginmanager.register(runner, "osfoundry-conformance-concurrent")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Unregister the results gatherer and the concurrent runner."""
    for name in (
        "osfoundry-conformance-results",
        "osfoundry-conformance-ending",
        "osfoundry-conformance-concurrent",
    ):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the target, the suite version and the spec revision."""
    settings = _settings(config)
    if not settings.active:
        return []
    line = (
        f"osfoundry conformance suite {__version__} (spec {SPEC_REVISION}): "
        f"target {describe_target(settings)}, level {settings.osf_level}, "
        f"MCP protocol {settings.osf_protocol}" + (", strict" if settings.osf_strict else "")
    )
    baseline = config.stash.get(_BASELINE, None)
    if baseline is not None:
        line += f", baseline {baseline.path} ({len(baseline.ids)} listed)"
    return [line]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Preflight: one cheap request per credential before any check (and before xdist
    starts its workers), so a configuration error is one message and exit code 4."""
    config = session.config
    settings = _settings(config)
    if not settings.active or _is_worker(config) or _collect_only(config):
        return
    problem = None
    try:
        target = resolve_target(settings)
    except TargetError as err:
        raise pytest.UsageError(str(err)) from None
    try:
        preflight(target, settings.osf_protocol)
    except PreflightError as err:
        problem = str(err)
    finally:
        target.close()
    if problem is not None:
        config.stash[_PREFLIGHT_FAILED] = True
        refused_run(settings, problem, getattr(config.option, "xmlpath", None))
        raise pytest.UsageError(f"osfoundry preflight: {problem}")


def _collect_only(config: pytest.Config) -> bool:
    return bool(config.getoption("collectonly", False))


# ---------------------------------------------------------------------- collection
class CheckModule(pytest.Module):
    """A module of the rule book, imported under its one name (never by its path).

    pytest would name ``conformance/checks/test_access.py`` of a checkout after the
    folders above it (``conformance.checks.test_access``), a second copy of the
    module; :func:`~pytest_osfoundry.conformance._layout.check_module_name` gives
    the name the registry knows it by.
    """

    def _getobj(self) -> Any:
        name = check_module_name(self.path)
        if name is None:  # pragma: no cover - only built for rule book paths
            raise self.CollectError(f"{self.path} is not a module of the rule book")
        try:
            return importlib.import_module(name)
        except Exception as err:  # a broken check module: pytest reports it, no traceback
            raise self.CollectError(
                f"the check module {name} ({self.path}) cannot be imported: "
                f"{type(err).__name__}: {err}"
            ) from err


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collect the suite's modules even when ``python_files`` would not match them."""
    if check_module_name(file_path) is None:
        return None
    patterns = parent.config.getini("python_files")
    if any(fnmatch.fnmatch(file_path.name, p) for p in patterns):
        return None  # the python plugin collects it (through the hook below)
    return CheckModule.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Dir | None:
    """Collect the rule book's folders as plain folders, not packages.

    A :class:`pytest.Package` imports its ``__init__.py`` by path, under the name the
    folders above it give (``conformance``), which the rule book refuses.
    """
    if not _in_rulebook(path):
        return None
    return pytest.Dir.from_parent(parent, path=path)


def _in_rulebook(path: Path) -> bool:
    book = rulebook_dir()
    resolved = path.resolve()
    return resolved == book or book in resolved.parents


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(
    module_path: Path, parent: pytest.Collector
) -> pytest.Module | None:
    """Make the rule book's modules :class:`CheckModule` (their one import name)."""
    if check_module_name(module_path) is None:
        return None
    return CheckModule.from_parent(parent, path=module_path)


class CheckItem(pytest.Function):
    """A conformance check: one test item named by its check id.

    A :class:`~pytest_osfoundry.conformance._harness.CheckFailure` is shown with short
    tracebacks (unless ``--tb`` says otherwise): the check's line and its message.
    """

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> Any:
        if isinstance(excinfo.value, CheckFailure) and self.config.getoption("tbstyle") == "auto":
            entries = [e for e in excinfo.traceback if not _hidden(e, excinfo)]
            message = str(excinfo.value)
            lines = []
            path, lineno = str(self.path), 0
            if entries:
                entry = entries[-1]
                path, lineno = str(entry.path), entry.lineno + 1
                lines.append(f"{Path(entry.path).name}:{lineno}: in {entry.name}")
                with contextlib.suppress(IndexError, OSError):  # no source: no line
                    lines.append("    " + str(entry.statement).strip().splitlines()[0])
            lines += [f"E   {line}" for line in message.splitlines() or [""]]
            first = message.splitlines()[0] if message else "check failed"
            return CheckFailureRepr(lines, _Crash(path, lineno, first))
        return super().repr_failure(excinfo)


@dataclass(frozen=True)
class _Crash:
    path: str
    lineno: int
    message: str


class CheckFailureRepr:
    """How a failed check is printed: where, the line, and the message (no traceback).

    ``reprcrash.message`` (the message's first line) is what pytest's short summary
    and JUnit XML show.
    """

    def __init__(self, lines: list[str], crash: _Crash) -> None:
        self.lines = lines
        self.reprcrash = crash

    def toterminal(self, tw: Any) -> None:
        """Write the lines, messages in red."""
        for line in self.lines:
            tw.line(line, red=line.startswith("E "), bold=line.startswith("E "))

    def __str__(self) -> str:
        return "\n".join(self.lines)


def _hidden(entry: Any, excinfo: pytest.ExceptionInfo[BaseException]) -> bool:
    try:
        return bool(entry.ishidden(excinfo))
    except TypeError:  # pytest < 8: ishidden() takes no argument
        return bool(entry.ishidden())


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> list[pytest.Function] | None:
    """Collect each check as one item named by its check id."""
    info = check_info(obj)
    if info is None or not callable(obj):
        return None
    item: pytest.Function = CheckItem.from_parent(collector, name=info.check_id, callobj=obj)
    return [item]


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Tag checks, apply ``--osf-level`` and opt-ins, and mark baseline entries."""
    settings = _settings(config)
    baseline = config.stash.get(_BASELINE, None)
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        info = check_info(getattr(item, "obj", None))
        if info is None:
            keep.append(item)
            continue
        config.stash.setdefault(_COLLECTED, set()).add(info.check_id)
        if settings.osf_level == "documented" and info.level != "documented":
            dropped.append(item)
            continue
        if info.opt_in == "--osf-timing" and not settings.osf_timing:
            dropped.append(item)
            continue
        item.user_properties.extend(
            [
                ("osf_check", info.check_id),
                ("osf_rule", info.rule),
                ("osf_level", info.level),
                ("osf_spec", info.spec),
            ]
        )
        if baseline is not None and info.check_id in baseline:
            item.add_marker(
                pytest.mark.xfail(reason=f"listed in the baseline {baseline.path}", strict=False)
            )
        keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def osf_target(pytestconfig: pytest.Config) -> Iterator[Target]:
    """The target under test, resolved once per process (an embedded server is started)."""
    settings = _settings(pytestconfig)
    if not settings.active:
        pytest.skip("no target: pass --osf-target=URL or --osf-target=embedded")
    problem = None
    try:
        target = resolve_target(settings)
        target.protocol = settings.osf_protocol
        pytestconfig.stash[_SECRETS].update(target.creds.secrets())
        if target.kind == "url":
            try:
                probe(target)
            except TargetError:
                target.close()
                raise
    except TargetError as err:
        problem = str(err)
    if problem is not None:
        pytest.fail(problem, pytrace=False)
    try:
        yield target
    finally:
        revision = settled_revision(target)
        if revision is not None:
            pytestconfig.stash.setdefault(_SETTLED, set()).add(revision)
        target.close()


@pytest.fixture
def osf_conf(request: pytest.FixtureRequest, osf_target: Target) -> Iterator[Conformance]:
    """A fresh :class:`Conformance` context for the check being run; ends its runs after."""
    conf = _new_context(request.node, osf_target)
    request.node.stash[_CONF] = conf
    try:
        yield conf
    finally:
        conf.close()
        stop_if_gone(request.session, osf_target)


def _new_context(item: pytest.Item, target: Target) -> Conformance:
    """A fresh context for the check of ``item`` (the fixture's, or a pre-run's)."""
    info = check_info(getattr(item, "obj", None))
    if info is None:
        raise pytest.UsageError("osf_conf is only for conformance checks (@check functions)")
    secrets: set[str] = item.config.stash[_SECRETS]
    return Conformance(target, info, secrets=tuple(secrets))


def _attach_context(item: pytest.Item, conf: Conformance) -> None:
    """Report ``conf`` (a concurrent pre-run's context) as the check's own."""
    item.stash[_CONF] = conf


# ---------------------------------------------------------------------- reports
def _mask(text: str, secrets: set[str]) -> str:
    return mask_token(text, secrets) if secrets else text


def _mask_report(report: pytest.TestReport, secrets: set[str]) -> None:
    if not secrets:
        return
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        path, line, reason = longrepr
        report.longrepr = (path, line, _mask(str(reason), secrets))
    elif longrepr is not None:
        text = str(longrepr)
        masked = _mask(text, secrets)
        if masked != text:
            report.longrepr = masked
    report.sections = [(title, _mask(body, secrets)) for title, body in report.sections]
    report.user_properties = [
        (name, _mask(value, secrets) if isinstance(value, str) else value)
        for name, value in report.user_properties
    ]


def _failure_line(call: pytest.CallInfo[None]) -> str:
    if call.excinfo is None:
        return ""
    exc = call.excinfo.value
    text = str(exc).strip()
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if isinstance(exc, (CheckFailure, pytest.fail.Exception)):
        return first
    if isinstance(exc, AssertionError):
        return first or "assertion failed"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason[len("Skipped: ") :] if reason.startswith("Skipped: ") else reason
    return str(longrepr or "skipped")


def _outcome(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    return report.outcome


def _exchange_data(conf: Conformance, secrets: set[str]) -> dict[str, Any] | None:
    history, decisive = conf.exchanges()
    if decisive is None:
        return None
    curl = decisive.to_curl()
    if len(curl) > _CURL_LIMIT:
        curl = (
            f"# the decisive request's command line is {len(curl)} characters long; "
            "its request and response are in this report's exchange"
        )
    data = {
        "curl": curl,
        "decisive": decisive.to_dict(),
        "history": [e.to_dict() for e in history[-_HISTORY:]],
    }
    masked: dict[str, Any] = json.loads(_mask(json.dumps(data, ensure_ascii=False), secrets))
    return masked


def _worth_showing(history: list[Any]) -> list[Any]:
    """The exchanges minus MCP handshakes (initialize and its notification)."""
    handshake = (b'"method":"initialize"', b'"method":"notifications/initialized"')
    return [e for e in history if not any(h in e.request_body[:200] for h in handshake)]


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """Mask every report; give each check's report its id, outcome, message and exchange."""
    result = yield
    report: pytest.TestReport = result.get_result()
    secrets = item.config.stash.get(_SECRETS, set())
    info = check_info(getattr(item, "obj", None))
    not_run = False
    if info is not None and report.skipped and not hasattr(report, "wasxfail"):
        not_run = True
        reason = _skip_reason(report)
        # A check about an MCP revision the target does not serve does not apply.
        if _settings(item.config).osf_strict and not reason.startswith(NOT_SERVED):
            report.outcome = "failed"
            report.longrepr = f"could not run, a failure under --osf-strict: {reason}"
    if info is not None and (report.when == "call" or not report.passed):
        conf = item.stash.get(_CONF, None)
        outcome = _outcome(report)
        if not_run and outcome == "failed":
            message = str(report.longrepr)
        elif outcome == "passed":
            message = info.asserts
            if conf is not None and conf.notes:
                message += " (" + "; ".join(conf.notes) + ")"
        elif outcome == "skipped":
            message = _skip_reason(report)
        elif outcome == "xpassed":
            message = "passes now, but is listed in the baseline: remove the entry"
        else:
            message = _failure_line(call) or "failed"
            if report.when == "setup":
                message = f"error in set-up: {message}"
            elif report.when == "teardown":
                message = f"error in teardown: {message}"
            if outcome == "xfailed":
                message = f"failed as expected (baseline): {message}"
        exchange = None
        if outcome in ("failed", "xfailed") and conf is not None and report.when == "call":
            exchange = _exchange_data(conf, secrets)
            if outcome == "failed" and exchange is not None:
                history, _ = conf.exchanges()
                shown = "\n\n".join(e.format() for e in _worth_showing(history)[-_HISTORY:])
                report.sections.append(("osfoundry: the exchanges that led to it", shown))
                report.sections.append(("osfoundry: replay the decisive request", exchange["curl"]))
        message = _mask(message, secrets)
        report.osf = {  # type: ignore[attr-defined]
            **info.as_dict(),
            "order": info.order,
            "outcome": outcome,
            "message": message,
            "exchange": exchange,
            "not_run": not_run,
            "requests": conf.wire.requests if conf is not None else 0,
        }
        if report.when == "call":
            item.user_properties.append(("osf_outcome", f"{outcome}: {message}"))
    _mask_report(report, secrets)


class _ResultsGatherer:
    """Feeds every test report to the run's :class:`Results` (xdist controller included)."""

    def __init__(self, results: Results) -> None:
        self.results = results

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold a check's report into the results."""
        self.results.add(report)


def _known_ids(config: pytest.Config) -> list[str]:
    """The rule book's check ids and every check collected here (extra ones too)."""
    seen: set[str] = config.stash.get(_COLLECTED, set())
    collected = sorted(seen)
    try:
        return [c.check_id for c in all_checks(include_relay=True)] + collected
    except Exception:  # pragma: no cover - a broken install; the run shows it anyway
        return collected


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist controller: note the revisions a finished worker settled on (for reports)."""
    settled = getattr(node, "workeroutput", {}).get(_SETTLED_OUTPUT, [])
    if isinstance(settled, list):
        found = node.config.stash.setdefault(_SETTLED, set())
        found.update(str(revision) for revision in settled)


def _protocol(config: pytest.Config) -> str:
    """``--osf-protocol`` as the reports name it, with the revision ``auto`` settled on."""
    settled: set[str] = config.stash.get(_SETTLED, set())
    return describe_protocol(_settings(config).osf_protocol, settled)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Settle how the run ended, write the reports and the baseline.

    First (before pytest's JUnit writer) every collected check that never reported is
    reported skipped with the reason the run stopped; then the exit status and the
    report's ``ok`` are made to agree (:mod:`~pytest_osfoundry.conformance._ending`):
    a stale baseline entry or a stopped run fails it. On an xdist worker, only hand
    the controller the revisions settled there.
    """
    config = session.config
    if _is_worker(config):
        settled: set[str] = config.stash.get(_SETTLED, set())
        config.workeroutput[_SETTLED_OUTPUT] = sorted(settled)  # type: ignore[attr-defined]
        return
    results = config.stash.get(_RESULTS, None)
    if results is None or config.stash.get(_PREFLIGHT_FAILED, False):
        return
    settings = _settings(config)
    if not results.checks and not settings.active:
        return
    watcher = config.stash[_WATCHER]
    reason = stop_reason(session, watcher, session.exitstatus)
    unrun = [u for nodeid, u in watcher.collected.items() if nodeid not in results.checks]
    for report in unrun_reports(unrun, reason or "the run ended before it"):
        config.hook.pytest_runtest_logreport(report=report)
    baseline = config.stash.get(_BASELINE, None)
    summary = results.summary(baseline, _known_ids(config) if baseline is not None else ())
    if (summary.stale or reason is not None) and session.exitstatus in (
        pytest.ExitCode.OK,
        pytest.ExitCode.NO_TESTS_COLLECTED,
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if reason is None and summary.ok and session.exitstatus != pytest.ExitCode.OK:
        reason = exit_reason(session.exitstatus)
    summary = dataclasses.replace(summary, stopped=reason)
    config.stash[_SUMMARY] = summary
    document = report_document(
        results,
        summary,
        suite_version=__version__,
        spec=SPEC_REVISION,
        target=describe_target(settings),
        level=settings.osf_level,
        baseline=baseline,
    )
    document["protocol"] = _protocol(config)
    document["concurrency_hint"] = _crowding_line(results, settings.osf_concurrency)
    document["exit_status"] = int(session.exitstatus)
    config.stash[_WRITTEN].extend(write_reports(settings, document, results))


def _crowding_line(results: Results, concurrency: int) -> str | None:
    """The summary's line on checks that failed at the connection level under load."""
    failed = [r for r in results.ordered() if r.outcome in ("failed", "xfailed")]
    return summary_line(((r.check_id, r.message) for r in failed), concurrency)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Print the checks by area and the closing line ``N passed, M failed (...)``."""
    summary = config.stash.get(_SUMMARY, None)
    results = config.stash.get(_RESULTS, None)
    if summary is None or results is None or not results.checks:
        return
    settings = _settings(config)
    header = (
        f"target {describe_target(settings)} · suite {__version__} · spec {SPEC_REVISION} "
        f"· level {settings.osf_level} · MCP protocol {_protocol(config)}"
        + (" · strict" if settings.osf_strict else "")
    )
    terminalreporter.write_sep("=", "osfoundry conformance")
    quiet = config.get_verbosity() < 0
    width = int(getattr(getattr(terminalreporter, "_tw", None), "fullwidth", 0) or 0)
    for text, markup in terminal_lines(results, summary, header, quiet, width):
        terminalreporter.write_line(text, **markup)
    crowded = _crowding_line(results, settings.osf_concurrency)
    if crowded is not None:
        terminalreporter.write_line(crowded, yellow=True, bold=True)
    for line in config.stash.get(_WRITTEN, []):
        terminalreporter.write_line(f"wrote {line}")
