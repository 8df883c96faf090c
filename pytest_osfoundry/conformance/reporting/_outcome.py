"""How a run ended, and the checks it never ran: so no report is greener than the exit code.

A run can end in many ways: every check ran; some failed; the target stopped
answering (:mod:`~pytest_osfoundry.conformance.server._liveness`); ``-x``/``--maxfail``;
Ctrl-C; an internal error; a collection error; a refusal before any check (a bad
option, a bad ``embedded:MODULE:FACTORY``, a refused preflight, of either suite).
:class:`EndWatcher` (a plugin registered with the suite's) notes what pytest tells it
about those ends and which checks were collected (on the xdist controller, from the
workers' collections), and on Ctrl-C tells whatever runs the checks to stop at once
(:meth:`EndWatcher.on_stop`: the target refuses every later request, the relay suite
kills its relays and wakes its waits). At the end :func:`stop_reason` works out

* :func:`stop_reason`: why the run stopped before its end (``None``: it did not), and
* the checks collected that never reported, each handed to the suite's reports and
  pytest's JUnit writer as a *skipped* report whose reason says why it did not run
  (:func:`unrun_reports`) -- the terminal counts them in its closing line instead of
  listing them --

and makes the exit status and the report's ``ok`` agree: ``ok`` is true exactly when
pytest exits 0 (``docs/choices.md``: "A run that stopped is never green"). A run
refused before collection lists the checks it would have made
(:func:`planned_checks`) as not run, for the same reason.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_osfoundry.conformance.scheduling._internal import INTERRUPTED, NOT_RUN_PREFIX
from pytest_osfoundry.conformance.suite._internal import (
    AGENT_AREA,
    RELAY_AREA,
    CheckInfo,
    Settings,
    all_checks,
    check_info,
)

__all__ = [
    "REFUSED",
    "EndWatcher",
    "Unrun",
    "exit_reason",
    "planned_checks",
    "stop_reason",
    "unrun_reports",
]

REFUSED = "refused before any check: "
"""How the reason of a run refused for its options (a usage error) starts."""

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
    collection_done: bool = False
    """Whether collection finished (else the checks a run plans stand in for it)."""
    _stoppers: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _stopped: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def on_stop(self, stop: Callable[[], None]) -> None:
        """Call ``stop`` when Ctrl-C ends the run (at once if it already has): what
        runs the checks lets go of them there (no request sent, no relay kept)."""
        with self._lock:
            stopped = self._stopped
            if not stopped:
                self._stoppers.append(stop)
        if stopped:
            stop()

    def stop_now(self) -> None:
        """Ctrl-C: call every stopper once (from any thread; later calls do nothing)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            stoppers, self._stoppers = self._stoppers, []
        for stop in stoppers:
            stop()

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C or ``pytest.exit``: remember it (the run's checks after it never ran)."""
        value = excinfo.value
        if isinstance(value, KeyboardInterrupt):
            self.interrupted = INTERRUPTED
        else:
            message = getattr(value, "msg", "") or str(value)
            self.interrupted = f"ended by pytest.exit: {message}" if message else "ended"
        self.stop_now()

    def pytest_internalerror(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """An internal error: remember its one line."""
        self.internal_error = f"internal error: {excinfo.typename}: {excinfo.value}"

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Remember every check this process collected (after deselection)."""
        self.collection_done = True
        for item in session.items:
            info = check_info(getattr(item, "obj", None))
            if info is not None:
                self.collected[item.nodeid] = Unrun(item.nodeid, info, item.location)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """xdist controller: the checks a worker collected (by node id)."""
        self.collection_done = True
        by_id = {info.check_id: info for info in _known(include_relay=True)}
        for nodeid in ids:
            info = by_id.get(nodeid.rpartition("::")[2])
            if info is not None and nodeid not in self.collected:
                path = nodeid.partition("::")[0]
                self.collected[nodeid] = Unrun(nodeid, info, (path, None, info.check_id))

    def unrun(self, settings: Settings, reported: Iterable[str]) -> list[Unrun]:
        """The checks that never reported: those collected, or -- when collection never
        finished -- those the run planned (:func:`planned_checks`)."""
        done = set(reported)
        if self.collection_done:
            return [u for nodeid, u in self.collected.items() if nodeid not in done]
        return [
            Unrun(info.check_id, info, (info.check_id, None, info.check_id))
            for info in planned_checks(settings)
            if info.check_id not in done
        ]


def _known(*, include_relay: bool) -> list[CheckInfo]:
    try:
        return all_checks(include_relay=include_relay)
    except Exception:  # a broken install: the run reports it as a collection error
        return []


def planned_checks(settings: Settings) -> list[CheckInfo]:
    """The rule book's checks a run with ``settings`` would collect: the server checks
    with a target, the relay checks with a relay command, the agent checks with an
    agent command, ``--osf-level`` and the
    opt-ins applied (``-k`` and a project's own checks are unknown before collection)."""
    chosen = []
    for info in _known(include_relay=settings.relay_active or settings.agent_active):
        relay, agent = info.area == RELAY_AREA, info.area == AGENT_AREA
        if relay and not settings.relay_active:
            continue
        if agent and not settings.agent_active:
            continue
        if not (relay or agent) and not settings.active:
            continue
        if settings.osf_level == "documented" and info.level != "documented":
            continue
        if info.opt_in == "--osf-timing" and not settings.osf_timing:
            continue
        if info.opt_in == "--osf-relay-realtime" and not settings.osf_relay_realtime:
            continue
        if info.opt_in == "--osf-agent-restart" and not settings.osf_agent_restart:
            continue
        chosen.append(info)
    return chosen


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
    in the JUnit XML and the suite's own reports; its ``osf`` data marks the check
    as not run.
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
