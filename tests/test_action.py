"""The GitHub Action (action.yml) and its shell step, run here as GitHub would run it:
against ``embedded``, with a fake ``GITHUB_STEP_SUMMARY`` and ``GITHUB_OUTPUT``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_osfoundry.server import LoopbackServer, ReferenceServer

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".github" / "osf-action.sh"
ACTION = (ROOT / "action.yml").read_text(encoding="utf-8")

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or sys.platform == "win32", reason="the step is a bash script"
)


def run_action(tmp_path: Path, cwd: Path | None = None, **inputs: str) -> tuple[int, str, Path]:
    """Run the step with ``inputs`` (``target="embedded"`` → ``OSF_ACTION_TARGET``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSF_", "GITHUB_"))}
    env.update(
        {
            "OSF_ACTION_INSTALL": "false",  # the kit is installed in this environment already
            "OSF_ACTION_PYTHON": sys.executable,
            "OSF_ACTION_OUTPUT_DIR": str(tmp_path / "osf-results"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        }
    )
    env.update({f"OSF_ACTION_{k.upper()}": v for k, v in inputs.items()})
    done = subprocess.run(
        ["bash", str(SCRIPT)],
        cwd=cwd or tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, done.stdout + done.stderr, tmp_path / "osf-results"


def test_the_action_runs_green_against_embedded(tmp_path: Path) -> None:
    code, text, out = run_action(tmp_path, target="embedded")
    assert code == 0, text[-3000:]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## osFoundry conformance: ")
    report = json.loads((out / "osf-report.json").read_text(encoding="utf-8"))
    assert report["summary"]["ok"] is True and report["summary"]["not_run"] == 0
    junit = (out / "osf-junit.xml").read_text(encoding="utf-8")
    assert "<testsuite" in junit and 'failures="0"' in junit
    outputs = (tmp_path / "output.txt").read_text(encoding="utf-8")
    assert f"report={out / 'osf-report.json'}" in outputs and "exit-code=0" in outputs


def test_the_action_fails_a_broken_server_and_still_writes_the_summary(tmp_path: Path) -> None:
    code, text, out = run_action(
        tmp_path,
        cwd=ROOT,  # embedded:MODULE:FACTORY may name a module of the checked-out repository
        target="embedded:tests.conformance.variants:idempotency_ignored",
        level="documented",
    )
    assert code == 1, text[-3000:]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "❌ failed" in summary and "`D7-retry-same-key`" in summary
    report = json.loads((out / "osf-report.json").read_text(encoding="utf-8"))
    assert report["level"] == "documented"
    assert report["summary"]["failed_unexpectedly"] >= 1


def test_the_action_is_strict_about_missing_credentials(tmp_path: Path) -> None:
    server = ReferenceServer()
    made = server.provision()
    with LoopbackServer(server) as loop:
        code, text, out = run_action(
            tmp_path,
            target=loop.origin + "/mcp",
            agent_token=made.agent_token,
            desktop_token=made.desktop_token,
            project_id=made.project_id,
            read_token="",  # a secret that was never defined
        )
    assert code == 1, text[-3000:]
    report = json.loads((out / "osf-report.json").read_text(encoding="utf-8"))
    assert report["summary"]["skipped"] == 0 and report["summary"]["not_run"] > 0
    assert "--osf-read-token" in report["summary"]["options_to_run_them"]
    assert made.agent_token not in text
    assert made.agent_token not in (out / "osf-junit.xml").read_text(encoding="utf-8")


def test_a_configuration_error_is_one_message_and_a_summary(tmp_path: Path) -> None:
    code, text, _ = run_action(tmp_path, target="embedded", baseline="no-such-baseline.txt")
    assert code == 4
    assert text.count("ERROR: --osf-baseline: cannot read baseline") == 1
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")  # the refused run's report
    assert "❌ not ok (exit status 4)" in summary and "--osf-baseline: cannot read" in summary


def test_a_refused_preflight_leaves_a_summary_that_is_not_green(tmp_path: Path) -> None:
    out = tmp_path / "osf-results"
    out.mkdir()
    (out / "osf-summary.md").write_text("## osFoundry conformance: 117 passed\n", encoding="utf-8")
    with LoopbackServer(ReferenceServer()) as loop:
        url = loop.origin + "/mcp"
    code, text, out = run_action(tmp_path, target=url, agent_token="t", project_id="p")
    assert code == 4, text[-3000:]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "117 passed" not in summary  # the earlier run's file was removed first
    assert "**❌ not ok (exit status 4)**" in summary and "### Not run (" in summary
    report = json.loads((out / "osf-report.json").read_text(encoding="utf-8"))
    assert report["summary"]["ok"] is False and report["summary"]["not_run"] > 0
    junit = (out / "osf-junit.xml").read_text(encoding="utf-8")
    assert f'errors="{report["summary"]["not_run"]}"' in junit


def test_an_empty_target_is_refused(tmp_path: Path) -> None:
    code, text, _ = run_action(tmp_path, target="")
    assert code == 4 and "the 'target' input is empty" in text


def test_every_input_reaches_the_script() -> None:
    section = ACTION.split("\ninputs:\n", 1)[1].split("\noutputs:\n", 1)[0]
    inputs = re.findall(r"^  ([a-z][a-z-]*):\n    description:", section, flags=re.M)
    assert {"target", "agent-token", "baseline", "level"} <= set(inputs)
    script = SCRIPT.read_text(encoding="utf-8")
    for name in inputs:
        env = "OSF_ACTION_" + name.upper().replace("-", "_")
        assert f"{env}: ${{{{ inputs.{name} }}}}" in ACTION, name
        short = env[len("OSF_ACTION_") :]
        assert env in script or f" {short} " in script or f" {short}\n" in script, name
    assert '"$GITHUB_ACTION_PATH/.github/osf-action.sh"' in ACTION
    assert "using: composite" in ACTION


def test_the_readme_lists_every_input_as_action_yml_declares_it() -> None:
    """The README's list of inputs is action.yml's, and calls none required
    that action.yml does not (it once said `target` was required and left out
    `relay-command`)."""
    section = ACTION.split("\ninputs:\n", 1)[1].split("\noutputs:\n", 1)[0]
    declared = re.findall(r"^  ([a-z][a-z-]*):\n    description:", section, flags=re.M)
    required = set(
        re.findall(r"^  ([a-z][a-z-]*):\n(?:    .*\n)*?    required: true", section, flags=re.M)
    )
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = readme.split("\nInputs ", 1)[1].split(".\n", 1)[0]
    listed = re.findall(r"`([a-z][a-z-]*)`(?! or `)(?:,| \(|\.|$)", said)
    assert sorted(listed) == sorted(declared), (listed, declared)
    assert ("(required)" in said) is bool(required)
    assert required == set(), "every input is optional: the script asks for target or relay-command"


def test_the_action_checks_a_relay_command_from_the_calling_repository(tmp_path: Path) -> None:
    """A relay command runs from the caller's root: here the kit's own broken relay
    module, which only imports from there, fails its checks (and the summary says so)."""
    code, text, _ = run_action(
        tmp_path,
        cwd=ROOT,
        relay_command=f"{sys.executable} -m tests.relay_conformance.broken wrong-token",
    )
    assert code == 4, text[-3000:]
    assert "token that is not OSF_DESKTOP_TOKEN" in text
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")  # the refused run's report
    assert (
        "❌ not ok (exit status 4)" in summary and "token that is not OSF_DESKTOP_TOKEN" in summary
    )


def test_the_action_checks_an_agent_command_from_the_calling_repository(tmp_path: Path) -> None:
    """An agent command runs from the caller's root too: a module of the kit's tests
    that only imports from there is found (its preflight refusal names its exit, not a
    missing module), and the refused run's summary says so."""
    code, text, _ = run_action(
        tmp_path,
        cwd=ROOT,
        agent_command=f"{sys.executable} -c 'import tests.agent_conformance.broken; exit(5)'",
    )
    assert code == 4, text[-3000:]
    assert "the agent command exited (status 5) before its first tool call" in text
    assert "ModuleNotFoundError" not in text
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "❌ not ok (exit status 4)" in summary and "A4-no-fan-out" in summary


def test_the_agent_switches_reach_the_suite(tmp_path: Path) -> None:
    """``agent-restart: true`` puts the restart check in the run (here listed as not run
    by the refused preflight, and absent without it); a value other than true/false is
    one message naming the input."""
    refused = f"{sys.executable} -c 'exit(5)'"
    planned = {}
    for switch in ("true", ""):
        folder = tmp_path / (switch or "off")
        folder.mkdir()
        code, text, _ = run_action(
            folder, agent_command=refused, agent_restart=switch, agent_realtime=switch
        )
        assert code == 4, text[-3000:]
        planned[switch] = (folder / "summary.md").read_text(encoding="utf-8")
    assert "R5-agent-resumes-after-restart" in planned["true"]
    assert "R5-agent-resumes-after-restart" not in planned[""]
    assert "A4-no-fan-out" in planned[""]
    code, text, _ = run_action(tmp_path, agent_command="embedded", agent_realtime="yes")
    assert code == 4
    assert "the 'agent-realtime' input must be true or false, got 'yes'" in text
