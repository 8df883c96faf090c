"""The suite per MCP revision: every --osf-protocol value, one-era targets, and teeth.

Every broken variant of :mod:`tests.conformance.variants_protocol` fails exactly its
transport checks; every legal variant passes, with the other era's checks skipped
(never failed) and a reason given.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conformance.osf_conformance_kit import SuiteRun
from tests.conformance.variants_protocol import LEGAL_VARIANTS, PROTOCOL_VARIANTS

MODULE = "tests.conformance.variants_protocol"


@pytest.mark.parametrize("protocol", ["auto", "2026-07-28", "2025-11-25", "2025-06-18"])
def test_every_protocol_value_passes_against_the_reference(
    protocol: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    run = run_suite("--osf-target=embedded", f"--osf-protocol={protocol}")
    assert run.ids("passed") == default_ids, run.text[-3000:]
    run.result.stdout.fnmatch_lines([f"*MCP protocol {protocol}*"])
    settled = "2026-07-28" if protocol == "auto" else protocol
    expected = f"auto → {settled}" if protocol == "auto" else protocol
    assert run.report["protocol"] == expected


def test_a_bad_protocol_value_is_a_usage_error(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite("--osf-target=embedded", "--osf-protocol=2024-11-05")
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--osf-protocol: expected one of auto, 2026-07-28" in run.text


@pytest.mark.parametrize("name", sorted(PROTOCOL_VARIANTS))
def test_protocol_variant_fails_exactly_its_checks(
    name: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    variant = PROTOCOL_VARIANTS[name]
    run = run_suite(f"--osf-target=embedded:{MODULE}:{name}")
    assert set(run.outcomes) == default_ids, run.text[-3000:]
    assert run.ids("failed") == variant.fails, run.text[-3000:]
    assert run.ids("skipped") == variant.skips, run.text[-3000:]


@pytest.mark.parametrize("name", sorted(LEGAL_VARIANTS))
def test_legal_variant_passes_with_the_other_era_skipped(
    name: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    variant = LEGAL_VARIANTS[name]
    run = run_suite(f"--osf-target=embedded:{MODULE}:{name}")
    assert run.ids("failed") == set(), run.text[-3000:]
    assert run.ids("skipped") == variant.skips, run.text[-3000:]
    assert run.ids("passed") == default_ids - variant.skips
    messages = {c["id"]: c["message"] for c in run.report["checks"]}
    for check_id in variant.skips:
        assert "the target" in messages[check_id] and "serve" in messages[check_id]
    assert run.result.ret == pytest.ExitCode.OK


def test_every_transport_check_has_a_variant_that_fails_it() -> None:
    from pytest_osfoundry.conformance.suite._registry import all_checks

    new = {
        c.check_id
        for c in all_checks()
        if c.check_id.startswith(("R1-2026", "R1-2025"))
        or c.check_id
        in ("R1-origin", "R1-public-url", "R1-eras-consistent", "R1-session-bound-to-agent")
    }
    caught = set().union(*(v.fails for v in PROTOCOL_VARIANTS.values()))
    # R1-2025-11-25-initialize: a server that does not negotiate the newest legacy
    # revision it lists is caught by R1-eras-consistent as well; its own variant
    # would fail both, like initialize_ignores_the_offer does for 2025-06-18.
    assert new - caught == {"R1-2025-11-25-initialize"}


def test_strict_does_not_count_another_eras_checks(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite(f"--osf-target=embedded:{MODULE}:legacy_only", "--osf-strict")
    assert run.ids("failed") == set(), run.text[-3000:]
    assert run.ids("skipped") == LEGAL_VARIANTS["legacy_only"].skips
    assert run.result.ret == pytest.ExitCode.OK
