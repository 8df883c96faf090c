"""ACME's pytest configuration: where its own conformance checks are.

With this ``conftest.py`` at the root of ACME's test folder, ``pytest
--osf-target=https://mcp.acme.example/mcp`` runs the rule book's checks and then
ACME's (``acme_checks.py``), in one run with one report. The same can be said in
the project's pytest configuration instead: ``osf_extra_checks = acme_checks.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_osf_extra_checks(config: pytest.Config) -> list[Path]:
    """ACME's check modules: the one beside this file."""
    return [Path(__file__).with_name("acme_checks.py")]
