"""What the conformance package's other rooms use of the scheduling.

Not for users, nor for checks (they use :mod:`pytest_osfoundry.conformance`): the one face
through which another room reaches this one's private modules (``tests/test_faces.py``).
Each name is imported from its module when first asked for, so no import gets dearer.

* ``amend`` -- Append ``hint`` to ``error``'s message if it failed at the connection
  level while ``others``. For the server suite.
* ``DEFAULT`` -- The schedule of a check that declares none. For the check registry.
* ``freeze_collected`` -- Freeze every object the collector tracks now; how many are
  frozen in all. For the pytest plugin.
* ``guarded`` -- ``inner`` for one check, its requests waiting while another check's
  hold excludes them. For the server suite.
* ``InFlight`` -- How many checks are running right now (thread-safe). For the server
  suite.
* ``INTERRUPTED`` -- Why a run that Ctrl-C stopped did not go on (the report's
  ``stopped``). For the agent suite, the pytest plugin, the reports.
* ``Interrupted`` -- The run is stopping (Ctrl-C, the target gone) while a check waited
  at its stage or went on working. For the agent suite, the pytest plugin, the relay
  suite, the server suite.
* ``kept_on`` -- The ``kind`` record kept on ``target`` as ``attribute``. For the server
  suite.
* ``Needs`` -- What the runner reads of one check's schedule. For the check registry.
* ``needs_of`` -- What ``schedule`` stands for. For the check registry.
* ``no_stage`` -- The stage of a check outside a concurrent batch: its waits return at
  once. For the server suite.
* ``NOT_RUN_PREFIX`` -- How the reason of every check a stopped run never reached
  starts. For the pytest plugin, the reports.
* ``Phases`` -- A batch of checks filed by the phase their :class:`Needs` ask for. For
  the agent suite, the relay suite, the server suite.
* ``PreRunner`` -- What both suites' runners share. For the agent suite, the relay
  suite, the server suite.
* ``Schedule`` -- What a check needs of the scheduler (see the module). For the server
  suite, the check registry.
* ``schedule_of_flags`` -- The schedule and needs of a check declared with the former
  keywords. For the check registry.
* ``Scope`` -- What a hold keeps the other checks from sending. For the server suite.
* ``Stage`` -- One check's place in its batch (see the module's text); made by
  ``Stages.join``. For the agent suite, the relay suite, the server suite.
* ``summary_line`` -- The line under the run's summary naming the checks whose message
  carries the hint. For the pytest plugin.
* ``upcoming`` -- The items this process will run after ``item``. For the agent suite,
  the relay suite, the server suite.
"""

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
