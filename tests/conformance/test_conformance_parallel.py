"""Parallel runs: checks never depend on each other's state.

The trap is the project's shared session list: a sync replaces it and returns every
queued command. The suite syncs one fixed list everywhere and only touches its own
runs, so xdist workers — and whole pytest sessions — can share one server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from pytest_osfoundry.server import LoopbackServer, Provisioned, ReferenceServer
from tests.conformance.osf_conformance_kit import SuiteRun


def test_two_workers_embedded(run_suite: Callable[..., SuiteRun], default_ids: set[str]) -> None:
    run = run_suite("-n", "2", "--osf-target=embedded")
    assert run.result.ret == pytest.ExitCode.OK, run.text[-4000:]
    assert run.ids("passed") == default_ids
    # the controller runs no check: it learns the revision the workers settled
    assert run.report["protocol"] == "auto → 2026-07-28"
    run.result.stdout.fnmatch_lines(["target embedded * MCP protocol auto → 2026-07-28*"])


def test_two_workers_report_the_revision_a_legacy_target_settled(
    run_suite: Callable[..., SuiteRun],
) -> None:
    target = "--osf-target=embedded:tests.conformance.variants_protocol:only_2025_06_18"
    run = run_suite("-n", "2", target, "-k", "D6 or R1-initialize")
    assert run.result.ret == pytest.ExitCode.OK, run.text[-4000:]
    assert run.report["protocol"] == "auto → 2025-06-18"
    run.result.stdout.fnmatch_lines(["*MCP protocol auto → 2025-06-18*"])


@pytest.fixture
def shared() -> Iterator[tuple[LoopbackServer, ReferenceServer, Provisioned]]:
    server = ReferenceServer()
    made = server.provision()
    loop = LoopbackServer(server)
    try:
        yield loop, server, made
    finally:
        loop.close()


def _environment(loop: LoopbackServer, made: Provisioned) -> dict[str, str]:
    return {
        "OSF_TARGET": f"{loop.origin}/mcp",
        "OSF_AGENT_TOKEN": made.agent_token,
        "OSF_OTHER_AGENT_TOKEN": made.other_agent_token,
        "OSF_READ_TOKEN": made.read_token,
        "OSF_DESKTOP_TOKEN": made.desktop_token,
        "OSF_PROJECT_ID": made.project_id,
        "OSF_STRANGER_TOKEN": made.stranger_token,
        "OSF_STRANGER_DESKTOP_TOKEN": made.stranger_desktop_token,
        "OSF_STRANGER_PROJECT_ID": made.stranger_project_id,
    }


def test_two_workers_one_url(
    monkeypatch: pytest.MonkeyPatch,
    run_suite: Callable[..., SuiteRun],
    shared: tuple[LoopbackServer, ReferenceServer, Provisioned],
    default_ids: set[str],
) -> None:
    loop, server, made = shared
    for name, value in _environment(loop, made).items():
        monkeypatch.setenv(name, value)
    run = run_suite("-n", "2")
    assert run.result.ret == pytest.ExitCode.OK, run.text[-4000:]
    assert run.ids("passed") == default_ids
    counts = server.state.counts()
    assert counts["queued"] == 0 and counts["running"] == 0


def test_two_sessions_at_once_one_url(
    pytester: pytest.Pytester,
    shared: tuple[LoopbackServer, ReferenceServer, Provisioned],
    default_ids: set[str],
) -> None:
    """Two pytest sessions (each running its checks concurrently, as by default) share
    one server; xdist workers sharing one are ``test_two_workers_one_url``'s case."""
    loop, server, made = shared
    env = {**os.environ, **_environment(loop, made)}
    procs = []
    for n in (1, 2):
        report = pytester.path / f"run{n}.json"
        procs.append(
            (
                report,
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "pytest",
                        "-p",
                        "no:cacheprovider",
                        "-q",
                        f"--osf-report={report}",
                    ],
                    cwd=pytester.path,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                ),
            )
        )
    for report, proc in procs:
        out, _ = proc.communicate(timeout=180)
        text = out.decode("utf-8", "replace")
        assert proc.returncode == 0, text[-4000:]
        checks = json.loads(report.read_text(encoding="utf-8"))["checks"]
        assert {c["id"] for c in checks if c["outcome"] == "passed"} == default_ids
    counts = server.state.counts()
    assert counts["queued"] == 0 and counts["running"] == 0
