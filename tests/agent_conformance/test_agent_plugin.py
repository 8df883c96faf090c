"""``pytest --osf-agent-command``: the kit's own agent passes every agent check, with
the suite's reports; a command the preflight refuses is one error line and exit 4,
the reports written all the same."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.suite._registry import AGENT_AREA, all_checks

PY = sys.executable


ROOT = Path(__file__).resolve().parents[2]


def _pytest(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PY, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


class Ran:
    """A finished pytest run: its status and output."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.stdout, self.stderr = process.communicate(timeout=240)
        self.returncode = process.returncode


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("agent-plugin")


@pytest.fixture(scope="module")
def runs(folder: Path) -> Iterator[dict[str, Ran]]:
    """The three runs of this module, started at once (they spend their time waiting)."""
    (folder / "embedded").mkdir()
    (folder / "refused").mkdir()
    (folder / "baseline.txt").write_text("A4-no-fan-out\n")
    record = folder / "records"
    started = {
        "embedded": _pytest(
            "--osf-agent-command=embedded",
            "--osf-agent-interval=0.5",
            "--osf-agent-concurrency=12",  # every check at once
            f"--osf-report={folder / 'a.json'}",
            f"--junitxml={folder / 'a.xml'}",
            f"--osf-markdown={folder / 'a.md'}",
            f"--osf-agent-record={record}",
            cwd=folder / "embedded",
        ),
        "refused": _pytest(
            f"--osf-agent-command={PY} -c 'import sys; print(\"no tools here\"); sys.exit(5)'",
            f"--osf-report={folder / 'r.json'}",
            f"--junitxml={folder / 'r.xml'}",
            cwd=folder / "refused",
        ),
        "baseline": _pytest(
            f"--osf-agent-command={PY} -m tests.agent_conformance.broken fans-out",
            "--osf-agent-interval=0.25",
            f"--osf-baseline={folder / 'baseline.txt'}",
            f"--osf-report={folder / 'b.json'}",
            str(ROOT / "conformance" / "agent" / "test_tasks.py"),
            "-k",
            "A4-no-fan-out or D4-agent-unknown-name",
            cwd=ROOT,
        ),
    }
    try:
        yield {name: Ran(process) for name, process in started.items()}
    finally:
        for process in started.values():
            if process.poll() is None:
                process.kill()
                process.communicate()


def test_the_embedded_agent_passes_every_agent_check_with_the_reports(
    runs: dict[str, Ran], folder: Path
) -> None:
    report, junit, record = folder / "a.json", folder / "a.xml", folder / "records"
    run = runs["embedded"]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert (
        "osfoundry agent suite: agent command 'embedded', scaled tier, pickup interval 0.5 s"
        in run.stdout
    )
    document = json.loads(report.read_text())
    agent_ids = {  # the opt-in R5 check is deselected without --osf-agent-restart
        c.check_id for c in all_checks(include_relay=True) if c.area == AGENT_AREA and not c.opt_in
    }
    outcomes = {c["id"]: c["outcome"] for c in document["checks"]}
    assert outcomes == dict.fromkeys(agent_ids, "passed")
    # Each check's record: the calls the agent sent, its exit code and report, measures.
    polling = next(c for c in document["checks"] if c["id"] == "A1-fixed-polling")
    assert polling["agent"]["outcomes"][0]["exit_code"] == 0
    assert polling["agent"]["measures"]["reads"] >= 1 and polling["requests"] >= 2
    assert any(call["tool"] == "get_graph_run" for call in polling["agent"]["calls"])
    properties = {p.get("name") for p in ET.parse(junit).getroot().iter("property")}
    assert {"osf_measure_first_look_intervals", "osf_measure_late_intervals"} <= properties
    assert sorted(p.stem for p in record.glob("*.json")) == sorted(agent_ids)
    kept = json.loads((record / "A5-same-key-after-lost-reply.json").read_text())
    assert kept["outcome"] == "passed" and kept["measures"]["starts"] >= 2
    assert next(c["status"] for c in kept["calls"] if c["tool"] == "run_graph_session") == 0


def test_a_refused_command_is_one_error_line_exit_4_and_the_reports(
    runs: dict[str, Ran], folder: Path
) -> None:
    run, tmp_path = runs["refused"], folder
    assert run.returncode == 4, run.stdout[-2000:] + run.stderr[-2000:]
    errors = [line for line in run.stderr.splitlines() if line.startswith("ERROR:")]
    assert errors == [
        "ERROR: osfoundry agent preflight: the agent command exited (status 5) before its "
        "first tool call"
    ]
    assert "no tools here" in run.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    summary = report["summary"]
    assert summary["ok"] is False and report["exit_status"] == 4
    assert summary["stopped"].startswith("the agent preflight refused the agent command: ")
    agent_checks = [c for c in report["checks"] if c["area"] == AGENT_AREA]
    assert agent_checks and len(agent_checks) == len(report["checks"]) == summary["not_run"]
    assert "A5-same-key-after-lost-reply" in (tmp_path / "r.xml").read_text()


def test_a_broken_agent_listed_in_the_baseline_is_expected(
    runs: dict[str, Ran], folder: Path
) -> None:
    """The other suites' baseline machinery, unchanged: a known failure exits 0."""
    run = runs["baseline"]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    checks = {c["id"]: c for c in json.loads((folder / "b.json").read_text())["checks"]}
    assert checks["A4-no-fan-out"]["outcome"] == "xfailed"
    assert "queued while the one before" in checks["A4-no-fan-out"]["message"]
    assert checks["A4-no-fan-out"]["agent"]["measures"]["runs"] == 3
    assert checks["D4-agent-unknown-name"]["outcome"] == "passed"


PROBE = '''
from pytest_osfoundry.conformance import check


@check("A2-probe-quotes-its-token", "A probe that fails quoting its context's tokens.",
       area="agent")
def check_probe(osf_agent_conf):
    assert not osf_agent_conf.tokens, f"the tokens are {osf_agent_conf.tokens}"
'''


def test_no_report_shows_a_check_s_tokens_whatever_its_failure_quotes(tmp_path: Path) -> None:
    """A bare assert (not the harness's own messages) quoting the check's agent and
    desktop tokens: the terminal, the JSON, the Markdown and the JUnit XML mask them."""
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    outputs = [tmp_path / "p.json", tmp_path / "p.md", tmp_path / "p.xml"]
    ran = Ran(
        _pytest(
            "--osf-agent-command=embedded",
            "--osf-agent-interval=0.5",
            f"--osf-report={outputs[0]}",
            f"--osf-markdown={outputs[1]}",
            f"--junitxml={outputs[2]}",
            "test_probe.py",
            cwd=tmp_path,
        )
    )
    assert ran.returncode == 1, ran.stdout[-3000:] + ran.stderr[-3000:]
    texts = [ran.stdout, ran.stderr, *(p.read_text(encoding="utf-8") for p in outputs)]
    assert "the tokens are" in ran.stdout
    for text in texts:
        assert not re.search(r"osf_[A-Za-z0-9_-]{20,}", text), text[-2000:]
