"""What the conformance package's other rooms use of the relay suite: its evidence,
records and preflight (each name imported on first use)."""

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
