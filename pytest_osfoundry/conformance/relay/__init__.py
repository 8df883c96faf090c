"""The relay suite's machinery: check a desktop relay, in any language, against the rule book.

``pytest --osf-relay-command=CMD`` runs the checks of the rule book's ``relay/``
folder against the relay that ``CMD`` starts (docs/relay-conformance.md). The public
API of a relay check (the rule book's import nothing else of the relay suite):

* :class:`RelaySuite` -- the instrumented reference server and the driver API;
* :class:`RelayConformance` -- the context one relay check works in (its
  :class:`Timing`);
* :class:`RunPlan` -- how the driver tells the engine a run goes; :class:`RunRecord`
  -- one run the engine was asked for;
* :class:`Fault` -- what the instrumented server does to the relay's matching requests
  (``conf.fault(Fault(...))``).

The decorator and everything else a check shares with the server suite are
:mod:`pytest_osfoundry.conformance`'s.
"""

from __future__ import annotations

from pytest_osfoundry.conformance.relay._driver import RunPlan, RunRecord
from pytest_osfoundry.conformance.relay._harness import RelayConformance, RelaySuite, Timing
from pytest_osfoundry.conformance.relay._instrumented import Fault

__all__ = ["Fault", "RelayConformance", "RelaySuite", "RunPlan", "RunRecord", "Timing"]
