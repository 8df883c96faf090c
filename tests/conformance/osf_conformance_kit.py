"""Helpers shared by the conformance suite's own tests (imported by name, no package)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.conformance.scheduling._protocol import Schedule
from pytest_osfoundry.conformance.suite._registry import CheckInfo

VARIANTS_MODULE = "tests.conformance.variants"


@dataclass
class SuiteRun:
    """One pytester run of the suite and its JSON report."""

    result: pytest.RunResult
    report: dict[str, Any]

    @property
    def outcomes(self) -> dict[str, str]:
        """Check id -> outcome."""
        return {c["id"]: c["outcome"] for c in self.report["checks"]}

    def ids(self, outcome: str) -> set[str]:
        """The ids of the checks with ``outcome``."""
        return {i for i, o in self.outcomes.items() if o == outcome}

    @property
    def text(self) -> str:
        """Everything the run printed."""
        return self.result.stdout.str() + self.result.stderr.str()


def variant_target(name: str) -> str:
    """``--osf-target`` for the broken variant ``name``."""
    return f"--osf-target=embedded:{VARIANTS_MODULE}:{name}"


def read(path: Path) -> str:
    """A file's text."""
    return path.read_text(encoding="utf-8")


def made_info(
    check_id: str,
    area: str = "schema",
    /,
    *,
    schedule: Schedule = "alongside",
) -> CheckInfo:
    """A check's metadata made by hand, for the runner's own tests (its rule is the id's
    first part; no rule-book prose is looked up)."""
    return CheckInfo(
        check_id=check_id,
        rule=check_id.split("-")[0],
        level="reconstructed",
        area=area,
        spec="",
        asserts=check_id,
        order=0,
        schedule=schedule,
    )
