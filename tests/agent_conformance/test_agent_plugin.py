"""``pytest --osf-agent-command``: the kit's own agent passes every agent check, with
the suite's reports; a command the preflight refuses is one error line and exit 4,
the reports written all the same."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from pytest_osfoundry.conformance._registry import AGENT_AREA, all_checks

PY = sys.executable


def _pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_embedded_agent_passes_every_agent_check_with_the_reports(tmp_path: Path) -> None:
    report, junit, record = tmp_path / "a.json", tmp_path / "a.xml", tmp_path / "records"
    run = _pytest(
        "--osf-agent-command=embedded",
        "--osf-agent-interval=0.5",
        "--osf-agent-concurrency=11",  # every check at once
        f"--osf-report={report}",
        f"--junitxml={junit}",
        f"--osf-markdown={tmp_path / 'a.md'}",
        f"--osf-agent-record={record}",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert (
        "osfoundry agent suite: agent command 'embedded', scaled tier, pickup interval 0.5 s"
        in run.stdout
    )
    document = json.loads(report.read_text())
    agent_ids = {c.check_id for c in all_checks(include_relay=True) if c.area == AGENT_AREA}
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


def test_a_refused_command_is_one_error_line_exit_4_and_the_reports(tmp_path: Path) -> None:
    command = f"{PY} -c 'import sys; print(\"no tools here\"); sys.exit(5)'"
    run = _pytest(
        f"--osf-agent-command={command}",
        f"--osf-report={tmp_path / 'r.json'}",
        f"--junitxml={tmp_path / 'r.xml'}",
        cwd=tmp_path,
    )
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


def test_a_broken_agent_listed_in_the_baseline_is_expected(tmp_path: Path) -> None:
    """The other suites' baseline machinery, unchanged: a known failure exits 0."""
    root = Path(__file__).resolve().parents[2]
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("A4-no-fan-out\n")
    run = _pytest(
        f"--osf-agent-command={PY} -m tests.agent_conformance.broken fans-out",
        "--osf-agent-interval=0.5",
        f"--osf-baseline={baseline}",
        f"--osf-report={tmp_path / 'r.json'}",
        str(root / "conformance" / "agent" / "test_tasks.py"),
        "-k",
        "A4-no-fan-out or D4-agent-unknown-name",
        cwd=root,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    checks = {c["id"]: c for c in json.loads((tmp_path / "r.json").read_text())["checks"]}
    assert checks["A4-no-fan-out"]["outcome"] == "xfailed"
    assert "queued while the one before" in checks["A4-no-fan-out"]["message"]
    assert checks["A4-no-fan-out"]["agent"]["measures"]["runs"] == 3
    assert checks["D4-agent-unknown-name"]["outcome"] == "passed"
