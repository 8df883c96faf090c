"""The conformance suite against targets that misbehave at the transport level."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator

import pytest

# Imported by this process, so that the suite's modules are the same in each in-process
# run below (pytester drops the modules a run imported; a check collected by a second
# run would carry a CheckInfo of another class than the plugin's).
import pytest_osfoundry.conformance.plugin._setup  # noqa: F401
from tests.conformance.variants_protocol import sse_every_form
from tests.hostile.osf_hostile_kit import HostileServer, OpenStreamServer


@pytest.fixture(autouse=True)
def _no_osf_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("OSF_"):
            monkeypatch.delenv(name)
    yield


def _report(pytester: pytest.Pytester) -> dict[str, object]:
    data: dict[str, object] = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    return data


def test_suite_passes_a_server_leaving_its_event_streams_open(
    pytester: pytest.Pytester,
) -> None:
    # Each stream in every form the SSE format allows (a priming event, the answer over
    # several data lines, CR/LF/CRLF, comments), then left open after an unended event.
    server = sse_every_form()
    made = server.provision()
    door = OpenStreamServer(server)
    server.serve_at(door.origin)  # a door of its own: it names the app's public URL
    try:
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            f"--osf-report={pytester.path / 'r.json'}",
            f"--osf-target={door.origin}/mcp",
            f"--osf-agent-token={made.agent_token}",
            f"--osf-other-agent-token={made.other_agent_token}",
            f"--osf-read-token={made.read_token}",
            f"--osf-desktop-token={made.desktop_token}",
            f"--osf-project-id={made.project_id}",
            f"--osf-stranger-token={made.stranger_token}",
            f"--osf-stranger-desktop-token={made.stranger_desktop_token}",
            f"--osf-stranger-project-id={made.stranger_project_id}",
            "--osf-timeout=5",
        )
    finally:
        door.close()
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert door.held > 50  # the streams really were left open
    checks = _report(pytester)["checks"]
    assert isinstance(checks, list)
    assert {c["outcome"] for c in checks} == {"passed"}


def test_a_target_that_stops_answering_ends_the_run_early(pytester: pytest.Pytester) -> None:
    with HostileServer("handshake-then-silence") as server:
        start = time.monotonic()
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            f"--osf-report={pytester.path / 'r.json'}",
            f"--osf-target={server.url}",
            "--osf-agent-token=agent-secret-token",
            "--osf-desktop-token=desk-secret-token",
            "--osf-project-id=p1",
            "--osf-timeout=1",
        )
        elapsed = time.monotonic() - start
    text = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert elapsed < 40  # 3 time-outs of 1 s, not one per check (100+)
    assert text.count("the target stopped answering") >= 1
    checks = _report(pytester)["checks"]
    assert isinstance(checks, list)
    ran = [c for c in checks if c["outcome"] != "skipped"]
    assert len(ran) < 10, [c["id"] for c in ran]
    assert "agent-secret-token" not in text


def test_a_huge_tool_answer_fails_its_checks_in_bounded_time_and_memory(
    pytester: pytest.Pytester,
) -> None:
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    with HostileServer("huge-get-graph-run") as server:
        start = time.monotonic()
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            f"--osf-report={pytester.path / 'r.json'}",
            f"--osf-target={server.url}",
            "--osf-agent-token=agent-secret-token",
            "--osf-desktop-token=desk-secret-token",
            "--osf-project-id=p1",
            "--osf-timeout=10",
            "--osf-max-response=1",
        )
        elapsed = time.monotonic() - start
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    report = _report(pytester)
    summary = report["summary"]
    assert isinstance(summary, dict) and isinstance(report["checks"], list)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert summary["ok"] is False and summary["stopped"] is None  # it ran to its end
    huge = [c for c in report["checks"] if "the response exceeded 1 MiB" in c["message"]]
    assert huge, [c["message"] for c in report["checks"]][:5]
    assert elapsed < 120, elapsed
    assert grown_mb < 150, grown_mb  # never the 300 MB answer held
