"""Example (a): test a polling agent that calls ``time.sleep``, on virtual time.

``patch_sleep=True`` makes ``time.sleep`` advance the kit's virtual clock, so the
desktop relay's 20 s passes and a one-minute Graph happen in milliseconds, and
``datetime.now()`` follows the virtual clock (freezegun).
"""

from datetime import datetime, timezone

import pytest
from polling_agent import GraphRunner


@pytest.mark.osf(seed=7, patch_sleep=True)
def test_agent_polls_a_minute_long_graph_sensibly(osf_world, osf_clock, osf_respx):
    agent = GraphRunner(osf_world.mcp_url, osf_world.creds.agent_token)
    agent.connect()
    started = osf_clock.now()

    run = agent.run_and_wait(osf_world.sessions[0].graph_session_id, "example-key-0001")

    assert run["status"] == "completed"
    assert osf_clock.now() - started > 20  # virtual seconds passed, none really slept
    assert agent.polls <= 30  # calls per run stay bounded
    finished = datetime.fromisoformat(run["finished_at"].replace("Z", "+00:00"))
    late = (datetime.now(timezone.utc) - finished).total_seconds()
    assert 0 <= late <= 10  # seen at most one poll interval after it finished
