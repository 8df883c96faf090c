"""The fake desktop relay (SPEC D11-D18): passes, outbox and bounded completion.

* :class:`FakeRelay` — a port of the desktop's relay hook, on any clock and transport.
* :class:`MemoryOutbox`, :class:`FileOutbox` — where completions wait until a 2xx (D17).
* :func:`bounded_completion` — the all-or-nothing 100,000-character bound (D18).
"""

from pytest_osfoundry.relay._bounded import (
    ERROR_LIMIT,
    RESULT_LIMIT,
    SEED_ENVELOPE,
    bounded_completion,
    cut_error,
    max_result_text,
)
from pytest_osfoundry.relay._desktop import NO_LONGER_SHARED, FakeRelay, PassRecord, RelayEvent
from pytest_osfoundry.relay._outbox import FileOutbox, MemoryOutbox, Outbox

__all__ = [
    "ERROR_LIMIT",
    "NO_LONGER_SHARED",
    "RESULT_LIMIT",
    "SEED_ENVELOPE",
    "FakeRelay",
    "FileOutbox",
    "MemoryOutbox",
    "Outbox",
    "PassRecord",
    "RelayEvent",
    "bounded_completion",
    "cut_error",
    "max_result_text",
]
