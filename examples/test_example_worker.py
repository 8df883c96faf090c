"""Example (b): test your own worker against the kit's fake server.

``start_relay=False`` keeps the kit's own fake desktop out of the way; your worker
reaches the fake server through respx at ``osf_world.base_url``.
"""

import pytest
from simple_worker import SimpleWorker


@pytest.mark.osf(start_relay=False)
def test_my_worker_runs_what_an_agent_queued(osf_world, osf_respx):
    session = osf_world.sessions[0].to_dict()
    worker = SimpleWorker(
        osf_world.base_url,
        osf_world.creds.desktop_token,
        osf_world.project_id,
        [session],
        run=lambda command: {"echo": command["arguments"]},
    )
    worker.poll_once()  # shares the session
    agent = osf_world.agent_client()
    ticket = agent.run_graph_session(
        session["graph_session_id"], "worker-key-0001", {"topic": "weekly"}
    )

    assert worker.poll_once() == 1

    run = agent.get_graph_run(ticket["command_id"])
    assert run["status"] == "completed"
    assert run["result"] == {"echo": {"topic": "weekly"}}
    assert worker.poll_once() == 0  # nothing is delivered twice


@pytest.mark.osf(start_relay=False)
def test_my_worker_skips_a_run_the_agent_cancelled(osf_world, osf_respx):
    session = osf_world.sessions[0].to_dict()
    ran: list[object] = []
    worker = SimpleWorker(
        osf_world.base_url,
        osf_world.creds.desktop_token,
        osf_world.project_id,
        [session],
        run=ran.append,
    )
    worker.poll_once()
    agent = osf_world.agent_client()
    ticket = agent.run_graph_session(session["graph_session_id"], "worker-key-0002")
    agent.cancel_graph_run(ticket["command_id"])

    assert worker.poll_once() == 0
    assert ran == []
    assert agent.get_graph_run(ticket["command_id"])["status"] == "cancelled"
