"""What the kit's pytest plugin (:mod:`pytest_osfoundry.plugin`) uses of the conformance
package beyond its public names.

Not for users, nor for checks: the one face through which a module outside the package
reaches its private modules (``tests/test_faces.py``). The plugin loads it in every
pytest run, so it imports only what the plugin needs in every run; the rest is imported
when first asked for. Each name, and why:

* ``hookspecs`` -- the module declaring ``pytest_osf_extra_checks``, registered in every run.
* :func:`add_options`, :class:`Settings` -- the ``--osf-`` options, added and validated
  in every run.
* :func:`rulebook_dir` -- the installed rule book, which the plugin keeps from collection.
* :data:`SUITE_MODULE`, :data:`RELAY_MODULE`, :data:`AGENT_MODULE` -- the modules of the
  suites' hooks, which the plugin registers only in runs about a suite.
* :func:`refuse`, :data:`REFUSED` -- a run refused for its options still writes its
  reports (imported only then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names
from pytest_osfoundry.conformance.suite import _extra as hookspecs
from pytest_osfoundry.conformance.suite._layout import rulebook_dir
from pytest_osfoundry.conformance.suite._options import Settings, add_options

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.plugin._sessionfinish import refuse
    from pytest_osfoundry.conformance.reporting._outcome import REFUSED

SUITE_MODULE = "pytest_osfoundry.conformance.plugin._setup"
"""The module of the server suite's hooks."""

RELAY_MODULE = "pytest_osfoundry.conformance.plugin._relay"
"""The module of the relay suite's hooks."""

AGENT_MODULE = "pytest_osfoundry.conformance.plugin._agent"
"""The module of the agent suite's hooks."""

_LAZY: dict[str, str] = {
    "REFUSED": "pytest_osfoundry.conformance.reporting._outcome",
    "refuse": "pytest_osfoundry.conformance.plugin._sessionfinish",
}
"""Each name imported when first asked for, and the module that defines it."""

__all__ = [
    "AGENT_MODULE",
    "REFUSED",
    "RELAY_MODULE",
    "SUITE_MODULE",
    "Settings",
    "add_options",
    "hookspecs",
    "refuse",
    "rulebook_dir",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
