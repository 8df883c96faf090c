"""Example (d): a run survives the desktop going offline.

The queue lives on the server: while the desktop sleeps nothing runs and the run
stays ``queued``; when it wakes, the next pass picks it up.
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
