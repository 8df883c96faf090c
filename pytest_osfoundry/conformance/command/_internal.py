"""The running of an outside command under test, for the relay and agent suites: the
process, its preflight watch and the run's shared part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.command._preflight import first_sign
    from pytest_osfoundry.conformance.command._process import (
        OUTPUT_KEPT,
        STOP_GRACE_SECONDS,
        CommandError,
        CommandProcess,
        CommandStarts,
        kill_all,
        split_command,
    )
    from pytest_osfoundry.conformance.command._suite import CommandSuite

_PROCESS = "pytest_osfoundry.conformance.command._process"
_LAZY: dict[str, str] = {
    "OUTPUT_KEPT": _PROCESS,
    "STOP_GRACE_SECONDS": _PROCESS,
    "CommandError": _PROCESS,
    "CommandProcess": _PROCESS,
    "CommandStarts": _PROCESS,
    "kill_all": _PROCESS,
    "split_command": _PROCESS,
    "first_sign": "pytest_osfoundry.conformance.command._preflight",
    "CommandSuite": "pytest_osfoundry.conformance.command._suite",
}
"""Each shared name and the module that defines it."""

__all__ = [
    "OUTPUT_KEPT",
    "STOP_GRACE_SECONDS",
    "CommandError",
    "CommandProcess",
    "CommandStarts",
    "CommandSuite",
    "first_sign",
    "kill_all",
    "split_command",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
