"""Liveness: a server hanging on one tool is not a server that is gone; and a target
that answers nothing costs the user the time-out the messages state, no more.

The hanging server runs on a loopback port of its own with more worker threads than
the suite has checks in flight (64 against 16), as an asynchronous server would
never run out of them; the suite talks to it as to any URL target.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from pytest_osfoundry.client import DeadlineExceeded
from pytest_osfoundry.conformance.server._eras import served_revisions
from pytest_osfoundry.conformance.server._liveness import liveness_of
from pytest_osfoundry.conformance.server._target import resolve_target
from pytest_osfoundry.conformance.suite._options import Settings
from pytest_osfoundry.server import LoopbackServer
from tests.conformance.osf_conformance_kit import SuiteRun
from tests.conformance.variants_liveness import TIMEOUT, hangs_on_cancel
from tests.hostile.osf_hostile_kit import HostileServer


@pytest.fixture
def hanging_url_args() -> Iterator[list[str]]:
    """The options that point the suite at a server hanging on ``cancel_graph_run``."""
    server = hangs_on_cancel()
    made = server.provision()
    door = LoopbackServer(server, workers=64)
    server.serve_at(door.origin)
    try:
        yield [
            f"--osf-target={door.origin}{server.mcp_path}",
            f"--osf-agent-token={made.agent_token}",
            f"--osf-other-agent-token={made.other_agent_token}",
            f"--osf-read-token={made.read_token}",
            f"--osf-desktop-token={made.desktop_token}",
            f"--osf-project-id={made.project_id}",
            f"--osf-stranger-token={made.stranger_token}",
            f"--osf-stranger-desktop-token={made.stranger_desktop_token}",
            f"--osf-stranger-project-id={made.stranger_project_id}",
            f"--osf-timeout={TIMEOUT}",
        ]
    finally:
        door.close()


def test_a_server_hanging_on_one_tool_fails_those_checks_and_runs_the_rest(
    run_suite: Callable[..., SuiteRun], hanging_url_args: list[str], default_ids: set[str]
) -> None:
    start = time.monotonic()
    run = run_suite(*hanging_url_args)
    elapsed = time.monotonic() - start
    summary = run.report["summary"]
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED, run.text[-3000:]
    assert summary["ok"] is False and summary["stopped"] is None
    assert summary["not_run"] == 0 and "stopped answering" not in run.text
    assert set(run.outcomes) == default_ids  # every check ran
    failed = [c for c in run.report["checks"] if c["outcome"] == "failed"]
    assert failed, "the checks cancelling a run must fail"
    for check in failed:  # each fails for the one tool that hangs, with that message
        assert f"no answer within {TIMEOUT} s" in check["message"], check
    assert {c["id"] for c in failed} >= {"D8-cancel-queued", "R7-cancel-queued-answer"}
    assert run.ids("passed") == default_ids - {c["id"] for c in failed}
    assert elapsed < 60, elapsed


# ------------------------------------------------------- time-outs: the wait is what is said
def test_the_preflight_spends_one_deadline_on_a_target_that_never_answers(
    run_suite: Callable[..., SuiteRun],
) -> None:
    """ "no answer within 1 s" is what the user waited: the preflight's modern probe got
    no answer, so it is not asked again as a legacy ``initialize`` (a second deadline)."""
    with HostileServer("silence") as server:
        run = run_suite(f"--osf-target={server.url}", "--osf-timeout=1")
        sent = server.requests
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.text[-2000:]
    assert "cannot reach it (no answer within 1 s" in run.text
    assert sent == 1, f"{sent} requests, each waiting out its deadline"


def test_finding_the_revisions_of_a_silent_target_spends_one_deadline_and_one_probe() -> None:
    """The revision probes go through the liveness watch: the first gets no answer, the
    liveness probe none either, and the rest are not sent (each would wait its own
    deadline: four in all). The probe's time-out found the target gone, so it is not
    taken as "not served": it is raised, and the check asking fails with it (were it
    swallowed, the check would end at its next exchange as not run, and a run against
    a silent target could end with no check failed)."""
    with HostileServer("silence") as server:
        target = resolve_target(Settings(osf_target=server.url, osf_timeout=1))
        try:
            with pytest.raises(DeadlineExceeded, match="no answer within 1 s"):
                served_revisions(target)
            assert "the target stopped answering" in str(liveness_of(target).gone)
        finally:
            target.close()
        sent = server.requests
    assert sent == 2, f"{sent} requests, each waiting out its deadline"
    assert liveness_of(target).probes == 1
