"""pytest11 entry point: registers the ``osf`` marker, the fixtures and the suite's hooks.

Nothing is implemented here: fixtures live in :mod:`pytest_osfoundry._fixtures`, the
conformance suite's options and hooks in :mod:`pytest_osfoundry.conformance._plugin`.
"""

from __future__ import annotations

import pytest

from pytest_osfoundry import _fixtures as fixtures
from pytest_osfoundry._fixtures import *  # noqa: F403 - pytest finds fixtures by module name

__all__ = [*fixtures.__all__, "pytest_configure"]


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``osf`` marker."""
    config.addinivalue_line(
        "markers",
        "osf(**options): configure the osf_ fixtures (any WorldConfig field: seed, interval, "
        "control_poll, stop_latency, sessions, graph, outbox, lose_completions, "
        "drop_replies, offline, "
        "server_errors, start_relay, relay_phase, base_url, strategy, retry; and patch_sleep)",
    )


# The conformance suite's options, hooks and fixtures (``osf_target``, ``osf_conf``).
pytest_plugins = ["pytest_osfoundry.conformance._plugin"]
