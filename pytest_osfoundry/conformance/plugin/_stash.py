"""The state one suite run keeps on pytest's config and items: every StashKey, once.

The suite's hook modules (:mod:`~pytest_osfoundry.conformance.plugin._setup` and the
modules it gathers its hooks from) read and write the run's state only through the
keys defined here, so a value one hook stores is the value another finds.
:func:`run_settings` reads the ``--osf-...`` options once per run.
"""

from __future__ import annotations

import pytest

from pytest_osfoundry.conformance.reporting._internal import Baseline, EndWatcher, Results, Summary
from pytest_osfoundry.conformance.server._internal import Conformance, Target
from pytest_osfoundry.conformance.suite._internal import Settings

__all__ = [
    "BASELINE",
    "COLLECTED",
    "CONF",
    "PREFLIGHTED",
    "RESULTS",
    "SECRETS",
    "SETTINGS",
    "SETTLED",
    "SETTLED_OUTPUT",
    "SUITE_PATHS",
    "SUMMARY",
    "WATCHER",
    "WRITTEN",
    "is_worker",
    "run_settings",
]

SETTINGS = pytest.StashKey[Settings]()
SECRETS = pytest.StashKey[set[str]]()
RESULTS = pytest.StashKey[Results]()
BASELINE = pytest.StashKey[Baseline | None]()
SUMMARY = pytest.StashKey[Summary]()
WRITTEN = pytest.StashKey[list[str]]()
CONF = pytest.StashKey[Conformance]()
SUITE_PATHS = pytest.StashKey[bool]()
"""Whether the suite chose the run's test paths (none were given): pytest's header
then names them instead of the configuration's ``testpaths``."""
PREFLIGHTED = pytest.StashKey[Target]()
"""The target the preflight reached, handed to this process's ``osf_target`` fixture
(its connections and what it found about the target kept; not kept when xdist runs
the checks in other processes)."""
COLLECTED = pytest.StashKey[set[str]]()
"""The ids of the checks collected in this process (extra checks included)."""
WATCHER = pytest.StashKey[EndWatcher]()
SETTLED = pytest.StashKey[set[str]]()
"""The revisions ``--osf-protocol auto`` settled on in the run (this process's target,
noted when its fixture ends, and every xdist worker's)."""
#: The ``workeroutput`` key under which an xdist worker hands the controller the
#: revisions ``--osf-protocol auto`` settled on in it.
SETTLED_OUTPUT = "osf_settled_revisions"


def run_settings(config: pytest.Config) -> Settings:
    """The run's :class:`~pytest_osfoundry.conformance.suite._options.Settings`, read once."""
    found = config.stash.get(SETTINGS, None)
    if found is None:
        found = Settings.from_config(config)
        config.stash[SETTINGS] = found
    return found


def is_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker (the controller writes the reports)."""
    return hasattr(config, "workerinput")
