"""What the conformance package's other rooms use of the scheduling: schedules, the
runners' phases, stages, holds (each name imported on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.scheduling._contexts import ContextRunner
    from pytest_osfoundry.conformance.scheduling._gc import freeze_collected
    from pytest_osfoundry.conformance.scheduling._in_flight import InFlight, amend, summary_line
    from pytest_osfoundry.conformance.scheduling._per_target import kept_on
    from pytest_osfoundry.conformance.scheduling._protocol import (
        DEFAULT,
        INTERRUPTED,
        NOT_RUN_PREFIX,
        Needs,
        Schedule,
        needs_of,
        schedule_of_flags,
    )
    from pytest_osfoundry.conformance.scheduling._runner import Phases, PreRunner, upcoming
    from pytest_osfoundry.conformance.scheduling._shared_list import Scope, guarded
    from pytest_osfoundry.conformance.scheduling._waits import Interrupted, Stage, no_stage

_LAZY: dict[str, str] = {
    "ContextRunner": "pytest_osfoundry.conformance.scheduling._contexts",
    "DEFAULT": "pytest_osfoundry.conformance.scheduling._protocol",
    "INTERRUPTED": "pytest_osfoundry.conformance.scheduling._protocol",
    "InFlight": "pytest_osfoundry.conformance.scheduling._in_flight",
    "Interrupted": "pytest_osfoundry.conformance.scheduling._waits",
    "NOT_RUN_PREFIX": "pytest_osfoundry.conformance.scheduling._protocol",
    "Needs": "pytest_osfoundry.conformance.scheduling._protocol",
    "Phases": "pytest_osfoundry.conformance.scheduling._runner",
    "PreRunner": "pytest_osfoundry.conformance.scheduling._runner",
    "Schedule": "pytest_osfoundry.conformance.scheduling._protocol",
    "Scope": "pytest_osfoundry.conformance.scheduling._shared_list",
    "Stage": "pytest_osfoundry.conformance.scheduling._waits",
    "amend": "pytest_osfoundry.conformance.scheduling._in_flight",
    "freeze_collected": "pytest_osfoundry.conformance.scheduling._gc",
    "guarded": "pytest_osfoundry.conformance.scheduling._shared_list",
    "kept_on": "pytest_osfoundry.conformance.scheduling._per_target",
    "needs_of": "pytest_osfoundry.conformance.scheduling._protocol",
    "no_stage": "pytest_osfoundry.conformance.scheduling._waits",
    "schedule_of_flags": "pytest_osfoundry.conformance.scheduling._protocol",
    "summary_line": "pytest_osfoundry.conformance.scheduling._in_flight",
    "upcoming": "pytest_osfoundry.conformance.scheduling._runner",
}
"""Each shared name and the module that defines it."""

__all__ = [
    "DEFAULT",
    "INTERRUPTED",
    "NOT_RUN_PREFIX",
    "ContextRunner",
    "InFlight",
    "Interrupted",
    "Needs",
    "Phases",
    "PreRunner",
    "Schedule",
    "Scope",
    "Stage",
    "amend",
    "freeze_collected",
    "guarded",
    "kept_on",
    "needs_of",
    "no_stage",
    "schedule_of_flags",
    "summary_line",
    "upcoming",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
