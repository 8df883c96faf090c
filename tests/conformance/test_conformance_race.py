"""The concurrency checks have teeth: each race variant fails its check, and only it.

``R5-concurrent-same-key`` releases 8 simultaneous calls with one key. Against
:mod:`tests.conformance.variants_race` (look-up and insert 0.25 s apart) it must fail
in 20 runs out of 20, and against the reference server pass in 20 out of 20 (each run
in this process, the check called as the suite calls it, a fresh server each time); the
whole suite against the variant fails exactly that check.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_osfoundry.conformance.server._harness import CheckFailure, Conformance
from pytest_osfoundry.conformance.server._target import resolve_target
from pytest_osfoundry.conformance.suite._options import Settings
from pytest_osfoundry.conformance.suite._registry import check_info, find_check
from tests.conformance.osf_conformance_kit import SuiteRun
from tests.conformance.variants_race import RACES

RACY = "embedded:tests.conformance.variants_race:racy_keys"
CHECK = "R5-concurrent-same-key"
RUNS = 20


@pytest.mark.parametrize("name", sorted(RACES))
def test_race_variant_fails_exactly_its_concurrency_check(
    run_suite: Callable[..., SuiteRun], default_ids: set[str], name: str
) -> None:
    run = run_suite(f"--osf-target=embedded:tests.conformance.variants_race:{name}")
    assert run.ids("failed") == set(RACES[name]), run.text[-4000:]
    assert run.ids("passed") == default_ids - RACES[name]


def test_racy_keys_failure_says_what_happened(run_suite: Callable[..., SuiteRun]) -> None:
    run = run_suite(f"--osf-target={RACY}", "-k", CHECK)
    [entry] = [c for c in run.report["checks"] if c["id"] == CHECK]
    assert "different command ids" in entry["message"]


def _decide(target_spec: str) -> str:
    """Run the check once in this process against a fresh target; its outcome."""
    target = resolve_target(Settings(osf_target=target_spec))
    run_check = find_check(CHECK)
    info = check_info(run_check)
    assert info is not None
    conf = Conformance(target, info)
    try:
        run_check(conf)
    except CheckFailure:
        return "failed"
    finally:
        conf.close()
        target.close()
    return "passed"


@pytest.mark.parametrize(("target", "outcome"), [(RACY, "failed"), ("embedded", "passed")])
def test_concurrency_check_is_decided_the_same_way_20_times_in_20(
    target: str, outcome: str
) -> None:
    seen = [_decide(target) for _ in range(RUNS)]
    assert seen == [outcome] * RUNS
