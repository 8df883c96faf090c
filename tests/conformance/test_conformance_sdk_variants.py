"""Servers answering as the official MCP SDKs' do (issue 24): no false failures, teeth kept.

Every legal variant of :mod:`tests.conformance.variants_sdk` passes the whole suite
(strict: nothing skipped or failed); every broken one fails exactly its checks, the
same in a concurrent and a serial run. A pinned ``--osf-protocol`` the target does
not serve stops the run in preflight (exit 4, one ``ERROR:`` line).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conformance.osf_conformance_kit import SuiteRun
from tests.conformance.variants_sdk import BROKEN_SDK_VARIANTS, LEGAL_SDK_VARIANTS

MODULE = "tests.conformance.variants_sdk"


@pytest.mark.parametrize("name", sorted(LEGAL_SDK_VARIANTS))
def test_legal_sdk_variant_passes_the_whole_suite_strict(
    name: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    run = run_suite(f"--osf-target=embedded:{MODULE}:{name}", "--osf-strict")
    assert run.ids("passed") == default_ids, run.text[-3000:]
    assert run.result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize("name", sorted(BROKEN_SDK_VARIANTS))
def test_broken_sdk_variant_fails_exactly_its_checks_in_every_run(
    name: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    variant = BROKEN_SDK_VARIANTS[name]
    run = run_suite(f"--osf-target=embedded:{MODULE}:{name}")
    assert set(run.outcomes) == default_ids, run.text[-3000:]
    assert run.ids("failed") == variant.fails, run.text[-3000:]
    serial = run_suite(
        f"--osf-target=embedded:{MODULE}:{name}", "--osf-concurrency=1", report="serial.json"
    )
    assert serial.outcomes == run.outcomes, serial.text[-3000:]


def test_a_failed_set_up_is_reported_as_set_up_naming_the_session(
    run_suite: Callable[..., SuiteRun],
) -> None:
    run = run_suite(f"--osf-target=embedded:{MODULE}:runs_never_queued", "-k", "D8")
    messages = {c["id"]: c["message"] for c in run.report["checks"]}
    assert messages and run.ids("failed") == set(messages), run.text[-3000:]
    for check_id, message in messages.items():
        assert message.startswith("set-up: queueing a run on Graph session gs_"), check_id
        assert "(shared by the desktop's sync)" in message and "queue unavailable" in message


@pytest.mark.parametrize(
    ("variant", "pinned", "serves"),
    [
        ("legacy_only", "2026-07-28", "2025-11-25, 2025-06-18"),
        ("modern_only", "2025-11-25", "2026-07-28"),
        ("only_2025_06_18", "2025-11-25", "2025-06-18"),
    ],
)
def test_a_pinned_revision_the_target_does_not_serve_stops_the_run(
    variant: str, pinned: str, serves: str, run_suite: Callable[..., SuiteRun]
) -> None:
    run = run_suite(
        f"--osf-target=embedded:tests.conformance.variants_protocol:{variant}",
        f"--osf-protocol={pinned}",
    )
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in run.text.splitlines() if line.startswith("ERROR:")]
    assert errors == [
        f"ERROR: osfoundry preflight: --osf-protocol {pinned}: the target does not serve it "
        f"(it serves {serves}); pin one of those or use --osf-protocol auto"
    ], run.text[-3000:]
    checks = run.report.get("checks") or []
    assert checks and all(c["not_run"] for c in checks), "every check is reported not run"
    assert run.report["summary"]["ok"] is False


def test_a_pinned_revision_a_dual_era_target_serves_unlisted_runs(
    run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    run = run_suite(
        f"--osf-target=embedded:{MODULE}:discover_lists_modern_only", "--osf-protocol=2025-11-25"
    )
    assert run.ids("passed") == default_ids, run.text[-3000:]


def test_the_wire_schema_check_of_discover_asks_with_the_token(
    run_suite: Callable[..., SuiteRun],
) -> None:
    """Alone, R1-wire-schema-discover judges only the discover it sends: against a
    server asking for a token on discover, that one carries the agent's (issue 35)."""
    target = f"--osf-target=embedded:{MODULE}:token_on_all_but_open_methods"
    run = run_suite(target, "-k", "R1-wire-schema-discover")
    messages = {c["id"]: c["message"] for c in run.report["checks"]}
    assert messages["R1-wire-schema-discover"].endswith("(1 discover answers judged)")
