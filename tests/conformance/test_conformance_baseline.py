"""Baselines: known failures pass CI, new failures and stale entries fail it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conformance.osf_conformance_kit import SuiteRun, read, variant_target

BROKEN = variant_target("idempotency_ignored")
FAILS = [
    "D7-retry-same-key",
    "R4-replay-current-status",
    "R5-different-arguments",
    "R5-different-session",
]
SELECT = ("-k", "(D7 or R4 or R5 or D3) and not R5-concurrent")


def test_write_then_use_a_baseline(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    path = pytester.path / "ci" / "osf-baseline.txt"
    first = run_suite(BROKEN, *SELECT, f"--osf-write-baseline={path}")
    assert first.result.ret == pytest.ExitCode.TESTS_FAILED
    text = read(path)
    assert text.startswith("# osfoundry conformance baseline")
    assert [ln for ln in text.splitlines() if not ln.startswith("#")] == sorted(
        FAILS, key=lambda i: (i[0], int(i[1:].split("-")[0]), i)
    )
    again = run_suite(BROKEN, *SELECT, f"--osf-baseline={path}")
    assert again.result.ret == pytest.ExitCode.OK, again.text[-3000:]
    assert again.ids("xfailed") == set(FAILS)
    summary = again.report["summary"]
    assert summary["line"] == "17 passed, 4 failed (4 failed as expected), 0 skipped"
    assert summary["ok"] is True
    again.result.stdout.fnmatch_lines(
        [
            "  failed (expected)*D7-retry-same-key*failed as expected*",
            "*(baseline)*",  # on the next line or this one, as the id column's width wraps
            "17 passed, 4 failed (4 failed as expected), 0 skipped",
        ]
    )
    assert again.report["baseline"] == str(path)


def test_unlisted_failure_fails_the_run(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    path = pytester.path / "baseline.txt"
    path.write_text("# only three of the four\n" + "\n".join(FAILS[:3]) + "\n")
    run = run_suite(BROKEN, *SELECT, f"--osf-baseline={path}")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert run.ids("failed") == {FAILS[3]}
    assert run.report["summary"]["line"] == "17 passed, 4 failed (3 failed as expected), 0 skipped"


def test_stale_entry_fails_the_run(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    path = pytester.path / "baseline.txt"
    path.write_text(
        "\n".join(FAILS) + "\n\nD3-exactly-four-tools   # fixed meanwhile\n"
        "D99-no-such-check # a typo\n"
    )
    run = run_suite(BROKEN, *SELECT, f"--osf-baseline={path}")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert run.outcomes["D3-exactly-four-tools"] == "xpassed"
    summary = run.report["summary"]
    assert summary["stale_baseline_entries"] == ["D3-exactly-four-tools"]
    assert summary["unknown_baseline_entries"] == ["D99-no-such-check"]
    assert summary["ok"] is False
    run.result.stdout.fnmatch_lines(
        [
            "  STALE * D3-exactly-four-tools *passes now, but is listed*",
            "stale baseline entries (these checks pass now: remove them from the baseline): "
            "D3-exactly-four-tools",
            "baseline entries that name no check of this suite: D99-no-such-check",
            "17 passed, 4 failed (4 failed as expected), 0 skipped, 1 stale baseline entry",
        ]
    )


def test_stale_entry_fails_even_when_all_pass(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    path = pytester.path / "baseline.txt"
    path.write_text("D5-unknown-run\n")
    run = run_suite("--osf-target=embedded", "-k", "D5", f"--osf-baseline={path}")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert run.outcomes == {"D5-unknown-run": "xpassed"}


def test_malformed_baseline_is_a_usage_error(
    pytester: pytest.Pytester, run_suite: Callable[..., SuiteRun]
) -> None:
    path = pytester.path / "baseline.txt"
    path.write_text("D6-get-other-agent\nthis is not an id\n")
    result = pytester.runpytest("--osf-target=embedded", f"--osf-baseline={path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*baseline.txt:2: 'this is not an id' is not a check id*"])
    result = pytester.runpytest("--osf-target=embedded", "--osf-baseline=missing.txt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot read baseline missing.txt*"])
