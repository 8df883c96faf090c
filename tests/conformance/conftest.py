"""Fixtures for testing the conformance suite through ``pytester``.

Every run happens in pytester's empty temporary folder with no test paths, so it
also proves that ``pytest --osf-target=...`` finds the installed suite from any
folder. ``OSF_*`` variables of the outer environment are cleared for each test.

Every run uses the suite's default ``--osf-concurrency`` (checks run concurrently);
``OSF_KIT_CONCURRENCY=1 pytest tests/conformance`` runs every one of these tests
against the serial run instead (any other value: that concurrency).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator

import pytest

from pytest_osfoundry.conformance.suite._registry import all_checks
from tests.conformance.osf_conformance_kit import SuiteRun

#: Read once, before the fixture below clears the ``OSF_*`` variables.
_KIT_CONCURRENCY = os.environ.get("OSF_KIT_CONCURRENCY", "").strip()


@pytest.fixture(autouse=True)
def _no_osf_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("OSF_"):
            monkeypatch.delenv(name)
    if _KIT_CONCURRENCY:
        monkeypatch.setenv("OSF_CONCURRENCY", _KIT_CONCURRENCY)
    yield


@pytest.fixture
def run_suite(pytester: pytest.Pytester) -> Callable[..., SuiteRun]:
    """``run_suite(*args)``: run pytest in pytester with a JSON report; a :class:`SuiteRun`."""

    def run(*args: str, report: str = "osf-report.json") -> SuiteRun:
        path = pytester.path / report
        if path.exists():
            path.unlink()
        result = pytester.runpytest(
            "-p", "no:cacheprovider", f"--osf-report={path}", *args, no_reraise_ctrlc=True
        )
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return SuiteRun(result, data)

    return run


@pytest.fixture(scope="session")
def default_ids() -> set[str]:
    """The ids of every check that runs by default (opt-in checks left out)."""
    return {c.check_id for c in all_checks() if c.opt_in is None}
