"""pytest11 entry point: the ``--osf-`` options, the markers and the ``osf_`` fixtures.

Every pytest run of a project that installs the kit loads this module, so it stays
thin: it imports only the option definitions
(:mod:`pytest_osfoundry.conformance._options`) and the fixture functions
(:mod:`pytest_osfoundry._fixtures`, which import their components when a test first
uses one). The conformance suite's hooks (collection of checks, report masking, the
terminal summary, ...; :mod:`pytest_osfoundry.conformance._plugin`) are registered,
under the name :data:`SUITE_PLUGIN`, only when the run is about the suite:

* a target is given (``--osf-target`` or ``OSF_TARGET``), or
* a test path given on the command line lies inside the installed suite's folder
  (without a target its checks then skip, saying that a target is needed).

Otherwise the suite is neither imported nor consulted.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from pytest_osfoundry import _fixtures as fixtures
from pytest_osfoundry._fixtures import *  # noqa: F403 - pytest finds fixtures by module name
from pytest_osfoundry.conformance._layout import rulebook_dir
from pytest_osfoundry.conformance._options import Settings, add_options

__all__ = [*fixtures.__all__, "SUITE_PLUGIN", "pytest_addoption", "pytest_configure"]

#: The name the conformance suite's hooks are registered under (``get_plugin(SUITE_PLUGIN)``).
SUITE_PLUGIN = "osfoundry-conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--osf-...`` options (pytest's ``osfoundry`` group)."""
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers; register the suite's hooks if the run is about it.

    The suite's level markers are registered in every run: importing a check module
    (``all_checks()``, a rule book generator) applies them whether or not the suite runs.
    """
    config.addinivalue_line(
        "markers",
        "osf(**options): configure the osf_ fixtures (any WorldConfig field: seed, interval, "
        "control_poll, stop_latency, sessions, graph, outbox, lose_completions, "
        "drop_replies, offline, "
        "server_errors, start_relay, relay_phase, base_url, strategy, retry; and patch_sleep)",
    )
    config.addinivalue_line(
        "markers", "documented: an osfoundry conformance check of documented behaviour"
    )
    config.addinivalue_line(
        "markers",
        "reconstructed: an osfoundry conformance check of behaviour the kit reconstructed",
    )
    # Settings validates every --osf- option (a malformed one is a usage error either way).
    if Settings.from_config(config).active or _names_the_suite(config, config.args):
        from pytest_osfoundry.conformance import _plugin

        # pytest_configure is a historic hook: the suite's own runs as it is registered.
        config.pluginmanager.register(_plugin, SUITE_PLUGIN)


def _names_the_suite(config: pytest.Config, args: Iterable[str]) -> bool:
    """Whether a path among ``args`` is the installed rule book's folder or lies inside it."""
    suite = rulebook_dir()
    base = config.invocation_params.dir
    for arg in args:
        path = Path(arg.split("::", 1)[0])
        try:
            resolved = (base / path).resolve()
        except (OSError, RuntimeError):  # an unreadable path is pytest's to report
            continue
        if resolved == suite or suite in resolved.parents:
            return True
    return False
