"""What the kit's pytest plugin uses of the conformance package in every run: the
options, hookspecs, the suites' hook modules; a refused run's reports on first use."""

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
