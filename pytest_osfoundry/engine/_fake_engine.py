"""The desktop's fleet engine, faked on the kit's clock.

:class:`FakeEngine` starts a run of a :class:`~pytest_osfoundry.engine._graph.Graph`
at the clock's current time and ends it by itself on the clock: no threads, no
sleeping, one scheduled event per run (so tens of thousands of runs stay cheap).

How a run unfolds (``d`` is its sampled duration, ``n`` the number of waves):

* Wave ``k`` (0-based) starts at ``started_at + k * d / n`` and spends its tokens as
  it starts. Before each wave the token ceiling, if any, is checked; once the tokens
  spent reach it the wave is refused and the run ends ``failed`` at that moment with
  the error ``token ceiling of N reached; wave K refused`` (``K`` from 1).
* Otherwise the run ends at ``started_at + d``: ``failed`` with the Graph's error if
  it has one, else ``completed`` with the Graph's result. Either way it reports all
  its tokens and cost.
* :meth:`EngineRun.cancel` (the engine's ``fleet_cancel_run``) stops a running run
  ``stop_latency`` seconds later (0.5 s by default) with outcome ``cancelled``, no
  result and no error. It keeps the tokens spent
  so far: with waves, the sum of the waves already started (a wave counts from the
  instant it starts); without waves, ``floor(total_tokens * elapsed / d)``. The cost
  kept is ``reported_cost`` times the fraction of the planned tokens spent (or of the
  duration elapsed, when no tokens were planned). A failed-at-the-ceiling run keeps
  its cost by the same rule. Cancelling a run that has ended changes nothing, but
  every call is recorded in :attr:`FakeEngine.cancel_calls`.

``EngineRun.done`` is set, with the :class:`~pytest_osfoundry.engine.RunOutcome` as its
value, when the run ends.

:meth:`EngineRun.suspend` and :meth:`EngineRun.resume` are the desktop asleep: the run
stands still between them (no wave starts, it does not end, a stop asked for waits)
and then goes on from where it stood, so it ends as much later as it slept.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from pytest_osfoundry._checks import check_implements, check_int, check_seconds
from pytest_osfoundry._jslength import js_stringify
from pytest_osfoundry._vocabulary import CANCELLED, COMPLETED, FAILED
from pytest_osfoundry.clock import Clock, Signal, Timer
from pytest_osfoundry.engine._contract import RunOutcome
from pytest_osfoundry.engine._graph import Graph, ceiling_error

__all__ = ["EngineRun", "FakeEngine", "GraphNotFound", "RunNotFound"]


class GraphNotFound(KeyError):
    """No Graph is registered for a graph session id and the engine has no default."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "graph not found"


class RunNotFound(KeyError):
    """No run with this id was started by the engine."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "run not found"


class EngineRun:
    """One fleet run. Created by :meth:`FakeEngine.start`; ends by itself on the clock.

    Attributes:
        run_id: the fleet run id (``fleet-`` + 12 hex), unique within its engine.
        graph_session_id, arguments, channel, graph: what it was started with.
        started_at: clock time it started.
        duration: its sampled duration in seconds.
        finishes_at: when it ends unless cancelled (earlier than
            ``started_at + duration`` when the token ceiling refuses a wave).
        ended_at: when it actually ended (``None`` while running).
        done: a :class:`~pytest_osfoundry.clock.Signal` set with the outcome at the end.
        outcome: ``None`` while running, then the :class:`~pytest_osfoundry.engine.RunOutcome`.
    """

    __slots__ = (
        "_engine",
        "_refused",
        "_slept",
        "_stop_left",
        "_stop_timer",
        "_suspended_at",
        "_timer",
        "arguments",
        "channel",
        "done",
        "duration",
        "ended_at",
        "finishes_at",
        "graph",
        "graph_session_id",
        "outcome",
        "run_id",
        "started_at",
    )

    def __init__(
        self,
        engine: FakeEngine,
        run_id: str,
        graph_session_id: str,
        arguments: dict[str, Any],
        channel: str,
        graph: Graph,
        started_at: float,
        duration: float,
    ) -> None:
        self._engine = engine
        self.run_id = run_id
        self.graph_session_id = graph_session_id
        self.arguments = arguments
        self.channel = channel
        self.graph = graph
        self.started_at = started_at
        self.duration = duration
        self.ended_at: float | None = None
        self.outcome: RunOutcome | None = None
        self.done: Signal = engine.clock.signal()
        self._slept = 0.0  # seconds spent suspended so far
        self._suspended_at: float | None = None
        self._stop_timer: Timer | None = None
        self._stop_left: float | None = None  # a stop asked for while suspended: its delay
        self._refused = self._refused_wave()
        if self._refused is None:
            self.finishes_at = started_at + duration
        else:
            self.finishes_at = started_at + self._wave_offset(self._refused)
        self._timer: Timer = engine.clock.call_at(self.finishes_at, self._finish)

    def __repr__(self) -> str:
        state = "running" if self.outcome is None else self.outcome.status
        return f"<EngineRun {self.run_id} {self.channel} {state}>"

    @property
    def running(self) -> bool:
        """True until the run ends (completes, fails or is cancelled)."""
        return self.outcome is None

    def _wave_offset(self, index: int) -> float:
        """Seconds of running (sleep not counted) after which wave ``index`` starts."""
        return index * self.duration / len(self.graph.waves)

    def _ran(self, now: float) -> float:
        """Seconds the run has been running at ``now``, time suspended not counted."""
        asleep = 0.0 if self._suspended_at is None else now - self._suspended_at
        return now - self.started_at - self._slept - asleep

    def _refused_wave(self) -> int | None:
        """The 0-based index of the wave the ceiling refuses, or ``None``."""
        ceiling = self.graph.token_ceiling
        if ceiling is None:
            return None
        spent = 0
        for index, tokens in enumerate(self.graph.waves):
            if spent >= ceiling:
                return index
            spent += tokens
        return None

    @property
    def tokens_spent(self) -> int:
        """Tokens spent so far (the outcome's once the run has ended)."""
        if self.outcome is not None:
            return self.outcome.total_tokens
        return self._spent_at(self._engine.clock.now())

    def _spent_at(self, now: float) -> int:
        graph = self.graph
        ran = self._ran(now)
        if graph.waves:
            last = len(graph.waves) if self._refused is None else self._refused
            spent = 0
            for index in range(last):
                if self._wave_offset(index) > ran:
                    break
                spent += graph.waves[index]
            return spent
        if self.duration <= 0:
            return 0
        fraction = min(1.0, max(0.0, ran / self.duration))
        return math.floor(graph.total_tokens * fraction)

    def _cost_for(self, spent: int, now: float) -> float:
        graph = self.graph
        planned = graph.planned_tokens
        if planned > 0:
            fraction = spent / planned
        elif self.duration > 0:
            fraction = min(1.0, max(0.0, self._ran(now) / self.duration))
        else:
            fraction = 0.0
        return float(graph.reported_cost) * fraction

    def _end(self, outcome: RunOutcome) -> None:
        self.outcome = outcome
        self.ended_at = self._engine.clock.now()
        self.done.set(outcome)

    def _finish(self) -> None:
        if self.outcome is not None:
            return
        graph = self.graph
        if self._refused is not None:
            now = self._engine.clock.now()
            spent = self._spent_at(now)
            assert graph.token_ceiling is not None
            self._end(
                RunOutcome(
                    FAILED,
                    None,
                    spent,
                    self._cost_for(spent, now),
                    ceiling_error(graph.token_ceiling, self._refused + 1),
                )
            )
        elif graph.error is not None:
            self._end(
                RunOutcome(
                    FAILED,
                    None,
                    graph.planned_tokens,
                    float(graph.reported_cost),
                    graph.error,
                )
            )
        else:
            self._end(
                RunOutcome(
                    COMPLETED,
                    graph.result_value(),
                    graph.planned_tokens,
                    float(graph.reported_cost),
                )
            )

    def cancel(self) -> None:
        """The engine's ``fleet_cancel_run`` for this run: stop it as ``cancelled``.

        The run stops ``engine.stop_latency`` seconds later (0.5 s by default: a fleet
        run takes a moment to wind down). If it reaches its natural end first, that
        outcome stands — the relay reports ``cancelled`` anyway (SPEC D16). No effect
        once the run has ended. Every call is appended to :attr:`FakeEngine.cancel_calls`.
        """
        self._engine.cancel_calls.append(self.run_id)
        if self.outcome is not None:
            return
        latency = self._engine.stop_latency
        if self._suspended_at is not None:
            self._stop_left = latency  # it stops once it is resumed
        elif latency > 0:
            self._stop_timer = self._engine.clock.call_later(latency, self._stop)
        else:
            self._stop()

    def suspend(self) -> None:
        """The machine sleeps: the run stands still until :meth:`resume` (no wave starts,
        it does not end, a stop under way waits). No effect once ended or suspended."""
        if self.outcome is not None or self._suspended_at is not None:
            return
        now = self._engine.clock.now()
        self._suspended_at = now
        self._timer.cancel()
        if self._stop_timer is not None and not self._stop_timer.cancelled:
            self._stop_left = max(0.0, self._stop_timer.when - now)
            self._stop_timer.cancel()
        self._stop_timer = None

    def resume(self) -> None:
        """The machine wakes: the run goes on from where it stood (it ends as much later
        as it slept). No effect unless suspended."""
        if self._suspended_at is None:
            return
        clock = self._engine.clock
        slept = clock.now() - self._suspended_at
        self._suspended_at = None
        self._slept += slept
        if self.outcome is not None:
            return
        self.finishes_at += slept
        self._timer = clock.call_at(self.finishes_at, self._finish)
        left, self._stop_left = self._stop_left, None
        if left is None:
            return
        if left > 0:
            self._stop_timer = clock.call_later(left, self._stop)
        else:
            self._stop()

    def _stop(self) -> None:
        if self.outcome is not None:
            return
        self._timer.cancel()
        now = self._engine.clock.now()
        spent = self._spent_at(now)
        self._end(RunOutcome(CANCELLED, None, spent, self._cost_for(spent, now)))


def _check_text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{what} must be a non-empty str, got {value!r}")
    return value


class FakeEngine:
    """The desktop's fleet engine on the kit's clock.

    Args:
        clock: the :class:`~pytest_osfoundry.clock.VirtualClock` or ``RealClock``
            runs are timed on.
        graphs: the Graph for each graph session id (copied into :attr:`graphs`,
            which may be changed later).
        default: the Graph for any session id not in ``graphs`` (``None``: such a
            start raises :class:`GraphNotFound`).
        seed: seeds durations and run ids, so the same starts give the same runs;
            ``None`` draws fresh randomness.
        stop_latency: seconds between :meth:`EngineRun.cancel` and the run stopping
            (0.5 by default, which with the relay's 3 s control poll reproduces the
            seed's running-cancel figures: mean 2.0 s, max 3.5 s). 0 stops at once.

    Attributes:
        runs: every run started, in order (``len(engine.runs) == 0``: nothing executed).
        cancel_calls: the run id of every ``fleet_cancel_run`` call, in order,
            including calls on runs that had already ended.
    """

    def __init__(
        self,
        clock: Clock,
        graphs: Mapping[str, Graph] | None = None,
        *,
        default: Graph | None = None,
        seed: int | None = 0,
        stop_latency: float = 0.5,
    ) -> None:
        check_implements(clock, "clock", Clock)
        self.clock = clock
        self.stop_latency = check_seconds(stop_latency, "stop_latency")
        if graphs is not None and not isinstance(graphs, Mapping):
            raise TypeError(f"graphs must be a mapping of session id to Graph, got {graphs!r}")
        self.graphs: dict[str, Graph] = {}
        for key, graph in (graphs or {}).items():
            _check_text(key, "a graphs key")
            if not isinstance(graph, Graph):
                raise TypeError(f"graphs[{key!r}] must be a Graph, got {graph!r}")
            self.graphs[key] = graph
        if default is not None and not isinstance(default, Graph):
            raise TypeError(f"default must be a Graph or None, got {default!r}")
        self.default = default
        if seed is not None:
            check_int(seed, "seed")
        self.seed = seed
        self._rng = random.Random(seed)
        self._id_rng = random.Random(None if seed is None else f"fleet-run-ids:{seed}")
        self.runs: list[EngineRun] = []
        self._by_id: dict[str, EngineRun] = {}
        self.cancel_calls: list[str] = []

    def graph_for(self, graph_session_id: str) -> Graph:
        """The Graph a start of ``graph_session_id`` would run.

        Raises:
            GraphNotFound: no Graph for it and no default.
        """
        graph = self.graphs.get(graph_session_id, self.default)
        if graph is None:
            raise GraphNotFound(
                f"no Graph registered for graph session {graph_session_id!r} and no default "
                f"(known: {', '.join(sorted(self.graphs)) or 'none'})"
            )
        return graph

    def _new_run_id(self) -> str:
        while True:
            run_id = f"fleet-{self._id_rng.getrandbits(48):012x}"
            if run_id not in self._by_id:
                return run_id

    def start(self, graph_session_id: str, arguments: dict[str, Any], channel: str) -> EngineRun:
        """Start a run of the session's Graph now, on ``channel``; returns the run.

        ``arguments`` must be a JSON-compatible dict (kept on the run, not copied).

        Raises:
            GraphNotFound: no Graph for ``graph_session_id`` and no default.
            TypeError: a bad ``graph_session_id``, ``arguments`` or ``channel``.
        """
        _check_text(graph_session_id, "graph_session_id")
        if not isinstance(arguments, dict):
            raise TypeError(f"arguments must be a dict, got {type(arguments).__name__}")
        js_stringify(arguments, name="arguments")
        _check_text(channel, "channel")
        graph = self.graph_for(graph_session_id)
        duration = graph.sample_duration(self._rng)
        run = EngineRun(
            self,
            self._new_run_id(),
            graph_session_id,
            arguments,
            channel,
            graph,
            self.clock.now(),
            duration,
        )
        self.runs.append(run)
        self._by_id[run.run_id] = run
        return run

    def run(self, run_id: str) -> EngineRun:
        """The run with this id.

        Raises:
            RunNotFound: this engine started no run with that id.
        """
        try:
            return self._by_id[run_id]
        except (KeyError, TypeError):
            raise RunNotFound(f"no fleet run {run_id!r} was started by this engine") from None

    def cancel_run(self, run_id: str) -> None:
        """``fleet_cancel_run(run_id)``: :meth:`EngineRun.cancel` by id.

        Raises:
            RunNotFound: this engine started no run with that id.
        """
        self.run(run_id).cancel()

    @property
    def active(self) -> list[EngineRun]:
        """The runs that have not ended yet, in start order."""
        return [run for run in self.runs if run.outcome is None]
