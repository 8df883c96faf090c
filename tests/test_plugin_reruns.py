"""The suite's hooks are found by module name, so in-process reruns pair fresh with fresh.

pytester's in-process runs restore ``sys.modules`` after each run, but a package's
attribute naming a submodule outlives that: a plugin taken as
``from pytest_osfoundry.conformance.plugin import _setup`` would be the previous run's,
judging fresh check modules with a stale registry (and collecting none of them).
"""

from __future__ import annotations

import types

import pytest

import pytest_osfoundry.conformance as conformance_package


def test_a_stale_package_attribute_is_not_the_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = types.ModuleType("pytest_osfoundry.conformance.plugin._setup")  # an earlier run's
    monkeypatch.setattr(conformance_package, "_plugin", stale, raising=False)
    result = pytester.runpytest("-p", "no:cacheprovider", "--osf-target=embedded", "--co", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert any("::D6-" in line for line in result.outlines)


def test_two_in_process_runs_collect_the_same_checks(pytester: pytest.Pytester) -> None:
    counts = []
    for _ in range(2):
        result = pytester.runpytest("-p", "no:cacheprovider", "--osf-target=embedded", "--co", "-q")
        counts.append(sum("::" in line for line in result.outlines))
    assert counts[0] == counts[1] > 100
