"""What the desktop relay needs of a Graph engine: :class:`Engine`, :class:`StartedRun`.

The relay starts a run, waits on its ``done`` signal (or cancels it) and reads its
:class:`RunOutcome`. :class:`~pytest_osfoundry.engine.FakeEngine` is the kit's
engine; any object with the same methods can stand in for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pytest_osfoundry._vocabulary import TERMINAL_STATUSES
from pytest_osfoundry.clock import Signal

__all__ = ["Engine", "RunOutcome", "StartedRun"]


@dataclass(frozen=True)
class RunOutcome:
    """How an engine run ended.

    ``status`` is ``completed``, ``failed`` or ``cancelled``; ``result`` is the
    Graph's result when completed and ``None`` otherwise; ``error`` is set only when
    failed. (Not to be confused with a conformance check's outcome.)
    """

    status: str
    result: Any = None
    total_tokens: int = 0
    reported_cost: float = 0.0
    error: str | None = None

    def __post_init__(self) -> None:
        if self.status not in TERMINAL_STATUSES:
            raise ValueError(
                f"RunOutcome.status must be one of {', '.join(TERMINAL_STATUSES)}; "
                f"got {self.status!r}"
            )


class StartedRun(Protocol):
    """A run an :class:`Engine` started."""

    @property
    def channel(self) -> str:
        """The channel it was started on."""
        ...

    @property
    def done(self) -> Signal:
        """Set, with the :class:`RunOutcome`, when the run ends."""
        ...

    @property
    def outcome(self) -> RunOutcome | None:
        """``None`` while running, then how it ended."""
        ...

    def cancel(self) -> None:
        """Stop the run (``fleet_cancel_run``); ``done`` is set once it has stopped."""
        ...


class Engine(Protocol):
    """A Graph engine the desktop relay can start runs on."""

    def start(self, graph_session_id: str, arguments: dict[str, Any], channel: str) -> StartedRun:
        """Start a run of the session's Graph now; raise ``KeyError``/``TypeError``/
        ``ValueError`` when it cannot be started."""
        ...
