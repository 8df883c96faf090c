"""The suite leaves what its run keeps out of the collector's full passes (``_gc``).

Each run is a fresh process (``runpytest_subprocess``): freezing is process-wide, so
an in-process run would freeze this test process too.
"""

from __future__ import annotations

import pytest

PROBE = """
import gc

def pytest_sessionfinish(session):
    print(f"frozen={gc.get_freeze_count()}")
"""


def _frozen(pytester: pytest.Pytester, *args: str) -> int:
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", *args)
    line = next(x for x in result.outlines if "frozen=" in x)
    return int(line.split("frozen=")[1].split()[0])


def test_a_suite_run_freezes_what_it_collected(pytester: pytest.Pytester) -> None:
    # Many thousand objects: the modules and items alive once the checks are collected.
    assert _frozen(pytester, "--osf-target=embedded", "--co") > 10_000


def test_a_run_without_the_suite_freezes_nothing(pytester: pytest.Pytester) -> None:
    assert _frozen(pytester) == 0
