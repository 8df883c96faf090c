"""What the conformance package's other rooms use of the server suite: the target, its
preflight, runner, liveness and context (each name imported on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.server._eras import (
        NOT_SERVED,
        describe_protocol,
        settled_revision,
    )
    from pytest_osfoundry.conformance.server._harness import Conformance
    from pytest_osfoundry.conformance.server._liveness import liveness_of, stop_if_gone
    from pytest_osfoundry.conformance.server._preflight import PreflightError, preflight
    from pytest_osfoundry.conformance.server._runner import RUNNER_PLUGIN, ConcurrentRunner
    from pytest_osfoundry.conformance.server._target import (
        Target,
        TargetError,
        describe_target,
        parse_target,
        probe,
        resolve_target,
    )

_LAZY: dict[str, str] = {
    "ConcurrentRunner": "pytest_osfoundry.conformance.server._runner",
    "Conformance": "pytest_osfoundry.conformance.server._harness",
    "NOT_SERVED": "pytest_osfoundry.conformance.server._eras",
    "PreflightError": "pytest_osfoundry.conformance.server._preflight",
    "RUNNER_PLUGIN": "pytest_osfoundry.conformance.server._runner",
    "Target": "pytest_osfoundry.conformance.server._target",
    "TargetError": "pytest_osfoundry.conformance.server._target",
    "describe_protocol": "pytest_osfoundry.conformance.server._eras",
    "describe_target": "pytest_osfoundry.conformance.server._target",
    "liveness_of": "pytest_osfoundry.conformance.server._liveness",
    "parse_target": "pytest_osfoundry.conformance.server._target",
    "preflight": "pytest_osfoundry.conformance.server._preflight",
    "probe": "pytest_osfoundry.conformance.server._target",
    "resolve_target": "pytest_osfoundry.conformance.server._target",
    "settled_revision": "pytest_osfoundry.conformance.server._eras",
    "stop_if_gone": "pytest_osfoundry.conformance.server._liveness",
}
"""Each shared name and the module that defines it."""

__all__ = [
    "NOT_SERVED",
    "RUNNER_PLUGIN",
    "ConcurrentRunner",
    "Conformance",
    "PreflightError",
    "Target",
    "TargetError",
    "describe_protocol",
    "describe_target",
    "liveness_of",
    "parse_target",
    "preflight",
    "probe",
    "resolve_target",
    "settled_revision",
    "stop_if_gone",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
