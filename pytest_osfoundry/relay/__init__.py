"""The fake desktop relay (SPEC D11-D18): passes, outbox and bounded completion.

* :class:`FakeRelay` — a port of the desktop's relay hook, on any clock, with any
  relay API client and engine; it records :class:`PassRecord` and :class:`RelayEvent`.
* :class:`Outbox`, :class:`MemoryOutbox`, :class:`FileOutbox` — where completions wait
  until a 2xx (D17).
* :func:`bounded_completion` — the all-or-nothing 100,000-character bound (D18);
  :class:`Envelope` and :func:`max_result_text` — its arithmetic (the fields around
  the result, the longest result text that still fits).

Everything but the bound is imported on first use: the server suite's
truncation checks need only the bound, and a server run then loads neither the relay
nor the fake Graph engine it drives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names
from pytest_osfoundry.relay._bounded import Envelope, bounded_completion, max_result_text

if TYPE_CHECKING:
    from pytest_osfoundry.relay._desktop import FakeRelay, PassRecord, RelayEvent
    from pytest_osfoundry.relay._outbox import FileOutbox, MemoryOutbox, Outbox

__all__ = [
    "Envelope",
    "FakeRelay",
    "FileOutbox",
    "MemoryOutbox",
    "Outbox",
    "PassRecord",
    "RelayEvent",
    "bounded_completion",
    "max_result_text",
]

_ON_FIRST_USE: dict[str, str] = {
    "FakeRelay": "pytest_osfoundry.relay._desktop",
    "PassRecord": "pytest_osfoundry.relay._desktop",
    "RelayEvent": "pytest_osfoundry.relay._desktop",
    "FileOutbox": "pytest_osfoundry.relay._outbox",
    "MemoryOutbox": "pytest_osfoundry.relay._outbox",
    "Outbox": "pytest_osfoundry.relay._outbox",
}
"""The relay's classes and the module of each, imported when first asked for (not kept
here: a pytester run that re-imports the relay's modules sees the classes they hold)."""

__getattr__, __dir__ = lazy_names(__name__, _ON_FIRST_USE, globals())
