"""Every test report of a run masked; each check's report given its ``osf`` attribute.

:func:`pytest_runtest_makereport` takes every credential the run knows out of each
report (long representation, sections, user properties), so none reaches the
terminal, JUnit XML or a file; a check's report also carries ``osf``: its id,
level, outcome, one-line message, request count and (when it failed) the failing
exchange, which xdist ships to the controller. Under ``--osf-strict`` a check that
could not run fails. A check a stopped run never reached shows nothing in the
terminal (:func:`pytest_report_teststatus`). :class:`ResultsGatherer` folds every
report into the run's :class:`~pytest_osfoundry.conformance.reporting._results.Results`.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_osfoundry.client import mask_token
from pytest_osfoundry.conformance.agent._internal import AGENT_CONF, agent_evidence, agent_lines
from pytest_osfoundry.conformance.plugin._stash import CONF, SECRETS, run_settings
from pytest_osfoundry.conformance.relay._internal import (
    RELAY_CONF,
    relay_evidence,
    relay_lines,
    stderr_lines,
)
from pytest_osfoundry.conformance.reporting._internal import STRICT_PREFIX, Results
from pytest_osfoundry.conformance.scheduling._internal import NOT_RUN_PREFIX
from pytest_osfoundry.conformance.server._internal import NOT_SERVED, Conformance
from pytest_osfoundry.conformance.suite._internal import CheckFailure, check_info

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.relay import RelayConformance

__all__ = ["ResultsGatherer", "pytest_report_teststatus", "pytest_runtest_makereport"]

_CURL_LIMIT = 20_000
_HISTORY = 8


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


def _requests(conf: Conformance | None, relay_conf: RelayConformance | None) -> int:
    """The report's ``requests``: what a server check sent, or what a relay check's
    relay sent (0: neither)."""
    if conf is not None:
        return conf.wire.requests
    if relay_conf is not None:
        return len(relay_conf.requests())
    return 0


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
    secrets = item.config.stash.get(SECRETS, set())
    info = check_info(getattr(item, "obj", None))
    not_run = False
    if info is not None and report.skipped and not hasattr(report, "wasxfail"):
        not_run = True
        reason = _skip_reason(report)
        # A check about an MCP revision the target does not serve does not apply; one
        # a stopped run never ran is the run's failure, not the check's.
        if run_settings(item.config).osf_strict and not reason.startswith(
            (NOT_SERVED, NOT_RUN_PREFIX)
        ):
            report.outcome = "failed"
            report.longrepr = STRICT_PREFIX + reason
    if info is not None and (report.when == "call" or not report.passed):
        conf = item.stash.get(CONF, None)
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
        relay_conf = item.stash.get(RELAY_CONF, None)
        relay = None
        if outcome in ("failed", "xfailed") and relay_conf is not None and report.when == "call":
            relay = relay_evidence(relay_conf, lambda text: _mask(text, secrets))
            if outcome == "failed":
                report.sections.append(("osfoundry: what the relay sent", relay_lines(relay)))
                report.sections.append(("osfoundry: the relay's stderr", stderr_lines(relay)))
        agent_conf = item.stash.get(AGENT_CONF, None)
        agent = None
        if agent_conf is not None and report.when == "call":  # passed or failed: its record
            agent = agent_evidence(agent_conf, lambda text: _mask(text, secrets))
            if outcome == "failed":
                report.sections.append(("osfoundry: what the agent did", agent_lines(agent)))
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
            "relay": relay,
            "agent": agent,
            "not_run": not_run,
            "requests": agent["total"] if agent is not None else _requests(conf, relay_conf),
        }
        if report.when == "call":
            item.user_properties.append(("osf_outcome", f"{outcome}: {message}"))
    _mask_report(report, secrets)


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, str] | None:
    """A check a stopped run never reached has no letter, word or count in the
    terminal (its closing line counts it); the JUnit XML and the suite's reports list it."""
    data = getattr(report, "osf", None)
    if not (isinstance(data, dict) and data.get("not_run") and report.skipped):
        return None
    return ("", "", "") if str(data.get("message", "")).startswith(NOT_RUN_PREFIX) else None


class ResultsGatherer:
    """Feeds every test report to the run's :class:`Results` (xdist controller included)."""

    def __init__(self, results: Results) -> None:
        self.results = results

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold a check's report into the results."""
        self.results.add(report)
