"""The relay suite ends the server suite's way: Ctrl-C in the middle of a batch keeps
what ended, kills every relay at once and wakes every check's wait, and the reports
say so (``_concurrent.PreRunner``, ``RelaySuite.interrupt``)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

# Imported by this process, so that the suite's modules are the same in the in-process
# run below (pytester drops the modules a run imported).
import pytest_osfoundry.conformance.plugin._setup  # noqa: F401
from pytest_osfoundry.conformance.command import _process
from pytest_osfoundry.conformance.scheduling import _runner as _concurrent
from tests.conformance.variants_endings import interrupt_main_thread
from tests.sigint import ctrl_c_delivered

QUICK = "D14-relay-channel"
"""Ends within a couple of seconds: Ctrl-C comes once it has."""
SLOW = "D11-relay-cadence"
"""Watches the relay for over five intervals: in flight when Ctrl-C comes."""


def test_ctrl_c_in_the_relay_suite_keeps_what_ended_and_stops_the_rest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _concurrent.PreRunner._keep

    def keep(self: Any, item: pytest.Item, outcome: Any) -> None:
        kept(self, item, outcome)
        if item.nodeid.endswith(QUICK):
            interrupt_main_thread()

    monkeypatch.setattr(_concurrent.PreRunner, "_keep", keep)
    paths = {k: pytester.path / f"relay.{k}" for k in ("json", "md", "xml")}
    with ctrl_c_delivered():
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            "--osf-relay-command=embedded",
            "-k",
            f"{QUICK} or {SLOW}",
            f"--osf-report={paths['json']}",
            f"--osf-markdown={paths['md']}",
            f"--junitxml={paths['xml']}",
            no_reraise_ctrlc=True,
        )
    text = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, text[-3000:]
    report = json.loads(paths["json"].read_text(encoding="utf-8"))
    checks = {c["id"]: c for c in report["checks"]}
    assert checks[QUICK]["outcome"] == "passed", checks[QUICK]
    # Had the run waited for it, the slow check would have ended with an outcome.
    assert checks[SLOW]["not_run"] and checks[SLOW]["message"].startswith("not run: interrupted")
    summary = report["summary"]
    assert summary["ok"] is False and "Ctrl-C" in summary["stopped"]
    assert report["exit_status"] == 2
    assert "❌ not ok (exit status 2)" in paths["md"].read_text(encoding="utf-8")
    assert SLOW in paths["xml"].read_text(encoding="utf-8")
    assert "1 passed, 0 failed, 0 skipped; 1 check did not run; not green" in text
    # Nothing is left running: no relay process, no check's thread.
    assert not _process._LIVE
    for thread in threading.enumerate():
        if thread.name.startswith("osf-relay-check"):
            thread.join(10)
            assert not thread.is_alive(), f"{thread.name} still runs"


def test_a_relay_preflight_that_crashes_writes_the_reports_with_exit_status_3(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relay preflight that raises what it did not foresee is pytest's internal error
    (3): every report asked for is written all the same and says so."""
    from pytest_osfoundry.conformance.relay import RelaySuite

    def crash(self: RelaySuite, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(RelaySuite, "context", crash)
    paths = {k: pytester.path / f"relay.{k}" for k in ("json", "md", "xml")}
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--osf-relay-command=embedded",
        f"--osf-report={paths['json']}",
        f"--osf-markdown={paths['md']}",
        f"--junitxml={paths['xml']}",
    )
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    report = json.loads(paths["json"].read_text(encoding="utf-8"))
    summary = report["summary"]
    assert summary["ok"] is False and report["exit_status"] == 3
    assert summary["stopped"] == "the relay preflight crashed: RuntimeError: boom"
    assert summary["not_run"] == len(report["checks"]) > 0
    assert "❌ not ok (exit status 3)" in paths["md"].read_text(encoding="utf-8")
    assert QUICK in paths["xml"].read_text(encoding="utf-8")
    assert not _process._LIVE
