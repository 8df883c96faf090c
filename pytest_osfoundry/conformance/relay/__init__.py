"""The relay suite's machinery: check a desktop relay, in any language, against the rule book.

``pytest --osf-relay-command=CMD`` runs the checks of the rule book's ``relay/``
folder against the relay that ``CMD`` starts (docs/relay-conformance.md):

* :class:`RelaySuite` — the instrumented reference server and the driver API;
* :class:`RelayConformance` — the context one relay check works in.
"""

from __future__ import annotations

from pytest_osfoundry.conformance.relay._harness import RelayConformance, RelaySuite, Timing

__all__ = ["RelayConformance", "RelaySuite", "Timing"]
