"""Example (d): a run survives the desktop going offline.

The queue lives on the server: while the desktop is away nothing reaches the server
(no sync, no start, no control poll, no completion) and a queued run stays ``queued``;
when it is back, the next pass picks it up. ``offline=(start, duration)`` puts the
machine to sleep (a Graph it is running pauses); ``offline=(start, duration,
"network")`` keeps it awake with its network gone (the Graph finishes, and its result
waits in the desktop's outbox until it is back).
"""

import pytest

from pytest_osfoundry.engine import Fixed, Graph


@pytest.mark.osf(seed=2, offline=(1, 600), graph=Graph(duration=Fixed(30), result="done"))
def test_a_queued_run_waits_for_the_desktop(osf_world, osf_agent, osf_engine):
    osf_world.clock.advance(1)  # the desktop goes to sleep
    record = osf_agent.start(osf_world.sessions[0].graph_session_id)

    osf_world.clock.advance(590)
    assert osf_agent.client.get_graph_run(record.command_id)["status"] == "queued"
    assert osf_engine.runs == []  # nothing executed while offline

    osf_world.clock.run_until(record.done)
    assert record.status == "completed"
    assert record.view["result"] == "done"


@pytest.mark.osf(
    seed=2, offline=(30, 300, "network"), graph=Graph(duration=Fixed(30), result="done")
)
def test_a_result_finished_offline_is_delivered_when_the_network_is_back(osf_world, osf_agent):
    record = osf_agent.start(osf_world.sessions[0].graph_session_id)  # the pass at 20 starts it
    osf_world.clock.advance(100)  # the Graph finished at 50, with the network gone
    assert osf_agent.client.get_graph_run(record.command_id)["status"] == "running"
    assert [cid for cid, _ in osf_world.relay.outbox.items()] == [record.command_id]

    osf_world.clock.run_until(record.done)  # back at 330: the first pass delivers it
    assert record.status == "completed"
    assert osf_world.relay.delivered_at(record.command_id) == osf_world.config.start + 330
