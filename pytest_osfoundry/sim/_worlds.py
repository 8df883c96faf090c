"""The worlds the experiments run in, and the driver's helpers (phase, keys, waits)."""

from __future__ import annotations

import math
import random
from typing import Any

from pytest_osfoundry._vocabulary import TERMINAL_STATUSES
from pytest_osfoundry.agent._scripted import AgentRun
from pytest_osfoundry.engine._graph import Fixed, Graph, LogNormal
from pytest_osfoundry.server._records import Retention
from pytest_osfoundry.server._state import Run
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.sim._tasks import SimulationError
from pytest_osfoundry.world import OsfWorld, WorldConfig

__all__ = [
    "LIMIT",
    "make_world",
    "new_key",
    "phase_delay",
    "scenario_graph",
    "seed_graph",
    "wait_done",
    "wait_terminal",
]

#: Virtual seconds any single wait may take before the driver gives up.
LIMIT = 30 * 86_400.0


def seed_graph(params: SimParams) -> Graph:
    """The seed's synthetic Graph: lognormal durations with the params' median and spread."""
    return Graph(
        duration=LogNormal(
            median=params.duration_median,
            sigma=params.duration_sigma,
            minimum=min(params.duration_min, params.duration_median),
        )
    )


def make_world(
    params: SimParams,
    seed: int,
    *,
    graph: Graph | None = None,
    graphs: dict[str, Graph] | None = None,
    sessions: int = 3,
    many: bool = False,
    **config: Any,
) -> OsfWorld:
    """A world with the params' relay timing, Graph and engine stop latency.

    ``many``: a world of the many-run experiments, whose agents and relay call the
    server's state directly unless ``params.full_stack``. ``config`` goes to
    :class:`~pytest_osfoundry.world.WorldConfig` (``offline``,
    ``outbox``, ``lose_completions``, ...).
    """
    default = graph if graph is not None else seed_graph(params)
    world = OsfWorld(
        WorldConfig(
            seed=seed,
            interval=params.poll_interval,
            control_poll=params.control_poll,
            graph=default,
            graphs=graphs,
            sessions=sessions,
            stop_latency=params.stop_latency,
            protocol=params.protocol,
            direct=many and not params.full_stack,
            # An experiment reads every run and relay event it made: keep them all.
            retention=Retention.unbounded(),
            relay_history=None,
            **config,
        )
    )
    # The sim's agents and relay are the kit's own clients, whose every request is
    # proven to match MCP's schema (tests/server/test_server_request_schema.py);
    # validating them again would more than triple the sim's CPU (docs/choices.md).
    world.server.mcp.check_schema = False
    return world


def phase_delay(world: OsfWorld, rng: random.Random, interval: float) -> float:
    """Seconds from now to a uniformly random point of the next relay pass interval."""
    now = world.clock.now()
    last = world.relay.passes[-1].at if world.relay.passes else now
    grid = last + interval * math.ceil(max(0.0, now - last) / interval)
    return (grid - now) + rng.random() * interval


def new_key(rng: random.Random) -> str:
    return f"sim-{rng.getrandbits(128):032x}"


def wait_terminal(world: OsfWorld, run: Run) -> None:
    world.clock.run_until(lambda: run.status in TERMINAL_STATUSES, limit=LIMIT)


def wait_done(world: OsfWorld, record: AgentRun) -> None:
    world.clock.run_until(record.done, limit=LIMIT)
    if record.error is not None or record.command_id is None:
        raise SimulationError(f"scripted run failed: {record.error or 'no command id'}")


def scenario_graph(params: SimParams) -> Graph:
    return Graph(duration=Fixed(params.scenario_duration), result="done")
