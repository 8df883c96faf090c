"""Example (c): retries under dropped replies — the same key versus a new key.

30 % of the replies to the agent are dropped (the request reached the server, the
answer never came back), so the agent calls ``run_graph_session`` again. With the
same idempotency key the server queues each run once; with a new key it queues a
duplicate for every retry.
"""

import pytest


def queue_many(osf_world, osf_make_agent, retry, n=100):
    agent = osf_make_agent(retry=retry, drop_replies=0.3, seed=11)
    runs = [agent.start(osf_world.sessions[0].graph_session_id, poll=False) for _ in range(n)]
    osf_world.clock.advance(60)
    assert all(r.command_id for r in runs)
    calls = sum(r.start_calls for r in runs)
    queued = len(osf_world.server.state.runs)
    return calls, queued


@pytest.mark.osf(seed=5)
def test_same_key_queues_each_run_once(osf_world, osf_make_agent):
    calls, queued = queue_many(osf_world, osf_make_agent, "same-key")
    assert calls > 100  # replies were dropped, so the agent retried
    assert queued == 100  # but nothing ran twice


@pytest.mark.osf(seed=5)
def test_new_key_queues_a_duplicate_per_retry(osf_world, osf_make_agent):
    calls, queued = queue_many(osf_world, osf_make_agent, "new-key")
    assert queued == calls > 100
