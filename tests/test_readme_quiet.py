"""The README's test command is quiet when it is green: no warning from the kit's own
dependencies, a collect-only step that lists the checks plainly, a header that names
what the run runs (issue 34, item 8)."""

from __future__ import annotations

import re
import warnings

import pytest


def test_the_runs_a_test_makes_raise_no_warning_of_a_plugin_the_kit_leaves_off(
    pytester: pytest.Pytester,
) -> None:
    """A pytester run reads none of the kit's settings; unconfigured, it loaded
    pytest-asyncio, whose loop-scope warning then filled the green run's summary once
    per such run (``tests/conftest.py`` gives those runs the kit's choice)."""
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = pytester.runpytest("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)
    noise = [str(w.message).splitlines()[0] for w in caught]
    assert noise == [], noise


def test_collect_only_lists_the_checks_and_says_nothing_of_checks_not_run(
    pytester: pytest.Pytester,
) -> None:
    """The README's collect-only step (``-qq --osf-target=embedded``) counts the checks
    per module; a row of ``s`` and "126 checks did not run" read as a failure."""
    result = pytester.runpytest(
        "--collect-only", "-qq", "-p", "no:cacheprovider", "--osf-target=embedded"
    )
    assert result.ret == pytest.ExitCode.OK
    text = result.stdout.str()
    counts = re.findall(r"^(?:.*/)?test_\w+\.py: (\d+)$", text, flags=re.M)
    assert len(counts) > 10 and sum(map(int, counts)) > 100, text
    assert "skipped" not in text and "did not run" not in text, text
    assert not re.search(r"^s+", text, flags=re.M), text
    assert "osfoundry conformance" not in text  # no summary: nothing ran


def test_the_header_names_the_checks_the_suite_runs_not_the_testpaths(
    pytester: pytest.Pytester,
) -> None:
    """With no test paths the suite runs the rule book: pytest's ``testpaths`` line
    would name folders the run does not run."""
    pytester.makeini("[pytest]\ntestpaths = tests examples\n")
    result = pytester.runpytest("--collect-only", "-p", "no:cacheprovider", "--osf-target=embedded")
    header = result.stdout.str().partition("collected")[0]
    assert "testpaths:" not in header, header
    assert re.search(r"^osfoundry checks: .*conformance[/\\]checks$", header, flags=re.M), header
