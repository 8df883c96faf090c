"""The model's parameters: what ``osfoundry-sim`` lets a user change.

:class:`SimParams` is one frozen, validated value holding every knob the
experiments read. Its defaults are the seed's model (conformance/spec.md#d11,
#figures): a relay pass every 20 s, a 3 s control poll, Graph durations lognormal
with median 60 s, the fitted spread :data:`~pytest_osfoundry.world.SEED_SIGMA` and a
5 s floor, the six poll strategies of the seed's table, cancels at a random 0-40 s, 30 % of replies
dropped, a 600 s outage, and the seed's run counts (:data:`DEFAULT_RUNS`).

Strategies are kept as *specs* (strings: a table name such as ``"every 5 s"`` or an
importable ``"package.module:function"``), so the parameters pickle into worker
processes; :meth:`SimParams.strategy_objects` parses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Final

from pytest_osfoundry._checks import (
    check_flag,
    check_fraction,
    check_int,
    check_number,
    check_positive_int,
    check_seconds,
    is_number,
)
from pytest_osfoundry._mcp_vocabulary import LEGACY_VERSIONS
from pytest_osfoundry.agent import SEED_STRATEGIES, Strategy, parse_strategy
from pytest_osfoundry.agent._internal import strategy_name
from pytest_osfoundry.client._internal import PROTOCOL_CHOICES
from pytest_osfoundry.world import SEED_SIGMA

__all__ = ["DEFAULT_RUNS", "DEFAULT_STRATEGIES", "SIM_PROTOCOL", "SimParams"]

#: Runs per experiment at the seed's counts: pickup and polling 2,000 runs (one
#: shared set of *baseline* runs, see docs/experiments.md), fanout 1,500 single runs
#: (the first 1,500 baseline runs) and 500 batches of 3 and of 5 (1,500 / 2,500
#: runs), cancel 2,000 runs, idempotency 200 runs per repetition.
DEFAULT_RUNS: Final[dict[str, int]] = {
    "pickup": 2000,
    "fanout": 1500,
    "polling": 2000,
    "cancel": 2000,
    "idempotency": 200,
}

#: The MCP revision the simulated agents speak unless told otherwise (see ``protocol``):
#: the newest legacy one, as the seed's agents did.
SIM_PROTOCOL: Final[str] = LEGACY_VERSIONS[0]

#: The seed's six strategies, by the names the seed's polling table gives them.
DEFAULT_STRATEGIES: Final[tuple[str, ...]] = tuple(strategy_name(s) for s in SEED_STRATEGIES)


@dataclass(frozen=True)
class SimParams:
    """Every parameter of the experiments (validated on creation; see module doc).

    Attributes:
        seed: the master seed; every world, agent and fault draws from seeds derived
            from it and the experiment's name and chunk, never from global state.
        runs: when set, the run count of every statistical experiment (pickup and
            polling runs; fanout: ``runs`` single runs — baseline runs, shared with
            pickup and polling — and ``ceil(runs / 3)`` batches of each larger size;
            cancel runs; idempotency runs per repetition) instead of
            :data:`DEFAULT_RUNS`.
        poll_interval: seconds between the relay's passes (D11).
        control_poll: seconds between the relay's control polls while a run runs (D14).
        duration_median, duration_sigma, duration_min: the Graph durations,
            ``max(min, median * exp(sigma * z))``; ``duration_min`` is capped at the
            median.
        stop_latency: seconds from the engine's cancel to the run having stopped.
        strategies: poll strategy specs for the polling experiment, in row order.
        fanout: how many runs are queued at once, one table row each.
        cancel_window: cancels come at a uniform 0..cancel_window seconds after queueing.
        drop_replies: the fraction of agent replies lost in the idempotency experiment.
        idempotency_reps: repetitions of the idempotency experiment.
        offline_seconds: how long the desktop is offline in the offline experiment.
        scenario_duration: the fixed Graph duration of the offline, outbox and
            truncation scenarios (25.6 s: the seed's offline figures imply it).
        outbox_watch: seconds the outbox-off scenario watches the stuck run.
        protocol: the MCP revision the agents' clients speak (one of
            ``auto`` or a revision). The default,
            :data:`SIM_PROTOCOL` (``2025-11-25``), is a choice of speed, not of model:
            every figure is the same in every revision (tests/sim prove it), and the
            legacy envelope costs the in-process path about a quarter fewer
            instructions a call than ``2026-07-28``'s per-request ``_meta`` and
            header checks
            (benchmarks/bench_sim.py ``--protocol``).
        full_stack: the many-run experiments (pickup, polling, fan-out, cancel) send
            every simulated call through the JSON-RPC envelope, the HTTP framing and
            the wire checks of the in-process transport, as the scenarios always do.
            Off by default: their agents and relay then call the server's state
            directly (``WorldConfig(direct=True)``), which no figure depends on
            (tests/sim prove the figures identical both ways).
    """

    seed: int = 0
    runs: int | None = None
    poll_interval: float = 20.0
    control_poll: float = 3.0
    duration_median: float = 60.0
    duration_sigma: float = SEED_SIGMA
    duration_min: float = 5.0
    stop_latency: float = 0.5
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    fanout: tuple[int, ...] = (1, 3, 5)
    cancel_window: float = 40.0
    drop_replies: float = 0.3
    idempotency_reps: int = 3
    offline_seconds: float = 600.0
    scenario_duration: float = 25.6
    outbox_watch: float = 3600.0
    protocol: str = SIM_PROTOCOL
    full_stack: bool = False
    _parsed: tuple[Strategy, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_int(self.seed, "seed")
        if self.runs is not None:
            check_positive_int(self.runs, "runs")
        for name in ("poll_interval", "control_poll", "duration_median", "outbox_watch"):
            check_seconds(getattr(self, name), name, positive=True)
        check_number(self.duration_sigma, "duration_sigma", low=0, high=20)
        for name in (
            "duration_min",
            "stop_latency",
            "cancel_window",
            "offline_seconds",
            "scenario_duration",
        ):
            check_seconds(getattr(self, name), name)
        if check_fraction(self.drop_replies, "drop_replies") >= 1:
            raise ValueError(f"drop_replies must be below 1, got {self.drop_replies!r}")
        check_positive_int(self.idempotency_reps, "idempotency_reps")
        check_flag(self.full_stack, "full_stack")
        if self.protocol not in PROTOCOL_CHOICES:
            raise ValueError(
                f"protocol must be one of {', '.join(PROTOCOL_CHOICES)}, got {self.protocol!r}"
            )
        if (
            not isinstance(self.fanout, tuple)
            or not self.fanout
            or not all(is_number(k) and isinstance(k, int) and k >= 1 for k in self.fanout)
        ):
            raise ValueError(
                f"fanout must be a non-empty tuple of positive ints, got {self.fanout!r}"
            )
        if not isinstance(self.strategies, tuple) or not self.strategies:
            raise ValueError(
                f"strategies must be a non-empty tuple of strategy specs, got {self.strategies!r}"
            )
        parsed = tuple(parse_strategy(spec) for spec in self.strategies)
        object.__setattr__(self, "_parsed", parsed)

    def runs_for(self, experiment: str) -> int:
        """The run count of ``experiment`` (``runs`` if set, else :data:`DEFAULT_RUNS`)."""
        if self.runs is not None:
            return self.runs
        return DEFAULT_RUNS[experiment]

    def strategy_objects(self) -> tuple[Strategy, ...]:
        """The parsed strategies, in row order."""
        return self._parsed

    def strategy_names(self) -> list[str]:
        """Each strategy's display name (the table's name for the built-in ones)."""
        return [strategy_name(s) for s in self._parsed]

    def to_dict(self) -> dict[str, Any]:
        """The parameters as JSON-ready data (``runs`` resolved per experiment)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
        data["runs"] = {name: self.runs_for(name) for name in DEFAULT_RUNS}
        data["strategies"] = self.strategy_names()
        data["fanout"] = list(self.fanout)
        return data
