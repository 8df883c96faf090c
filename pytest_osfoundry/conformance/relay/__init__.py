"""The relay suite's own parts: check a desktop relay, in any language, against the rule book.

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

The names are imported when first used (PEP 562), as the suite's own: a server run
imports :mod:`~pytest_osfoundry.conformance.relay._evidence` (what a relay check's
report shows) and nothing of the relay suite's machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.relay._driver import RunPlan, RunRecord
    from pytest_osfoundry.conformance.relay._harness import RelayConformance, RelaySuite, Timing
    from pytest_osfoundry.conformance.relay._instrumented import Fault

_LAZY: dict[str, str] = {
    "Fault": "pytest_osfoundry.conformance.relay._instrumented",
    "RelayConformance": "pytest_osfoundry.conformance.relay._harness",
    "RelaySuite": "pytest_osfoundry.conformance.relay._harness",
    "RunPlan": "pytest_osfoundry.conformance.relay._driver",
    "RunRecord": "pytest_osfoundry.conformance.relay._driver",
    "Timing": "pytest_osfoundry.conformance.relay._harness",
}
"""Each public name and the module that defines it."""

__all__ = ["Fault", "RelayConformance", "RelaySuite", "RunPlan", "RunRecord", "Timing"]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
