"""The suite has teeth: every broken variant fails exactly the checks meant for it.

Each variant of the reference server (``tests.conformance.variants``)
breaks one rule. Against each, the whole default suite runs; the set of failing
checks must equal the variant's declared ``fails`` — the targeted check fails and no
other check fails spuriously. The suite runs twice against each variant, with its
checks concurrent (the default) and one after another (``--osf-concurrency 1``):
the two JSON reports must give every check the same outcome.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_osfoundry.conformance.suite._registry import AREAS, RELAY_AREA, all_checks
from tests.conformance.osf_conformance_kit import SuiteRun, variant_target
from tests.conformance.variants import TIMING_VARIANTS, VARIANTS


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_fails_exactly_its_checks(
    name: str, run_suite: Callable[..., SuiteRun], default_ids: set[str]
) -> None:
    variant = VARIANTS[name]
    run = run_suite(variant_target(name))
    assert set(run.outcomes) == default_ids, run.text[-3000:]
    assert run.ids("failed") == variant.fails, run.text[-3000:]
    assert run.ids("skipped") == set()
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    serial = run_suite(variant_target(name), "--osf-concurrency=1", report="serial.json")
    assert serial.outcomes == run.outcomes, serial.text[-3000:]


def test_there_are_enough_variants_and_every_area_has_one() -> None:
    assert len(VARIANTS) >= 20
    area_of = {c.check_id: c.area for c in all_checks()}
    covered = {area_of[check_id] for v in VARIANTS.values() for check_id in v.fails}
    # the relay checks' teeth are broken relays: tests/relay_conformance/test_broken_relays.py
    assert covered == set(AREAS) - {RELAY_AREA}
    for variant in VARIANTS.values():
        assert variant.fails, variant.name
        assert variant.fails <= set(area_of), variant.name
        assert variant.breaks.endswith(")."), variant.name


def test_timing_leak_is_caught_only_by_the_opt_in_timing_check(
    run_suite: Callable[..., SuiteRun],
) -> None:
    leak = TIMING_VARIANTS["timing_leak"]
    run = run_suite(
        variant_target(leak.name), "-k", "D6", "--osf-timing", "--osf-timing-samples=25"
    )
    assert run.ids("failed") == leak.fails, run.text[-3000:]
    assert "another agent's real command id is answered measurably slower" in run.text
    without = run_suite(variant_target(leak.name), "-k", "D6")
    assert without.ids("failed") == set()
    assert "D6-timing" not in without.outcomes


def test_timing_check_passes_against_the_reference(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite(
        "--osf-target=embedded", "-k", "D6-timing", "--osf-timing", "--osf-timing-samples=30"
    )
    assert run.outcomes == {"D6-timing": "passed"}, run.text[-3000:]
    assert "fresh: median" in run.report["checks"][0]["message"]
