"""The fake desktop relay (SPEC D11-D18): passes, outbox and bounded completion.

* :class:`FakeRelay` — a port of the desktop's relay hook, on any clock, with any
  relay API client and engine; it records :class:`PassRecord` and :class:`RelayEvent`.
* :class:`Outbox`, :class:`MemoryOutbox`, :class:`FileOutbox` — where completions wait
  until a 2xx (D17).
* :func:`bounded_completion` — the all-or-nothing 100,000-character bound (D18).
"""

from pytest_osfoundry.relay._bounded import bounded_completion
from pytest_osfoundry.relay._desktop import FakeRelay, PassRecord, RelayEvent
from pytest_osfoundry.relay._outbox import FileOutbox, MemoryOutbox, Outbox

__all__ = [
    "FakeRelay",
    "FileOutbox",
    "MemoryOutbox",
    "Outbox",
    "PassRecord",
    "RelayEvent",
    "bounded_completion",
]
