"""Running the suite: against the reference server every check passes, from any folder.

Also: options and their environment variables, levels, the header, credentials that
were not given, bad targets, and servers built by your own factory.
"""

from __future__ import annotations

import socket
import textwrap
from collections.abc import Callable, Iterator

import pytest

from pytest_osfoundry import SPEC_REVISION, __version__
from pytest_osfoundry.conformance.plugin._setup import CHECKS_DIR
from pytest_osfoundry.conformance.suite._options import OPTIONS
from pytest_osfoundry.conformance.suite._registry import all_checks
from pytest_osfoundry.server import LoopbackServer, Provisioned, ReferenceServer
from tests.conformance.osf_conformance_kit import SuiteRun


def test_reference_server_passes_every_check(
    run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    run = run_suite("--osf-target=embedded")
    assert run.result.ret == pytest.ExitCode.OK, run.text[-4000:]
    assert run.ids("passed") == default_ids
    assert run.report["summary"]["ok"] is True
    run.result.assert_outcomes(passed=len(default_ids), deselected=1)
    run.result.stdout.fnmatch_lines(
        [
            f"osfoundry conformance suite {__version__} (spec {SPEC_REVISION}): "
            "target embedded, level all, MCP protocol auto",
            "*= osfoundry conformance =*",
            "schema",
            "  passed * D3-tools-list-without-token *",
            "relay API",
            f"{len(default_ids)} passed, 0 failed, 0 skipped",
        ]
    )


def test_suite_passes_against_the_event_stream_flavour(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    pytester.makepyfile(
        osf_sse_factory="""
        from pytest_osfoundry.server import ReferenceServer

        def server():
            return ReferenceServer(sse=True)
        """
    )
    pytester.syspathinsert()
    run = run_suite("--osf-target=embedded:osf_sse_factory:server")
    assert run.ids("passed") == default_ids, run.text[-4000:]


def test_documented_level_leaves_out_reconstructed_checks(
    run_suite: Callable[..., SuiteRun],
) -> None:
    run = run_suite("--osf-target=embedded", "--osf-level=documented")
    documented = {c.check_id for c in all_checks() if c.level == "documented" and not c.opt_in}
    assert set(run.outcomes) == documented
    assert all(c["level"] == "documented" for c in run.report["checks"])
    assert run.ids("passed") == documented
    assert {"R2-unauthenticated-refused", "R2-read-token-cannot-run"} <= documented


def test_level_markers_select_checks(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite("--osf-target=embedded", "-m", "reconstructed", "-k", "D3")
    assert set(run.outcomes) == {
        "D3-schemas-closed",
        "D3-schemas-valid",
        "D3-started-by-this-agent",
        "D3-same-tools-for-every-caller",
    }


def test_options_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, run_suite: Callable[..., SuiteRun]
) -> None:
    monkeypatch.setenv("OSF_TARGET", "embedded")
    monkeypatch.setenv("OSF_LEVEL", "documented")
    run = run_suite("-k", "D3")
    assert set(run.outcomes) == {
        c.check_id for c in all_checks() if c.rule == "D3" and c.level == "documented"
    }
    assert run.result.ret == 0


def test_command_line_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch, run_suite: Callable[..., SuiteRun]
) -> None:
    monkeypatch.setenv("OSF_TARGET", "https://never.invalid/mcp")
    run = run_suite("--osf-target=embedded", "-k", "D5")
    assert run.outcomes == {"D5-unknown-run": "passed"}


def test_help_lists_every_option_with_its_environment_variable(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    out = " ".join(result.stdout.str().split())
    assert "osfoundry:" in out
    for spec in OPTIONS:
        assert spec.flag in out
        assert f"[env: {spec.env}]" in out


def test_unusable_target_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--osf-target=ftp://example.org/mcp")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*neither an http(s) URL of an MCP endpoint nor*"])
    result = pytester.runpytest("--osf-target=embedded:no_colon_here")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result = pytester.runpytest("--osf-target=embedded", "--osf-level=some")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--osf-level: expected 'documented' or 'all'*"])


def test_factory_that_cannot_be_imported_is_one_usage_error(
    run_suite: Callable[..., SuiteRun],
) -> None:
    run = run_suite("--osf-target=embedded:osf_no_such_module:server")
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    assert run.text.count("cannot import 'osf_no_such_module'") == 1
    summary = run.report["summary"]  # written all the same: not ok, nothing ran
    assert summary["ok"] is False and summary["not_run"] == len(run.report["checks"])
    assert "cannot import 'osf_no_such_module'" in summary["stopped"]


def test_checks_without_a_target_skip(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite(str(CHECKS_DIR / "test_access.py"), "-k", "D5")
    run.result.assert_outcomes(skipped=1)
    assert run.report["checks"][0]["message"] == (
        "no target: pass --osf-target=URL or --osf-target=embedded"
    )


def test_given_paths_run_instead_of_the_suite(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    pytester.makepyfile(test_mine="def test_one():\n    pass\n")
    run = run_suite("--osf-target=embedded", "test_mine.py")
    run.result.assert_outcomes(passed=1)
    assert run.report["checks"] == []


def test_suite_is_collected_whatever_python_files_says(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    pytester.makeini("[pytest]\npython_files = check_*.py\n")
    run = run_suite("--osf-target=embedded", "-k", "D5 or D9")
    assert run.outcomes == {"D5-unknown-run": "passed", "D9-command-id-uuid": "passed"}


@pytest.fixture
def loopback() -> Iterator[tuple[LoopbackServer, ReferenceServer, Provisioned]]:
    server = ReferenceServer()
    made = server.provision()
    loop = LoopbackServer(server)
    try:
        yield loop, server, made
    finally:
        loop.close()


def test_missing_credentials_skip_naming_their_option(
    run_suite: Callable[..., SuiteRun],
    loopback: tuple[LoopbackServer, ReferenceServer, Provisioned],
    default_ids: set[str],
) -> None:
    loop, _, made = loopback
    run = run_suite(
        f"--osf-target={loop.origin}/mcp",
        f"--osf-agent-token={made.agent_token}",
        f"--osf-desktop-token={made.desktop_token}",
        f"--osf-project-id={made.project_id}",
    )
    assert run.ids("failed") == set(), run.text[-4000:]
    messages = {c["id"]: c["message"] for c in run.report["checks"]}
    assert messages["D6-get-other-agent"] == (
        "needs --osf-other-agent-token (or OSF_OTHER_AGENT_TOKEN)"
    )
    assert messages["R2-read-token-cannot-run"] == "needs --osf-read-token (or OSF_READ_TOKEN)"
    assert messages["R13-other-owner-404"] == (
        "needs --osf-stranger-desktop-token (or OSF_STRANGER_DESKTOP_TOKEN)"
    )
    assert "D7-retry-same-key" in run.ids("passed")
    assert run.ids("passed") | run.ids("skipped") == default_ids
    run.result.stdout.fnmatch_lines(["*passed, 0 failed, * skipped; * checks did not run*"])


def test_a_foreign_url_is_checked_like_the_embedded_server(
    run_suite: Callable[..., SuiteRun],
    loopback: tuple[LoopbackServer, ReferenceServer, Provisioned],
    default_ids: set[str],
) -> None:
    loop, server, made = loopback
    run = run_suite(
        f"--osf-target={loop.origin}/mcp",
        f"--osf-agent-token={made.agent_token}",
        f"--osf-other-agent-token={made.other_agent_token}",
        f"--osf-read-token={made.read_token}",
        f"--osf-desktop-token={made.desktop_token}",
        f"--osf-project-id={made.project_id}",
        f"--osf-stranger-token={made.stranger_token}",
        f"--osf-stranger-desktop-token={made.stranger_desktop_token}",
        f"--osf-stranger-project-id={made.stranger_project_id}",
    )
    assert run.ids("passed") == default_ids, run.text[-4000:]
    assert run.report["target"] == f"{loop.origin}/mcp"
    counts = server.state.counts()
    assert counts["queued"] == 0 and counts["running"] == 0  # every run was ended


def test_your_own_factory_is_documented_by_example(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        osf_my_factory=textwrap.dedent(
            """
            from pytest_osfoundry.server import ReferenceServer

            def build():
                return ReferenceServer(mcp_path="/api/mcp")
            """
        )
    )
    pytester.syspathinsert()
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-q",
        "--osf-target=embedded:osf_my_factory:build",
        "-k",
        "R2-resource",
    )
    result.assert_outcomes(passed=1)


def test_unreachable_target_says_so_once(run_suite: Callable[..., SuiteRun]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    run = run_suite(f"--osf-target=http://127.0.0.1:{port}/mcp", "-k", "D5 or D9")
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    summary = run.report["summary"]  # written, and not green: nothing ran
    assert summary["ok"] is False and summary["passed"] == 0 and summary["not_run"] > 0
    assert run.text.count(f"--osf-target http://127.0.0.1:{port}/mcp: cannot reach it") == 1
