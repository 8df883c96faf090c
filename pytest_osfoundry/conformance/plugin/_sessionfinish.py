"""How a suite run ends: the exit status settled, the reports written, the summary printed.

Both suites (``--osf-target``, ``--osf-relay-command``) end through here, however
they end:

* :func:`pytest_sessionfinish` (before pytest's JUnit writer) reports every collected
  check that never reported, makes the exit status and the report's ``ok`` agree
  (:mod:`~pytest_osfoundry.conformance.reporting._outcome`; a stale baseline entry or a stopped
  run fails it) and writes the JSON, Markdown and baseline files.
* :func:`refuse` ends a run refused before any check (a bad option, a bad target or
  relay command, a refused preflight, Ctrl-C during the preflight): pytest calls no
  ``pytest_sessionfinish`` then, so it writes the same files itself -- every check
  the run would have made, as not run -- and the JUnit XML pytest would have;
  :func:`refuse_crash` does so for a preflight that crashed (pytest's internal error, 3).
* :func:`pytest_testnodedown` gathers, on the xdist controller, the revisions each
  worker's ``--osf-protocol auto`` settled on.
* :func:`pytest_terminal_summary` prints the checks by area and the closing line; the
  checks a stopped run never reached are counted there, not listed.

A collect-only run ends without any of it: nothing ran, so nothing is reported.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_osfoundry import SPEC_REVISION, __version__
from pytest_osfoundry.client import mask_token
from pytest_osfoundry.conformance.plugin._stash import (
    BASELINE,
    COLLECTED,
    RESULTS,
    SETTLED,
    SETTLED_OUTPUT,
    SUMMARY,
    WATCHER,
    WRITTEN,
    is_worker,
    run_settings,
)
from pytest_osfoundry.conformance.reporting._internal import (
    Baseline,
    Results,
    Summary,
    Unrun,
    exit_reason,
    planned_checks,
    report_document,
    stop_reason,
    terminal_lines,
    unrun_reports,
    writable_path_problem,
    write_junit,
    write_reports,
)
from pytest_osfoundry.conformance.scheduling._internal import summary_line
from pytest_osfoundry.conformance.server._internal import describe_protocol, describe_target
from pytest_osfoundry.conformance.suite._internal import Settings, all_checks

__all__ = [
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_testnodedown",
    "refuse",
    "refuse_crash",
]


def _known_ids(config: pytest.Config) -> list[str]:
    """The rule book's check ids and every check collected here (extra ones too)."""
    seen: set[str] = config.stash.get(COLLECTED, set())
    collected = sorted(seen)
    try:
        return [c.check_id for c in all_checks(include_relay=True)] + collected
    except Exception:  # pragma: no cover - a broken install; the run shows it anyway
        return collected


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist controller: note the revisions a finished worker settled on (for reports)."""
    settled = getattr(node, "workeroutput", {}).get(SETTLED_OUTPUT, [])
    if isinstance(settled, list):
        found = node.config.stash.setdefault(SETTLED, set())
        found.update(str(revision) for revision in settled)


def _protocol(config: pytest.Config, settings: Settings) -> str:
    """``--osf-protocol`` as the reports name it, with the revision ``auto`` settled on."""
    settled: set[str] = config.stash.get(SETTLED, set())
    return describe_protocol(settings.osf_protocol, settled)


def _document(
    config: pytest.Config,
    settings: Settings,
    results: Results,
    summary: Summary,
    baseline: Baseline | None,
    exit_status: int,
) -> dict[str, Any]:
    """The JSON report of a run, however it ended."""
    document = report_document(
        results,
        summary,
        suite_version=__version__,
        spec=SPEC_REVISION,
        target=describe_target(settings),
        level=settings.osf_level,
        baseline=baseline,
    )
    document["protocol"] = _protocol(config, settings)
    document["concurrency_hint"] = _crowding_line(results, settings.osf_concurrency)
    document["exit_status"] = int(exit_status)
    return document


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Settle how the run ended, write the reports and the baseline.

    First (before pytest's JUnit writer) every check that never reported is reported
    skipped with the reason the run stopped; then the exit status and the report's
    ``ok`` are made to agree (:mod:`~pytest_osfoundry.conformance.reporting._outcome`): a stale
    baseline entry or a stopped run fails it. On an xdist worker, only hand the
    controller the revisions settled there. A collect-only run reports nothing.
    """
    config = session.config
    if is_worker(config):
        settled: set[str] = config.stash.get(SETTLED, set())
        config.workeroutput[SETTLED_OUTPUT] = sorted(settled)  # type: ignore[attr-defined]
        return
    results = config.stash.get(RESULTS, None)
    if results is None or config.getoption("collectonly", False):
        return
    settings = run_settings(config)
    if not results.checks and not (
        settings.active or settings.relay_active or settings.agent_active
    ):
        return
    watcher = config.stash[WATCHER]
    reason = stop_reason(session, watcher, session.exitstatus)
    unrun = watcher.unrun(settings, results.checks)
    for report in unrun_reports(unrun, reason or "the run ended before it"):
        config.hook.pytest_runtest_logreport(report=report)
    baseline = config.stash.get(BASELINE, None)
    summary = results.summary(baseline, _known_ids(config) if baseline is not None else ())
    if (summary.stale or reason is not None) and session.exitstatus in (
        pytest.ExitCode.OK,
        pytest.ExitCode.NO_TESTS_COLLECTED,
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if reason is None and summary.ok and session.exitstatus != pytest.ExitCode.OK:
        reason = exit_reason(session.exitstatus)
    summary = dataclasses.replace(summary, stopped=reason)
    config.stash[SUMMARY] = summary
    document = _document(config, settings, results, summary, baseline, session.exitstatus)
    config.stash[WRITTEN].extend(write_reports(settings, document, results))


def refuse(
    config: pytest.Config,
    reason: str,
    settings: Settings | None = None,
    exit_status: int = int(pytest.ExitCode.USAGE_ERROR),
) -> None:
    """Write every report a run refused before any check asks for, and its JUnit XML.

    Each check the run would have made
    (:func:`~pytest_osfoundry.conformance.reporting._outcome.planned_checks`) is listed as not
    run with ``reason``; ``ok`` is false and the
    exit status ``exit_status`` (the usage error's 4, or 2 for Ctrl-C). ``settings``
    are the run's, or -- when an option itself was refused -- whatever can be read
    (:meth:`~pytest_osfoundry.conformance.suite._options.Settings.readable`). No baseline is
    written (nothing was checked), nor a file at a path that cannot take one. Never
    raises: the caller raises the refusal itself.
    """
    if settings is None:
        settings = Settings.readable(config)
    junit = getattr(config.option, "xmlpath", None) or None
    if not (settings.active or settings.relay_active or settings.agent_active):
        junit = None  # not a suite run: its JUnit file is not the suite's to write
    report, markdown = (
        path if path and writable_path_problem(path) is None else None
        for path in (settings.osf_report, settings.osf_markdown)
    )
    if junit and writable_path_problem(junit) is not None:
        junit = None
    if not (report or markdown or junit):
        return
    settings = dataclasses.replace(
        settings, osf_report=report, osf_markdown=markdown, osf_write_baseline=None
    )
    results = Results()
    planned = [
        Unrun(i.check_id, i, (i.check_id, None, i.check_id)) for i in planned_checks(settings)
    ]
    for unrun in unrun_reports(planned, reason):
        results.add(unrun)
    summary = dataclasses.replace(results.summary(None), stopped=reason)
    document = _document(config, settings, results, summary, None, exit_status)
    try:
        write_reports(settings, document, results)
        if junit:
            write_junit(junit, results, reason)
    except OSError:  # the refusal is the message; a file that cannot be written is not
        pass


def refuse_crash(config: pytest.Config, during: str, err: Exception, settings: Settings) -> None:
    """:func:`refuse` for a run whose ``during`` (``"the preflight"``) raised ``err``
    unforeseen: pytest ends it with its internal error (exit status 3), so the reports
    say that status, and what was raised (credentials masked). Never raises."""
    raised = mask_token(f"{type(err).__name__}: {err}", settings.secrets())
    refuse(
        config,
        f"{during} crashed: {raised}",
        settings,
        exit_status=int(pytest.ExitCode.INTERNAL_ERROR),
    )


def _crowding_line(results: Results, concurrency: int) -> str | None:
    """The summary's line on checks that failed at the connection level under load."""
    failed = [r for r in results.ordered() if r.outcome in ("failed", "xfailed")]
    return summary_line(((r.check_id, r.message) for r in failed), concurrency)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Print the checks by area and the closing line ``N passed, M failed (...)``."""
    summary = config.stash.get(SUMMARY, None)
    results = config.stash.get(RESULTS, None)
    if summary is None or results is None or not results.checks:
        return
    settings = run_settings(config)
    header = (
        f"target {describe_target(settings)} · suite {__version__} · spec {SPEC_REVISION} "
        f"· level {settings.osf_level} · MCP protocol {_protocol(config, settings)}"
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
    for line in config.stash.get(WRITTEN, []):
        terminalreporter.write_line(f"wrote {line}")
