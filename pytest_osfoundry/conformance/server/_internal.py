"""What the conformance package's other rooms use of the server suite.

Not for users, nor for checks (they use :mod:`pytest_osfoundry.conformance`): the one face
through which another room reaches this one's private modules (``tests/test_faces.py``).
Each name is imported from its module when first asked for, so no import gets dearer.

* ``ConcurrentRunner`` -- The pytest plugin that pre-runs the server checks of this
  process and replays them. For the pytest plugin.
* ``Conformance`` -- Everything one check needs; made fresh for each check by the
  ``osf_conf`` fixture. For the pytest plugin.
* ``describe_protocol`` -- ``--osf-protocol`` for the reports: the pinned revision, or
  ``auto → <revision>``. For the pytest plugin.
* ``describe_target`` -- A printable name of the target (tokens in a URL masked),
  without starting it. For the pytest plugin.
* ``liveness_of`` -- The ``Liveness`` record of ``target``, kept on it (made on
  first use). For the pytest plugin.
* ``NOT_SERVED`` -- How the skip reason of a check about a revision the target does not
  serve begins. For the pytest plugin.
* ``parse_target`` -- ``("url", url)`` or ``("embedded", "MODULE:FACTORY" or None)`` for
  a target spec. For the pytest plugin.
* ``preflight`` -- Check the target and every given credential with one cheap request
  each, and that ``protocol``. For the pytest plugin.
* ``PreflightError`` -- A configuration error found before the run; the message names
  the option. For the pytest plugin.
* ``probe`` -- Check that the target answers HTTP at all (any status will do). For the
  pytest plugin.
* ``resolve_target`` -- Resolve ``--osf-target``, starting the embedded server when
  asked. For the pytest plugin.
* ``RUNNER_PLUGIN`` -- The name the concurrent runner is registered under. For the
  pytest plugin.
* ``settled_revision`` -- The revision ``--osf-protocol auto`` settled on for
  ``target``, or ``None`` if no check has asked yet. For the pytest plugin.
* ``stop_if_gone`` -- End the run after this check if ``target`` stopped answering. For
  the pytest plugin.
* ``Target`` -- A resolved target: where to send requests, as whom, and how to stop it.
  For the pytest plugin.
* ``TargetError`` -- ``--osf-target`` cannot be used as given; the message says how to
  fix it. For the pytest plugin.
"""

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
