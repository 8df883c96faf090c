"""What the conformance package's other rooms use of the relay suite.

Not for users, nor for checks (they use :mod:`pytest_osfoundry.conformance`): the one face
through which another room reaches this one's private modules (``tests/test_faces.py``).
Each name is imported from its module when first asked for, so no import gets dearer.

* ``bearer_token`` -- The token of an ``Authorization. For the agent suite.
* ``relay_argv`` -- ``--osf-relay-command``'s ``CMD`` as argv. For the pytest plugin.
* ``RELAY_CONF`` -- The relay check's context, on its item (set by its fixture or the
  concurrent runner). For the pytest plugin.
* ``relay_evidence`` -- The JSON report's ``relay`` entry for a failed relay check
  (texts ``mask``ed, and the check's own desktop token). For the pytest plugin.
* ``relay_lines`` -- The requests of :func:`relay_evidence` a line each, for pytest's
  failure report. For the pytest plugin.
* ``relay_preflight`` -- Start the relay once and wait for its first answered sync;
  raise on a problem. For the pytest plugin.
* ``relay_record`` -- Everything a relay check judged, for ``--osf-relay-record``. For
  the pytest plugin.
* ``RelayPreflightError`` -- The relay command cannot be checked; the message names the
  problem. For the pytest plugin.
* ``stderr_lines`` -- The relay's stderr of :func:`relay_evidence` for pytest's failure
  report. For the pytest plugin.
* ``write_relay_record`` -- Write ``record`` to ``folder/<check id>.json`` (ASCII JSON,
  ``secrets`` masked); the file's path. For the pytest plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.relay._evidence import (
        RELAY_CONF,
        relay_evidence,
        relay_lines,
        relay_record,
        stderr_lines,
        write_relay_record,
    )
    from pytest_osfoundry.conformance.relay._harness import relay_argv
    from pytest_osfoundry.conformance.relay._instrumented import bearer_token
    from pytest_osfoundry.conformance.relay._preflight import RelayPreflightError, relay_preflight

_LAZY: dict[str, str] = {
    "RELAY_CONF": "pytest_osfoundry.conformance.relay._evidence",
    "RelayPreflightError": "pytest_osfoundry.conformance.relay._preflight",
    "bearer_token": "pytest_osfoundry.conformance.relay._instrumented",
    "relay_argv": "pytest_osfoundry.conformance.relay._harness",
    "relay_evidence": "pytest_osfoundry.conformance.relay._evidence",
    "relay_lines": "pytest_osfoundry.conformance.relay._evidence",
    "relay_preflight": "pytest_osfoundry.conformance.relay._preflight",
    "relay_record": "pytest_osfoundry.conformance.relay._evidence",
    "stderr_lines": "pytest_osfoundry.conformance.relay._evidence",
    "write_relay_record": "pytest_osfoundry.conformance.relay._evidence",
}
"""Each shared name and the module that defines it."""

__all__ = [
    "RELAY_CONF",
    "RelayPreflightError",
    "bearer_token",
    "relay_argv",
    "relay_evidence",
    "relay_lines",
    "relay_preflight",
    "relay_record",
    "stderr_lines",
    "write_relay_record",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
