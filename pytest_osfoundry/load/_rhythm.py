"""The system's rhythm in a load, and the time scale that runs it faster than life.

Every duration of the system is given in *system seconds*, as the spec states it
(a pass every 20 s, a control poll every 3 s, Graphs of a median 60 s, a seed poll
strategy); :class:`Rhythm` multiplies each by ``scale`` to get the wall-clock seconds
the load runs it at. ``scale=1`` is real time; ``scale=0.025`` runs 40 times faster
(a pass every 0.5 s). Nothing else changes: the clocks are the wall clock, the
server's timestamps are its own, and the accounting compares them with the *scaled*
interval. A time scale only moves the rhythm: a server's own timing (its latency, its
24 h key window) is not scaled.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_osfoundry._checks import check_fraction, check_number, check_seconds
from pytest_osfoundry._vocabulary import CONTROL_POLL_SECONDS, RELAY_INTERVAL_SECONDS
from pytest_osfoundry.agent import Strategy
from pytest_osfoundry.engine import Graph, LogNormal
from pytest_osfoundry.world import SEED_SIGMA

__all__ = ["Rhythm", "Scaled"]


@dataclass(frozen=True)
class Scaled:
    """A poll strategy in system seconds, run at ``scale`` (it sees system time)."""

    strategy: Strategy
    scale: float

    def __call__(self, attempt: int, elapsed: float) -> float:
        return float(self.strategy(attempt, elapsed / self.scale)) * self.scale


@dataclass(frozen=True)
class Rhythm:
    """The load's durations in system seconds and the ``scale`` that makes them wall time.

    ``cancel_share`` of an agent's runs are cancelled a uniform 0 to ``cancel_window``
    system seconds after queueing (the seed's cancel experiment: 0-40 s).
    """

    scale: float = 1.0
    interval: float = RELAY_INTERVAL_SECONDS
    control_poll: float = CONTROL_POLL_SECONDS
    graph_median: float = 60.0
    graph_sigma: float = SEED_SIGMA
    graph_minimum: float = 5.0
    stop_latency: float = 0.5
    retry_delay: float = 1.0
    think: float = 0.0
    cancel_share: float = 0.1
    cancel_window: float = 40.0

    def __post_init__(self) -> None:
        check_number(self.scale, "time scale")
        if not 0 < self.scale <= 1000:
            raise ValueError(f"the time scale must be > 0 and at most 1000, got {self.scale!r}")
        for name in ("interval", "control_poll", "graph_median"):
            check_seconds(getattr(self, name), name, positive=True)
        for name in ("graph_minimum", "stop_latency", "retry_delay", "think", "cancel_window"):
            check_seconds(getattr(self, name), name)
        if self.graph_minimum > self.graph_median:
            raise ValueError(
                f"graph_minimum ({self.graph_minimum}) must not exceed graph_median "
                f"({self.graph_median})"
            )
        check_fraction(self.cancel_share, "cancel_share")

    def wall(self, system_seconds: float) -> float:
        """``system_seconds`` as wall-clock seconds at this scale."""
        return system_seconds * self.scale

    @property
    def pass_interval(self) -> float:
        """The desktop's pass interval in wall-clock seconds."""
        return self.interval * self.scale

    def graph(self) -> Graph:
        """The desktop's Graph: lognormal durations (the seed's spread), scaled."""
        return Graph(
            duration=LogNormal(
                median=self.graph_median * self.scale,
                sigma=self.graph_sigma,
                minimum=self.graph_minimum * self.scale,
            ),
            result={"answer": "done"},
            total_tokens=1200,
            reported_cost=0.0036,
        )

    def strategy(self, strategy: Strategy) -> Strategy:
        """``strategy`` (system seconds) at this scale."""
        return strategy if self.scale == 1 else Scaled(strategy, self.scale)
