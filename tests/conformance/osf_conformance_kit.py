"""Helpers shared by the conformance suite's own tests (imported by name, no package)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

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
