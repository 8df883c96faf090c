"""How a suite run ends: the exit status settled, the reports written, the summary printed.

* :func:`pytest_sessionfinish` (before pytest's JUnit writer) reports every collected
  check that never reported, makes the exit status and the report's ``ok`` agree
  (:mod:`~pytest_osfoundry.conformance._ending`; a stale baseline entry or a stopped
  run fails it) and writes the JSON, Markdown and baseline files.
* :func:`pytest_testnodedown` gathers, on the xdist controller, the revisions each
  worker's ``--osf-protocol auto`` settled on.
* :func:`pytest_terminal_summary` prints the checks by area and the closing line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_osfoundry import SPEC_REVISION, __version__
from pytest_osfoundry.conformance._crowding import summary_line
from pytest_osfoundry.conformance._ending import exit_reason, stop_reason, unrun_reports
from pytest_osfoundry.conformance._eras import describe_protocol
from pytest_osfoundry.conformance._registry import all_checks
from pytest_osfoundry.conformance._report import Results, report_document, terminal_lines
from pytest_osfoundry.conformance._stash import (
    BASELINE,
    COLLECTED,
    PREFLIGHT_FAILED,
    RESULTS,
    SETTLED,
    SETTLED_OUTPUT,
    SUMMARY,
    WATCHER,
    WRITTEN,
    is_worker,
    run_settings,
)
from pytest_osfoundry.conformance._target import describe_target
from pytest_osfoundry.conformance._writing import write_reports

__all__ = ["pytest_sessionfinish", "pytest_terminal_summary", "pytest_testnodedown"]


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


def _protocol(config: pytest.Config) -> str:
    """``--osf-protocol`` as the reports name it, with the revision ``auto`` settled on."""
    settled: set[str] = config.stash.get(SETTLED, set())
    return describe_protocol(run_settings(config).osf_protocol, settled)


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
    if is_worker(config):
        settled: set[str] = config.stash.get(SETTLED, set())
        config.workeroutput[SETTLED_OUTPUT] = sorted(settled)  # type: ignore[attr-defined]
        return
    results = config.stash.get(RESULTS, None)
    if results is None or config.stash.get(PREFLIGHT_FAILED, False):
        return
    settings = run_settings(config)
    if not results.checks and not settings.active:
        return
    watcher = config.stash[WATCHER]
    reason = stop_reason(session, watcher, session.exitstatus)
    unrun = [u for nodeid, u in watcher.collected.items() if nodeid not in results.checks]
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
    config.stash[WRITTEN].extend(write_reports(settings, document, results))


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
    for line in config.stash.get(WRITTEN, []):
        terminalreporter.write_line(f"wrote {line}")
