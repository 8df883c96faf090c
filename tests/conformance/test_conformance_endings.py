"""Every way a run can end writes reports that agree with the exit code.

Each end is made for real, in process (pytester): a clean run, failing checks, ``-x``,
a target that falls silent, the preflight refusing the target, Ctrl-C, ``pytest.exit``
and an internal error (the last three from a small plugin raising at the fifth
check). For each, the JSON report's ``ok`` is ``exit code == 0``, every check that did
not run is counted and listed with its reason, and the Markdown summary and the JUnit
XML say the same.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.conformance.osf_conformance_kit import variant_target
from tests.hostile.osf_hostile_kit import HostileServer
from tests.sigint import ctrl_c_delivered

#: A plugin that ends the run at the fifth check, the way $OSF_TEST_END says.
ENDER = """
import os
import pytest

SEEN = [0]

def pytest_runtest_setup(item):
    SEEN[0] += 1
    if SEEN[0] == 5 and os.environ.get("OSF_TEST_END") == "ctrl-c":
        raise KeyboardInterrupt
    if SEEN[0] == 5 and os.environ.get("OSF_TEST_END") == "exit":
        pytest.exit("asked to stop", returncode=2)

def pytest_runtest_logstart(nodeid, location):
    if SEEN[0] == 5 and os.environ.get("OSF_TEST_END") == "internal":
        raise RuntimeError("a plugin broke")
"""


@dataclass
class Ended:
    """One run's exit code and the three files it left."""

    ret: int
    report: dict[str, Any]
    markdown: str
    junit: ElementTree.Element | None
    text: str


@pytest.fixture
def end_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Any:
    pytester.makepyfile(osf_test_ender=ENDER)
    pytester.syspathinsert()

    def run(*args: str, end: str = "") -> Ended:
        if end:
            monkeypatch.setenv("OSF_TEST_END", end)
        paths = {k: pytester.path / f"osf.{k}" for k in ("json", "md", "xml")}
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            "-p",
            "osf_test_ender",
            f"--osf-report={paths['json']}",
            f"--osf-markdown={paths['md']}",
            f"--junitxml={paths['xml']}",
            *args,
            no_reraise_ctrlc=True,
        )
        junit = ElementTree.parse(paths["xml"]).getroot() if paths["xml"].exists() else None
        return Ended(
            int(result.ret),
            json.loads(paths["json"].read_text(encoding="utf-8")),
            paths["md"].read_text(encoding="utf-8"),
            junit,
            result.stdout.str() + result.stderr.str(),
        )

    return run


@pytest.fixture
def silent_target() -> Iterator[list[str]]:
    with HostileServer("handshake-then-silence") as server:
        yield [
            f"--osf-target={server.url}",
            "--osf-agent-token=agent-secret-token",
            "--osf-desktop-token=desk-secret-token",
            "--osf-project-id=p1",
            "--osf-timeout=1",
        ]


R2 = ["-k", "R2"]
ENDS: dict[str, tuple[list[str], str, int, str | None]] = {
    # name: (arguments, OSF_TEST_END, expected exit code, words of the stop reason)
    "all passed": (["--osf-target=embedded", *R2], "", 0, None),
    "some failed": ([variant_target("bare_challenge"), *R2], "", 1, None),
    "-x": ([variant_target("bare_challenge"), *R2, "-x", "--osf-concurrency=1"], "", 1, "-x"),
    "ctrl-c": (["--osf-target=embedded", *R2], "ctrl-c", 2, "Ctrl-C"),
    "pytest.exit": (["--osf-target=embedded", *R2], "exit", 2, "pytest.exit: asked to stop"),
    "internal error": (["--osf-target=embedded", *R2], "internal", 3, "internal error"),
    "preflight refused": (
        ["--osf-target=http://127.0.0.1:9/mcp", "--osf-agent-token=t", "--osf-timeout=1"],
        "",
        4,
        "preflight refused",
    ),
}


def _check_agreement(ended: Ended, code: int, words: str | None) -> None:
    summary = ended.report["summary"]
    assert ended.ret == code, ended.text[-3000:]
    assert summary["ok"] is (code == 0)
    if words is None:
        assert summary["stopped"] is None
    else:
        assert words in summary["stopped"], summary["stopped"]
        assert "not green" in summary["line"]
    unrun = [c for c in ended.report["checks"] if c["not_run"]]
    assert summary["not_run"] == len(unrun) == len(summary["not_run_checks"])
    assert [u["id"] for u in summary["not_run_checks"]] == [c["id"] for c in unrun]
    if words is not None:
        reached = [e for e in summary["not_run_checks"] if e["reason"].startswith("not run: ")]
        assert reached, "a stopped run lists the checks it did not reach"
        for entry in reached:  # the others were skipped for a reason of their own
            assert words in entry["reason"], entry
    assert ("✅ ok" in ended.markdown) is (code == 0)
    assert ("❌ not ok" in ended.markdown) is (code != 0)
    assert f"(exit status {code})" in ended.markdown
    for entry in summary["not_run_checks"]:
        assert f"- `{entry['id']}`: {entry['reason'][:9]}" in ended.markdown
    assert ended.junit is not None, "a JUnit file is written for every end"
    cases = {c.get("name"): c for c in ended.junit.iter("testcase")}
    cases.pop("internal", None)  # pytest's own entry for an internal error
    assert set(cases) == {c["id"] for c in ended.report["checks"]}
    for entry in summary["not_run_checks"]:
        marks = [e for e in cases[entry["id"]] if e.tag in ("skipped", "error")]
        assert marks and entry["reason"][:9] in (marks[0].get("message") or ""), entry


@pytest.mark.parametrize("name", list(ENDS))
def test_every_end_of_a_run_writes_reports_agreeing_with_the_exit_code(end_run, name) -> None:
    args, end, code, words = ENDS[name]
    _check_agreement(end_run(*args, end=end), code, words)


def test_a_target_that_falls_silent_is_reported_not_green(end_run, silent_target) -> None:
    ended = end_run(*silent_target)
    _check_agreement(ended, 1, "the target stopped answering")
    assert ended.report["summary"]["not_run"] > 50
    assert "agent-secret-token" not in json.dumps(ended.report) + ended.markdown
    # The reason says how long the target was waited for in all (the timed-out
    # request's deadline, then the probe's). A check fails only for a time-out of its
    # own (the one that found the target gone, or one that ran out while the target
    # still answered others); the checks cut short by it did not run.
    stopped = ended.report["summary"]["stopped"]
    assert re.search(
        r"no answer within 1 s\b.*no answer within 1 s\b.*: \d+ s without an answer in all; "
        r"the remaining checks were not run$",
        stopped,
    ), stopped
    failed = [c["message"] for c in ended.report["checks"] if c["outcome"] == "failed"]
    assert failed and all("no answer within 1 s" in m for m in failed), failed
    assert not any("stopped answering" in m for m in failed), failed


def test_the_json_report_of_a_stopped_run_names_why(tmp_path: Path) -> None:
    from pytest_osfoundry.conformance.reporting._results import (
        Results,
        render_markdown,
        report_document,
    )

    results = Results()
    summary = results.summary(None)
    assert summary.ok
    stopped = type(summary)(**{**summary.__dict__, "stopped": "interrupted"})
    assert not stopped.ok and stopped.line().endswith("; not green: interrupted")
    doc = report_document(
        results, stopped, suite_version="v", spec="s", target="t", level="all", baseline=None
    )
    assert doc["summary"]["ok"] is False and doc["summary"]["stopped"] == "interrupted"
    assert "**Not green: interrupted**" in render_markdown(doc)


def test_ctrl_c_in_a_concurrent_batch_keeps_what_ended_and_lets_the_rest_go(end_run) -> None:
    """Ctrl-C while the race of R5-concurrent-same-key is in flight (every pool check has
    ended, the ``last`` checks wait): what ended is reported with its outcome, the race
    and the waiting checks as not run, and the run does not wait for the race's held
    answers (had it waited, the race would have ended and reported an outcome)."""
    from tests.conformance import variants_endings

    variants_endings.RELEASE.clear()
    try:
        with ctrl_c_delivered():
            ended = end_run(
                "--osf-target=embedded:tests.conformance.variants_endings:ctrl_c_at_the_race",
                "--osf-timeout=30",
            )
    finally:
        variants_endings.RELEASE.set()
    _check_agreement(ended, 2, "Ctrl-C")
    outcomes = {c["id"]: c for c in ended.report["checks"]}
    unrun = {i for i, c in outcomes.items() if c["not_run"]}
    assert "R5-concurrent-same-key" in unrun
    assert {i for i in outcomes if i.startswith("R1-wire-schema-")} <= unrun
    ran = {i for i, c in outcomes.items() if c["outcome"] == "passed"}
    assert ran and ran | unrun == set(outcomes), "every check ended or did not run"
    assert len(ran) > 100, "finished work is never thrown away"
    summary = ended.report["summary"]
    assert summary["skipped"] == 0 and summary["not_run"] == len(unrun)
    # The terminal counts the checks not run; it does not list them.
    section = ended.text.partition("osfoundry conformance")[2]
    assert "R5-concurrent-same-key" not in section
    assert f"{len(unrun)} checks did not run; not green: interrupted" in " ".join(section.split())
