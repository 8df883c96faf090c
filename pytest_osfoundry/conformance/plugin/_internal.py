"""What the conformance package's other rooms use of the pytest plugin: refuse and the
stash keys (each name imported on first use)."""

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
