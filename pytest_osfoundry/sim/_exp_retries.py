"""The idempotency experiment: retries after dropped replies, new key against same key."""

from __future__ import annotations

from typing import Any

from pytest_osfoundry.agent._scripted import Retry, ScriptedAgent
from pytest_osfoundry.faults import DropReplies, FaultyTransport
from pytest_osfoundry.sim._params import SimParams
from pytest_osfoundry.sim._tasks import Task, derive_seed
from pytest_osfoundry.sim._worlds import make_world, wait_done
from pytest_osfoundry.world import OsfWorld

__all__ = ["idempotency"]


def idempotency(params: SimParams, task: Task, worlds: list[OsfWorld]) -> dict[str, Any]:
    """One repetition: ``size`` runs per retry behaviour with a share of replies dropped."""
    world = make_world(params, derive_seed(params.seed, "idempotency", task.index))
    worlds.append(world)
    state = world.server.state
    gsid = world.sessions[0].graph_session_id
    out: dict[str, Any] = {}
    tokens: dict[Retry, str] = {
        "new-key": world.creds.agent_token,
        "same-key": world.creds.other_agent_token,
    }
    for retry, token in tokens.items():
        client = world.agent_client(token)
        client.initialize()  # the handshake is not a start call: drop only what follows
        drop = DropReplies(
            fraction=params.drop_replies,
            seed=derive_seed(params.seed, "idempotency-drops", task.index, retry),
        )
        client.transport = FaultyTransport(client.transport, drop)
        agent = ScriptedAgent(
            world.clock,
            client,
            retry=retry,
            seed=derive_seed(params.seed, "idempotency-agent", task.index, retry),
        )
        records = [agent.start(gsid, poll=False, delay=i * 0.01) for i in range(task.size)]
        for record in records:
            wait_done(world, record)
        cred = world.server.tokens.lookup(token, world.clock.now())
        assert cred is not None
        queued = sum(1 for run in state.runs.values() if run.agent_id == cred.principal_id)
        out[retry] = {
            "calls": sum(r.start_calls for r in records),
            "runs_queued": queued,
            "dropped": drop.dropped,
        }
    return out
