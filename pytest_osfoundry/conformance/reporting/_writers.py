"""Writing a run's files: the JSON report, the Markdown summary, the baseline -- and,
for a run refused before any check, the JUnit XML pytest never writes then.

A refused run (a bad option, a bad target, a refused preflight: see
:func:`~pytest_osfoundry.conformance.plugin._sessionfinish.refuse`) ends with a usage error before
pytest's own JUnit writer would run; :func:`write_junit` writes that file instead,
one errored test case per check the run would have made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from pytest_osfoundry import SPEC_REVISION, __version__
from pytest_osfoundry.conformance.reporting._baseline import write_baseline
from pytest_osfoundry.conformance.reporting._results import (
    Results,
    render_markdown,
    write_json_report,
)
from pytest_osfoundry.conformance.suite._internal import Settings

__all__ = ["write_junit", "write_reports"]


def write_reports(settings: Settings, document: dict[str, Any], results: Results) -> list[str]:
    """Write the files the options ask for; one ``"what: path"`` line per file written.

    ``document`` is the run's JSON report
    (:func:`~pytest_osfoundry.conformance.reporting._results.report_document`): the
    baseline's header names its ``target``, as described there (tokens masked)."""
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
                f"target {document['target']}, suite {__version__}, spec {SPEC_REVISION}",
                "use with --osf-baseline; comments start with '#'",
            ],
        )
        written.append(f"baseline: {settings.osf_write_baseline}")
    return written


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
