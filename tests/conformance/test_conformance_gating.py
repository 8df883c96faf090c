"""Gating: a CI run cannot go green by accident, and a configuration error is one message.

Each mistake a user makes (an empty CI secret, a wrong token or project id, a down or
non-MCP target, a report path that cannot be written, a baseline in another encoding)
ends the run before any check with exactly one message naming the option, and
pytest's usage-error exit code (4).
"""

from __future__ import annotations

import codecs
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.reporting._baseline import BaselineError, read_baseline
from pytest_osfoundry.server import LoopbackServer, ReferenceServer
from pytest_osfoundry.server._app import Provisioned
from tests.conformance.osf_conformance_kit import SuiteRun
from tests.sigint import ctrl_c_delivered

USAGE = pytest.ExitCode.USAGE_ERROR


@pytest.fixture
def served() -> Iterator[tuple[str, Provisioned]]:
    """A reference server on a loopback port: its MCP URL and credentials."""
    server = ReferenceServer()
    made = server.provision()
    loop = LoopbackServer(server)
    try:
        yield loop.origin + "/mcp", made
    finally:
        loop.close()


def _creds(made: Provisioned, **override: str) -> list[str]:
    values = {
        "agent-token": made.agent_token,
        "other-agent-token": made.other_agent_token,
        "read-token": made.read_token,
        "desktop-token": made.desktop_token,
        "project-id": made.project_id,
        **override,
    }
    return [f"--osf-{name}={value}" for name, value in values.items()]


def _one_error(run: SuiteRun, *needles: str) -> str:
    assert run.result.ret == USAGE, run.text[-2000:]
    lines = [ln for ln in run.text.splitlines() if ln.startswith("ERROR:")]
    assert len(lines) == 1, run.text[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]
    # A refused run still writes its report: not ok, the reason, every check not run.
    summary = run.report["summary"]
    assert summary["ok"] is False and summary["passed"] == summary["failed"] == 0
    assert summary["stopped"].startswith(("the preflight refused the target: ", "refused "))
    assert summary["stopped"].partition(": ")[2] in lines[0]
    assert summary["not_run"] == len(run.report["checks"]) > 0
    assert run.report["exit_status"] == USAGE
    assert "passed" not in run.text and "FAILED" not in run.text
    return lines[0]


def test_an_empty_osf_variable_is_an_error(
    run_suite: Callable[..., SuiteRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSF_AGENT_TOKEN", "")
    _one_error(run_suite("--osf-target=embedded"), "OSF_AGENT_TOKEN is set but empty")


@pytest.mark.parametrize(
    ("override", "option"),
    [
        ({"agent-token": "wrong-agent-token"}, "--osf-agent-token: the server refused it"),
        ({"read-token": "wrong-read-token"}, "--osf-read-token: the server refused it"),
        ({"project-id": "no-such-project"}, "--osf-project-id: list_graph_sessions"),
        ({"desktop-token": "wrong-desktop-token"}, "--osf-desktop-token: the relay API refused"),
    ],
)
def test_a_wrong_credential_is_one_message(
    run_suite: Callable[..., SuiteRun],
    served: tuple[str, Provisioned],
    override: dict[str, str],
    option: str,
) -> None:
    url, made = served
    line = _one_error(run_suite(f"--osf-target={url}", *_creds(made, **override)), option)
    for token in (made.agent_token, made.desktop_token, *override.values()):
        if "token" in token:
            assert token not in line


def test_a_wrong_stranger_token_is_one_message(
    run_suite: Callable[..., SuiteRun], served: tuple[str, Provisioned]
) -> None:
    url, made = served
    run = run_suite(
        f"--osf-target={url}",
        *_creds(made),
        "--osf-stranger-token=not-a-stranger",
        f"--osf-stranger-project-id={made.stranger_project_id}",
    )
    _one_error(run, "--osf-stranger-token: the server refused it")


def test_a_down_target_is_one_message(run_suite: Callable[..., SuiteRun]) -> None:
    loop = LoopbackServer(ReferenceServer())
    url = loop.origin + "/mcp"
    loop.close()  # the port is free again: nothing answers there
    _one_error(run_suite(f"--osf-target={url}"), "cannot reach it", url)


def test_a_down_target_under_xdist_is_one_message(run_suite: Callable[..., SuiteRun]) -> None:
    loop = LoopbackServer(ReferenceServer())
    url = loop.origin + "/mcp"
    loop.close()
    _one_error(run_suite(f"--osf-target={url}", "-n", "2"), "cannot reach it")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_target_that_is_not_mcp_is_one_message(
    run_suite: Callable[..., SuiteRun], tmp_path: Path
) -> None:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
        _one_error(run_suite(f"--osf-target={url}"), "is not an MCP endpoint", "HTTP 501")
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_factory_that_raises_is_one_message(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    pytester.makepyfile(osf_broken_factory="def make():\n    raise RuntimeError('no db')\n")
    pytester.syspathinsert()
    run = run_suite("--osf-target=embedded:osf_broken_factory:make")
    _one_error(run, "the factory raised RuntimeError: no db")


@pytest.mark.parametrize(
    ("option", "named"),
    [
        ("--osf-timeout=soon", "--osf-timeout: expected a whole number, got 'soon'"),
        ("--osf-level=most", "--osf-level: expected 'documented' or 'all', got 'most'"),
        ("--osf-target=embedded:no_such_module:make", "cannot import 'no_such_module'"),
        ("--osf-baseline=missing-baseline.txt", "--osf-baseline: "),
    ],
)
def test_a_refused_option_is_one_message_and_writes_the_reports(
    run_suite: Callable[..., SuiteRun], option: str, named: str
) -> None:
    run = run_suite("--osf-target=embedded", option)
    line = _one_error(run, named)
    assert run.report["summary"]["stopped"] == f"refused before any check: {line[7:]}"


def test_ctrl_c_during_the_preflight_writes_the_reports(
    run_suite: Callable[..., SuiteRun],
) -> None:
    """Ctrl-C while the preflight waits for its first answer: exit 2 at once (not after
    the 30 s deadline: the report would then say the preflight refused the target)."""
    from tests.conformance import variants_endings

    variants_endings.RELEASE.clear()
    try:
        with ctrl_c_delivered():
            run = run_suite(
                "--osf-target=embedded:tests.conformance.variants_endings:ctrl_c_at_once",
                "--osf-timeout=30",
            )
    finally:
        variants_endings.RELEASE.set()
    assert run.result.ret == pytest.ExitCode.INTERRUPTED, run.text[-2000:]
    summary = run.report["summary"]
    assert summary["stopped"] == "interrupted (Ctrl-C / KeyboardInterrupt), during the preflight"
    assert summary["ok"] is False and run.report["exit_status"] == 2
    assert summary["not_run"] == len(run.report["checks"]) > 100


@pytest.mark.parametrize("option", ["--osf-report", "--osf-markdown", "--osf-write-baseline"])
def test_an_output_path_naming_a_folder_fails_at_start(
    pytester: pytest.Pytester, option: str
) -> None:
    (pytester.path / "out").mkdir()
    result = pytester.runpytest("--osf-target=embedded", f"{option}=out")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines([f"ERROR: {option}: out is a folder; name a file in it"])
    assert "passed" not in result.stdout.str()


def test_an_output_path_under_a_file_fails_at_start(pytester: pytest.Pytester) -> None:
    (pytester.path / "notes.txt").write_text("x", encoding="utf-8")
    result = pytester.runpytest("--osf-target=embedded", "--osf-report=notes.txt/r.json")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(["ERROR: --osf-report: notes.txt is a file, so nothing*"])


@pytest.mark.parametrize(
    "data",
    [
        b"D6-get-other-agent\n",
        codecs.BOM_UTF8 + b"D6-get-other-agent\n",
        "D6-get-other-agent\r\n".encode("utf-16"),  # with a BOM, as PowerShell writes
        codecs.BOM_UTF16_BE + "D6-get-other-agent\n".encode("utf-16-be"),
    ],
)
def test_baselines_are_read_in_utf8_and_utf16(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "baseline.txt"
    path.write_bytes(data)
    assert read_baseline(path).ids == ("D6-get-other-agent",)


def test_a_baseline_in_another_encoding_is_one_line(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.txt"
    path.write_bytes("# café\nD6-get-other-agent\n".encode("latin-1"))
    with pytest.raises(BaselineError, match="is not UTF-8 text"):
        read_baseline(path)
    result = pytester.runpytest("--osf-target=embedded", f"--osf-baseline={path}")
    assert result.ret == USAGE
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines(["ERROR: --osf-baseline: *is not UTF-8 text*"])


def test_the_closing_line_names_what_did_not_run(
    run_suite: Callable[..., SuiteRun], served: tuple[str, Provisioned]
) -> None:
    url, made = served
    run = run_suite(f"--osf-target={url}", *_creds(made), "-k", "R3")
    assert run.result.ret == pytest.ExitCode.OK
    summary = run.report["summary"]
    skipped = run.ids("skipped")
    assert skipped and summary["not_run"] == len(skipped)
    assert "--osf-stranger-token" in summary["options_to_run_them"]
    assert f"{len(skipped)} check" in summary["line"] and "did not run" in summary["line"]
    assert "--osf-stranger-token" in summary["line"]


def test_strict_fails_every_check_that_could_not_run(
    run_suite: Callable[..., SuiteRun],
    served: tuple[str, Provisioned],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, made = served
    monkeypatch.setenv("OSF_STRICT", "1")
    run = run_suite(f"--osf-target={url}", *_creds(made), "-k", "R3")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert run.ids("skipped") == set()
    failed = run.ids("failed")
    assert failed and all(c.startswith("R3") for c in failed)
    messages = [c["message"] for c in run.report["checks"] if c["outcome"] == "failed"]
    assert all(m.startswith("could not run, a failure under --osf-strict: needs") for m in messages)
    summary = run.report["summary"]
    assert summary["not_run"] == len(failed)
    # The closing line names what would let them run: not --osf-strict, which was given.
    assert summary["options_to_run_them"] == [
        "--osf-stranger-token",
        "--osf-stranger-project-id",
    ], summary
    assert "--osf-strict" not in summary["line"].split("did not run", 1)[1], summary["line"]


def test_strict_against_a_complete_target_passes(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite("--osf-target=embedded", "--osf-strict", "-k", "R3 or D3")
    assert run.result.ret == pytest.ExitCode.OK, run.text[-2000:]
    assert run.report["summary"]["not_run"] == 0


def test_a_narrow_terminal_wraps_the_reason_under_the_row() -> None:
    from pytest_osfoundry.conformance.reporting._results import CheckResult, Results, terminal_lines

    results = Results()
    reason = "needs --osf-stranger-desktop-token (or OSF_STRANGER_DESKTOP_TOKEN)"
    results.checks["n"] = CheckResult(
        "R12-stranger-desktop",
        "R12",
        "reconstructed",
        "relay",
        "",
        "",
        0,
        "n",
        outcome="skipped",
        message=reason,
    )
    lines = [text for text, _ in terminal_lines(results, results.summary(None), "h", False, 60)]
    assert all(len(line) <= 60 for line in lines), lines
    row = next(i for i, line in enumerate(lines) if "R12-stranger-desktop" in line)
    beside = lines[row].split("R12-stranger-desktop", 1)[1]
    assert " ".join(" ".join([beside, *lines[row + 1 : row + 3]]).split()) == reason
    assert lines[row + 1].startswith("      ") and "did not run" in lines[row + 3]
    wide = [text for text, _ in terminal_lines(results, results.summary(None), "h", False, 200)]
    assert any(line.endswith(reason) and "R12-stranger-desktop" in line for line in wide)


def test_a_preflight_that_crashes_writes_the_reports_with_exit_status_3(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A preflight that raises what it did not foresee is pytest's internal error (3):
    the reports asked for are written all the same and say so, credentials masked."""
    from pytest_osfoundry.conformance.plugin import _setup

    def crash(target: object, protocol: object) -> None:
        raise RuntimeError("boom with sk-crash-secret-0123456789")

    monkeypatch.setattr(_setup, "preflight", crash)
    paths = {k: pytester.path / f"r.{k}" for k in ("json", "md", "xml")}
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--osf-target=embedded",
        "--osf-agent-token=sk-crash-secret-0123456789",
        f"--osf-report={paths['json']}",
        f"--osf-markdown={paths['md']}",
        f"--junitxml={paths['xml']}",
    )
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    report = json.loads(paths["json"].read_text(encoding="utf-8"))
    summary = report["summary"]
    assert summary["ok"] is False and report["exit_status"] == 3
    assert summary["stopped"].startswith("the preflight crashed: RuntimeError: boom")
    assert summary["not_run"] == len(report["checks"]) > 0
    assert "❌ not ok (exit status 3)" in paths["md"].read_text(encoding="utf-8")
    assert "D6-get-other-agent" in paths["xml"].read_text(encoding="utf-8")
    for path in paths.values():
        assert "sk-crash-secret-0123456789" not in path.read_text(encoding="utf-8")
