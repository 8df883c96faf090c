"""Writing a run's files: the JSON report, the Markdown summary, the baseline -- and,
for a run the preflight refused, all of them plus the JUnit XML pytest never writes then.

A refused run ends in ``pytest_sessionstart`` with a usage error (exit status 4),
before collection and before pytest's own JUnit writer would run; :func:`refused_run`
still lists every check the run would have made as not run, with the preflight's
message as the reason, so no file left from that run reads as green.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from pytest_osfoundry import SPEC_REVISION, __version__
from pytest_osfoundry.conformance._baseline import write_baseline
from pytest_osfoundry.conformance._ending import NOT_RUN_PREFIX
from pytest_osfoundry.conformance._options import Settings
from pytest_osfoundry.conformance._registry import CheckInfo, all_checks
from pytest_osfoundry.conformance._report import (
    CheckResult,
    Results,
    render_markdown,
    report_document,
    write_json_report,
)
from pytest_osfoundry.conformance._target import describe_target

__all__ = ["refused_run", "selected_checks", "write_junit", "write_reports"]


def write_reports(settings: Settings, document: dict[str, Any], results: Results) -> list[str]:
    """Write the files the options ask for; one ``"what: path"`` line per file written."""
    written: list[str] = []
    if settings.osf_report:
        write_json_report(settings.osf_report, document)
        written.append(f"JSON report: {settings.osf_report}")
    if settings.osf_markdown:
        path = Path(settings.osf_markdown)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_markdown(document), encoding="utf-8")
        written.append(f"Markdown summary: {settings.osf_markdown}")
    if settings.osf_write_baseline:
        write_baseline(
            settings.osf_write_baseline,
            results.failing_ids(),
            header=[
                "osfoundry conformance baseline: known-failing check ids, one per line",
                f"target {describe_target(settings)}, suite {__version__}, spec {SPEC_REVISION}",
                "use with --osf-baseline; comments start with '#'",
            ],
        )
        written.append(f"baseline: {settings.osf_write_baseline}")
    return written


def selected_checks(settings: Settings) -> list[CheckInfo]:
    """The checks a run with ``settings`` would collect (level and opt-ins applied)."""
    chosen = []
    for info in all_checks():
        if settings.osf_level == "documented" and info.level != "documented":
            continue
        if info.opt_in == "--osf-timing" and not settings.osf_timing:
            continue
        chosen.append(info)
    return chosen


def refused_run(settings: Settings, problem: str, junit_path: str | None) -> None:
    """Write every report of a run the preflight refused: not ok, every check not run."""
    results = Results()
    reason = NOT_RUN_PREFIX + f"the preflight refused the target: {problem}"
    for info in selected_checks(settings):
        results.checks[info.check_id] = CheckResult(
            check_id=info.check_id,
            rule=info.rule,
            level=info.level,
            area=info.area,
            spec=info.spec,
            asserts=info.asserts,
            order=info.order,
            nodeid=info.check_id,
            outcome="skipped",
            message=reason,
            not_run=True,
        )
    summary = dataclasses.replace(
        results.summary(None), stopped=f"the preflight refused the target: {problem}"
    )
    document = report_document(
        results,
        summary,
        suite_version=__version__,
        spec=SPEC_REVISION,
        target=describe_target(settings),
        level=settings.osf_level,
        baseline=None,
    )
    document["exit_status"] = 4
    write_reports(dataclasses.replace(settings, osf_write_baseline=None), document, results)
    if junit_path:
        write_junit(junit_path, results, summary.stopped or reason)


def write_junit(path: str, results: Results, message: str) -> None:
    """A JUnit XML file with one errored test case per check (none of them ran)."""
    checks = results.ordered()
    suite = ElementTree.Element(
        "testsuite",
        name="osfoundry-conformance",
        tests=str(len(checks)),
        errors=str(len(checks)),
        failures="0",
        skipped="0",
    )
    for result in checks:
        case = ElementTree.SubElement(
            suite, "testcase", classname=f"osfoundry.{result.area}", name=result.check_id
        )
        ElementTree.SubElement(case, "error", message=result.message).text = message
    root = ElementTree.Element("testsuites")
    root.append(suite)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(root).write(target, encoding="utf-8", xml_declaration=True)
