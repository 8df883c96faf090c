"""The suite's results: gathered from pytest's reports, shown and written three ways.

:class:`Results` collects one :class:`CheckResult` per check from the test reports
(on the xdist controller too: everything it needs travels on the report), then
:meth:`Results.summary` counts them against the baseline and the renderers write the
terminal summary (grouped by area), the JSON report and the Markdown table.
Everything that reaches them is already masked: tokens never appear.

Outcomes are pytest's: ``passed``, ``failed``, ``skipped``, ``xfailed`` (listed in
the baseline and failing: *failed as expected*) and ``xpassed`` (listed and passing:
a stale baseline entry, which fails the run).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry._tables import markdown_table
from pytest_osfoundry.conformance.reporting._baseline import Baseline
from pytest_osfoundry.conformance.scheduling._internal import NOT_RUN_PREFIX
from pytest_osfoundry.conformance.suite._internal import AREAS, where_installed

__all__ = [
    "STRICT_PREFIX",
    "CheckResult",
    "Results",
    "Summary",
    "render_markdown",
    "write_json_report",
]

STRICT_PREFIX = "could not run, a failure under --osf-strict: "
"""How ``--osf-strict`` words a check that could not run, before its reason (the
options the reason names are what would let it run; ``--osf-strict`` is not one)."""
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed")
_OPTION = re.compile(r"--osf-[a-z][a-z-]*[a-z]")


@dataclass
class CheckResult:
    """What happened to one check."""

    check_id: str
    rule: str
    level: str
    area: str
    spec: str
    asserts: str
    order: int
    nodeid: str
    outcome: str = "passed"
    message: str = ""
    exchange: dict[str, Any] | None = None
    relay: dict[str, Any] | None = None
    """A failed relay check's record of what its relay sent (see
    :mod:`~pytest_osfoundry.conformance.relay._evidence`); ``None`` otherwise."""
    agent: dict[str, Any] | None = None
    """An agent check's record: its calls, exit codes, reports, output and measures (see
    :mod:`~pytest_osfoundry.conformance.agent._evidence`); ``None`` for other checks."""
    duration: float = 0.0
    requests: int = 0
    """The HTTP requests the check sent (its clean-up excluded)."""
    not_run: bool = False
    """The check could not run; under ``--osf-strict`` that is its failure."""

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's entry for this check."""
        return {
            "id": self.check_id,
            "rule": self.rule,
            "level": self.level,
            "area": self.area,
            "spec": self.spec,
            "asserts": self.asserts,
            "outcome": self.outcome,
            "message": self.message,
            "exchange": self.exchange,
            "relay": self.relay,
            "agent": self.agent,
            "duration": round(self.duration, 4),
            "requests": self.requests,
            "not_run": self.not_run,
            "nodeid": self.nodeid,
        }


@dataclass(frozen=True)
class Summary:
    """The counts of one run and the baseline entries that need attention."""

    passed: int
    failed: int
    expected: int
    skipped: int
    """Checks skipped for a reason of their own (a credential not given, a revision not
    served); those a stopped run never reached are counted in :attr:`not_run` only."""
    stale: tuple[str, ...]
    unknown: tuple[str, ...]
    not_run: int = 0
    """Checks that could not run (skipped, or failed for that under ``--osf-strict``)."""
    missing: tuple[str, ...] = ()
    """The options that would let them run, in first-seen order."""
    unrun: tuple[tuple[str, str], ...] = ()
    """``(check id, reason)`` of every check that did not run, in report order."""
    stopped: str | None = None
    """Why the run stopped before its end, or why pytest does not exit 0 although no
    check says so (:mod:`~pytest_osfoundry.conformance.reporting._outcome`); ``None``: it ran to
    its end."""

    @property
    def unexpected(self) -> int:
        """Failures not listed in the baseline."""
        return self.failed - self.expected

    @property
    def ok(self) -> bool:
        """Whether CI should pass: no unexpected failure, no stale entry, and the run
        went to its end (so ``ok`` is true exactly when pytest exits 0)."""
        return self.unexpected == 0 and not self.stale and self.stopped is None

    def line(self) -> str:
        """``41 passed, 2 failed (1 failed as expected), 3 skipped``."""
        failed = f"{self.failed} failed"
        if self.expected:
            failed += f" ({self.expected} failed as expected)"
        text = f"{self.passed} passed, {failed}, {self.skipped} skipped"
        if self.stale:
            entries = "entry" if len(self.stale) == 1 else "entries"
            text += f", {len(self.stale)} stale baseline {entries}"
        if self.not_run:
            checks = "check" if self.not_run == 1 else "checks"
            text += f"; {self.not_run} {checks} did not run"
            if self.missing:
                text += f" (give {', '.join(self.missing)} to run them)"
        if self.stopped is not None:
            text += f"; not green: {self.stopped}"
        return text

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's ``summary``."""
        return {
            "passed": self.passed,
            "failed": self.failed,
            "failed_as_expected": self.expected,
            "failed_unexpectedly": self.unexpected,
            "skipped": self.skipped,
            "stale_baseline_entries": list(self.stale),
            "unknown_baseline_entries": list(self.unknown),
            "not_run": self.not_run,
            "not_run_checks": [{"id": i, "reason": why} for i, why in self.unrun],
            "options_to_run_them": list(self.missing),
            "stopped": self.stopped,
            "ok": self.ok,
            "line": self.line(),
        }


def _never_reached(result: CheckResult) -> bool:
    """Whether ``result`` is a check the run stopped before (not one skipped for a reason
    of its own, such as a credential not given)."""
    return result.not_run and result.message.startswith(NOT_RUN_PREFIX)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


@dataclass
class Results:
    """One :class:`CheckResult` per check, fed with test reports as they arrive."""

    checks: dict[str, CheckResult] = field(default_factory=dict)

    def add(self, report: pytest.TestReport) -> None:
        """Fold one (setup, call or teardown) report of a check into its result."""
        data = getattr(report, "osf", None)
        if not isinstance(data, dict):
            return
        result = self.checks.get(report.nodeid)
        if result is None:
            result = CheckResult(
                check_id=str(data["id"]),
                rule=str(data["rule"]),
                level=str(data["level"]),
                area=str(data["area"]),
                spec=where_installed(str(data["spec"])),
                asserts=str(data["asserts"]),
                order=int(data.get("order", 0)),
                nodeid=report.nodeid,
            )
            self.checks[report.nodeid] = result
        result.duration += float(getattr(report, "duration", 0.0) or 0.0)
        requests = data.get("requests")
        if isinstance(requests, int):
            result.requests = max(result.requests, requests)
        outcome = data.get("outcome")
        if report.when == "teardown":
            if outcome == "failed" and result.outcome in ("passed", "xpassed"):
                result.outcome = "failed"
                result.message = str(data.get("message", ""))
            return
        if report.when == "setup" and outcome == "passed":
            return
        if isinstance(outcome, str) and outcome in OUTCOMES:
            result.outcome = outcome
            result.message = str(data.get("message", ""))
            result.not_run = bool(data.get("not_run", False))
            exchange = data.get("exchange")
            result.exchange = exchange if isinstance(exchange, dict) else None
            relay = data.get("relay")
            result.relay = relay if isinstance(relay, dict) else None
            agent = data.get("agent")
            result.agent = agent if isinstance(agent, dict) else None

    def ordered(self) -> list[CheckResult]:
        """Results in report order: by area (the rule book's, then extra ones by name),
        then definition order."""

        def key(r: CheckResult) -> tuple[int, str, int, str]:
            if r.area in AREAS:
                return (AREAS.index(r.area), "", r.order, r.check_id)
            return (len(AREAS), r.area, r.order, r.check_id)  # extra checks' areas, by name

        return sorted(self.checks.values(), key=key)

    def summary(self, baseline: Baseline | None, known_ids: Iterable[str] = ()) -> Summary:
        """Count outcomes; find stale (listed, passing) and unknown baseline entries."""
        results = list(self.checks.values())
        known = set(known_ids) | {r.check_id for r in results}
        stale = tuple(r.check_id for r in self.ordered() if r.outcome == "xpassed")
        unknown: tuple[str, ...] = ()
        if baseline is not None and known_ids:
            unknown = tuple(i for i in baseline.ids if i not in known)
        not_run = [r for r in self.ordered() if r.outcome == "skipped" or r.not_run]
        missing: list[str] = []
        for r in not_run:
            for option in _OPTION.findall(r.message.removeprefix(STRICT_PREFIX)):
                if option not in missing:
                    missing.append(option)
        return Summary(
            passed=sum(r.outcome in ("passed", "xpassed") for r in results),
            failed=sum(r.outcome in ("failed", "xfailed") for r in results),
            expected=sum(r.outcome == "xfailed" for r in results),
            skipped=sum(r.outcome == "skipped" and not _never_reached(r) for r in results),
            stale=stale,
            unknown=unknown,
            not_run=len(not_run),
            missing=tuple(missing),
            unrun=tuple((r.check_id, _first_line(r.message)) for r in not_run),
        )

    def failing_ids(self) -> list[str]:
        """Ids of the checks failing now, expected or not (what a new baseline lists)."""
        return [r.check_id for r in self.ordered() if r.outcome in ("failed", "xfailed")]


_LABEL = {
    "passed": "passed",
    "failed": "FAILED",
    "skipped": "skipped",
    "xfailed": "failed (expected)",
    "xpassed": "STALE",
}


def terminal_lines(
    results: Results, summary: Summary, header: str, quiet: bool, width: int = 0
) -> list[tuple[str, dict[str, bool]]]:
    """The terminal summary as ``(text, markup)`` lines (markup for TerminalWriter).

    When ``width`` is positive and a check's line would be longer, the reason wraps
    onto indented lines under the row (nothing is cut off: a skip reason names the
    option to give). The checks a stopped run never reached have no row: the closing
    line counts them and says why (the JSON and Markdown reports list them).
    """
    lines: list[tuple[str, dict[str, bool]]] = [(header, {"bold": True})]
    ordered = [r for r in results.ordered() if not _never_reached(r)]
    id_width = max((len(r.check_id) for r in ordered), default=10)
    area = None
    for r in ordered:
        if quiet and r.outcome in ("passed", "skipped"):
            continue
        if r.area != area:
            area = r.area
            lines.append((area, {"bold": True}))
        markup = {
            "passed": {"green": True},
            "failed": {"red": True, "bold": True},
            "skipped": {"yellow": True},
            "xfailed": {"yellow": True},
            "xpassed": {"red": True, "bold": True},
        }[r.outcome]
        row = f"  {_LABEL[r.outcome]:<17} {r.check_id:<{id_width}}"
        reason = _first_line(r.message)
        if width <= 0 or len(row) + 2 + len(reason) <= width:
            lines.append((f"{row}  {reason}".rstrip(), markup))
            continue
        indent = " " * 6
        first = f"{row}  "
        if width - len(first) < 20:  # too little room beside the row: all of it below
            lines.append((row.rstrip(), markup))
            first = indent
        wrapped = textwrap.wrap(
            reason,
            max(width, 40),
            initial_indent=first,
            subsequent_indent=indent,
            break_on_hyphens=False,
            break_long_words=False,
        )
        lines += [(part, markup) for part in wrapped]
    if summary.stale:
        lines.append(
            (
                "stale baseline entries (these checks pass now: remove them from the baseline): "
                + ", ".join(summary.stale),
                {"red": True},
            )
        )
    if summary.unknown:
        lines.append(
            (
                "baseline entries that name no check of this suite: " + ", ".join(summary.unknown),
                {"yellow": True},
            )
        )
    color = {"green": True} if summary.ok else {"red": True}
    closing = [summary.line()]
    if width > 0:
        closing = textwrap.wrap(
            summary.line(), width, break_on_hyphens=False, break_long_words=False
        )
    lines += [(part, {**color, "bold": True}) for part in closing]
    return lines


def report_document(
    results: Results,
    summary: Summary,
    *,
    suite_version: str,
    spec: str,
    target: str,
    level: str,
    baseline: Baseline | None,
) -> dict[str, Any]:
    """The JSON report: ``suite_version``, ``spec``, ``target``, ``summary``, ``checks``."""
    return {
        "suite_version": suite_version,
        "spec": spec,
        "target": target,
        "level": level,
        "baseline": None if baseline is None else baseline.path,
        "summary": summary.as_dict(),
        "checks": [r.as_dict() for r in results.ordered()],
    }


def write_json_report(path: str | Path, document: dict[str, Any]) -> None:
    """Write the JSON report (UTF-8, indented), creating parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _cell(text: str) -> str:
    return _first_line(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "'")


_ICON = {
    "passed": "✅ passed",
    "failed": "❌ failed",
    "skipped": "⏭️ skipped",
    "xfailed": "⚠️ failed (expected)",
    "xpassed": "❗ stale baseline entry",
}


def render_markdown(document: dict[str, Any]) -> str:
    """A Markdown summary and table of the JSON report, for a CI step summary."""
    summary = document["summary"]
    verdict = "✅ ok" if summary.get("ok") else "❌ not ok"
    if document.get("exit_status") is not None:
        verdict += f" (exit status {document['exit_status']})"
    out = [
        f"## osFoundry conformance: {summary['line']}",
        "",
        f"**{verdict}**",
        "",
        f"Target `{_cell(document['target'])}` · suite {document['suite_version']} · "
        f"spec {document['spec']} · level {document['level']}"
        + (f" · MCP protocol {document['protocol']}" if document.get("protocol") else ""),
        "",
    ]
    if summary.get("stopped"):
        out += [f"**Not green: {_cell(summary['stopped'])}**", ""]
    if summary["stale_baseline_entries"]:
        out += [
            "**Stale baseline entries** (these checks pass now; remove them): "
            + ", ".join(f"`{i}`" for i in summary["stale_baseline_entries"]),
            "",
        ]
    rows = [
        [
            check["area"],
            f"`{check['id']}`",
            check["level"],
            _ICON.get(check["outcome"], check["outcome"]),
            _cell(check["message"]),
        ]
        for check in document["checks"]
    ]
    out += markdown_table(["Area", "Check", "Level", "Outcome", "Detail"], rows)
    unrun = summary.get("not_run_checks") or []
    if unrun:
        out += ["", f"### Not run ({len(unrun)})", ""]
        out += [f"- `{entry['id']}`: {_cell(entry['reason'])}" for entry in unrun]
    failures = [c for c in document["checks"] if c["outcome"] == "failed" and c["exchange"]]
    if failures:
        out += ["", "### Replays", ""]
        for check in failures:
            out += [f"`{check['id']}`:", "", "```sh", check["exchange"]["curl"], "```", ""]
    return "\n".join(out).rstrip() + "\n"
