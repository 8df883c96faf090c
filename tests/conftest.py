"""What every test of the kit shares: the configuration of the pytest runs tests make.

A run a test makes with ``pytester`` (in this process or a child) reads none of
``pyproject.toml``'s settings: it starts in an empty folder. Without them it loads
every installed plugin, pytest-asyncio included, which the kit's own session leaves
off (``addopts``), and which warns in each such run that its loop scope is not set
(hundreds of warnings in a green run's summary). So those runs get the kit's own
choice through ``PYTEST_ADDOPTS``: ``-p no:asyncio``. The tests about pytest-asyncio
load it again with ``-p asyncio`` and set its options themselves
(``tests/aio/test_pytest_asyncio.py``).
"""

from __future__ import annotations

import os

import pytest

INNER_ADDOPTS = "-p no:asyncio -p no:locust"
"""The kit's ``addopts`` that matter to the runs its tests make."""


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``, its runs configured as the kit's own session is."""
    given = os.environ.get("PYTEST_ADDOPTS", "")
    monkeypatch.setenv("PYTEST_ADDOPTS", f"{INNER_ADDOPTS} {given}".strip())
    return pytester
