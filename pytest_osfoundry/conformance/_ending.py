"""How a run ended, and the checks it never ran: so no report is greener than the exit code.

A run can end in many ways: every check ran; some failed; the target stopped
answering (:mod:`~pytest_osfoundry.conformance._liveness`); ``-x``/``--maxfail``;
Ctrl-C; an internal error; a collection error; the preflight refused the target.
:class:`EndWatcher` (a plugin registered with the suite's) notes what pytest tells it
about those ends and which checks were collected (on the xdist controller, from the
workers' collections). At the end :func:`stop_reason` works out

* :func:`stop_reason`: why the run stopped before its end (``None``: it did not), and
* the checks collected that never reported, each handed to pytest as a *skipped*
  report whose reason says why it did not run (:func:`unrun_reports`) -- so the JSON
  and Markdown reports, the JUnit XML and the terminal all list it --

and makes the exit status and the report's ``ok`` agree: ``ok`` is true exactly when
pytest exits 0 (``docs/choices.md``: "A run that stopped is never green").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_osfoundry.conformance._registry import CheckInfo, all_checks, check_info

__all__ = [
    "NOT_RUN_PREFIX",
    "EndWatcher",
    "Unrun",
    "exit_reason",
    "stop_reason",
    "unrun_reports",
]

NOT_RUN_PREFIX = "not run: "
"""How the reason of every check a stopped run never reached starts."""

_EXIT_REASONS = {
    int(pytest.ExitCode.INTERRUPTED): "the run was interrupted",
    int(pytest.ExitCode.INTERNAL_ERROR): "pytest had an internal error",
    int(pytest.ExitCode.USAGE_ERROR): "pytest was given a usage error",
    int(pytest.ExitCode.NO_TESTS_COLLECTED): "no check was collected",
}


@dataclass(frozen=True)
class Unrun:
    """A collected check that never reported: its node id, location and metadata."""

    nodeid: str
    info: CheckInfo
    location: tuple[str, int | None, str]


@dataclass(eq=False)  # a plugin: pluggy keeps it in dicts, so it must stay hashable
class EndWatcher:
    """Notes what pytest says about the end of the run and the checks it collected."""

    interrupted: str | None = None
    """Set on Ctrl-C (or ``pytest.exit``): what pytest said."""
    internal_error: str | None = None
    """Set on an internal error: the exception's last line."""
    collected: dict[str, Unrun] = field(default_factory=dict)
    """Every check collected, by node id (this process's, or every worker's)."""

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C or ``pytest.exit``: remember it (the run's checks after it never ran)."""
        value = excinfo.value
        if isinstance(value, KeyboardInterrupt):
            self.interrupted = "interrupted (Ctrl-C / KeyboardInterrupt)"
        else:
            message = getattr(value, "msg", "") or str(value)
            self.interrupted = f"ended by pytest.exit: {message}" if message else "ended"

    def pytest_internalerror(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """An internal error: remember its one line."""
        self.internal_error = f"internal error: {excinfo.typename}: {excinfo.value}"

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Remember every check this process collected (after deselection)."""
        for item in session.items:
            info = check_info(getattr(item, "obj", None))
            if info is not None:
                self.collected[item.nodeid] = Unrun(item.nodeid, info, item.location)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """xdist controller: the checks a worker collected (by node id)."""
        by_id = {info.check_id: info for info in _known()}
        for nodeid in ids:
            info = by_id.get(nodeid.rpartition("::")[2])
            if info is not None and nodeid not in self.collected:
                path = nodeid.partition("::")[0]
                self.collected[nodeid] = Unrun(nodeid, info, (path, None, info.check_id))


def _known() -> list[CheckInfo]:
    try:
        return all_checks()
    except Exception:  # a broken install: the run reports it as a collection error
        return []


def stop_reason(session: pytest.Session, watcher: EndWatcher, exitstatus: int) -> str | None:
    """Why the run stopped before every collected check ran (``None``: it did not).

    In order: an internal error, Ctrl-C/``pytest.exit``, the reason the run was told to
    stop (the target is gone, ``-x``/``--maxfail``), then any exit status that is not a
    run's own (collection errors, a usage error).
    """
    if watcher.internal_error:
        return watcher.internal_error
    if watcher.interrupted:
        return watcher.interrupted
    for flag in (session.shouldfail, session.shouldstop):
        if flag:
            return _stop_text(flag if isinstance(flag, str) else "")
    code = int(exitstatus)
    if code in _EXIT_REASONS and code != int(pytest.ExitCode.NO_TESTS_COLLECTED):
        errors = getattr(session, "testscollected", 0)
        if code == int(pytest.ExitCode.INTERRUPTED) and session.testsfailed == 0 and errors:
            return "the run was interrupted (collection errors)"
        return _EXIT_REASONS[code]
    return None


def _stop_text(flag: str) -> str:
    if flag.startswith("stopping after"):  # pytest's -x / --maxfail wording
        return f"{flag} (-x/--maxfail)"
    return flag or "the run was told to stop"


def exit_reason(exitstatus: int) -> str:
    """Why a run that exits ``exitstatus`` is not green although no check says so."""
    code = int(exitstatus)
    known = _EXIT_REASONS.get(code)
    return f"{known} (exit status {code})" if known else f"pytest exits with status {code}"


def unrun_reports(unrun: Iterable[Unrun], reason: str) -> list[pytest.TestReport]:
    """A skipped set-up report and a passed teardown report per unrun check.

    Fed to ``pytest_runtest_logreport``, each becomes a skipped entry with ``reason``
    in the terminal, JUnit XML and the suite's own reports; its ``osf`` data marks the
    check as not run.
    """
    text = NOT_RUN_PREFIX + reason
    reports: list[pytest.TestReport] = []
    for entry in unrun:
        path, line, _ = entry.location
        osf = {
            **entry.info.as_dict(),
            "order": entry.info.order,
            "outcome": "skipped",
            "message": text,
            "exchange": None,
            "not_run": True,
            "requests": 0,
        }
        for when, outcome, longrepr in (
            ("setup", "skipped", (path, (line or 0) + 1, f"Skipped: {text}")),
            ("teardown", "passed", None),
        ):
            report = pytest.TestReport(
                nodeid=entry.nodeid,
                location=entry.location,
                keywords={entry.info.check_id: 1},
                outcome=outcome,  # type: ignore[arg-type]
                longrepr=longrepr,
                when=when,  # type: ignore[arg-type]
                duration=0.0,
            )
            report.osf = osf  # type: ignore[attr-defined]
            reports.append(report)
    return reports
