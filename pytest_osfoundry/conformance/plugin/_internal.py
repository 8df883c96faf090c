"""What the conformance package's other rooms use of the pytest plugin.

Not for users, nor for checks (they use :mod:`pytest_osfoundry.conformance`): the one face
through which another room reaches this one's private modules (``tests/test_faces.py``).
Each name is imported from its module when first asked for, so no import gets dearer.

* ``refuse`` -- Write every report a run refused before any check asks for, and its
  JUnit XML. For the agent suite.
* ``SECRETS`` -- The run's secrets, masked in every report. For the agent suite.
* ``SUITE_PATHS`` -- Whether the suite chose the run's test paths (none were given). For
  the agent suite.
* ``WATCHER`` -- Where the run keeps its ``EndWatcher``. For the agent suite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.plugin._sessionfinish import refuse
    from pytest_osfoundry.conformance.plugin._stash import SECRETS, SUITE_PATHS, WATCHER

_LAZY: dict[str, str] = {
    "SECRETS": "pytest_osfoundry.conformance.plugin._stash",
    "SUITE_PATHS": "pytest_osfoundry.conformance.plugin._stash",
    "WATCHER": "pytest_osfoundry.conformance.plugin._stash",
    "refuse": "pytest_osfoundry.conformance.plugin._sessionfinish",
}
"""Each shared name and the module that defines it."""

__all__ = ["SECRETS", "SUITE_PATHS", "WATCHER", "refuse"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
