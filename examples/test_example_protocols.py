"""Example (f): one agent test, run against every MCP revision osFoundry may speak.

``protocols`` is what the fake server serves, ``protocol`` what the agent's client
speaks: ``"auto"`` finds the era (``server/discover`` first, ``initialize`` when the
server is legacy-only), a revision pins it. The agent's code does not change.
"""

import pytest

from pytest_osfoundry.engine import Fixed, Graph


def era(protocol, served=None, id=None):
    marker = pytest.mark.osf(seed=3, protocol=protocol, protocols=served)
    return pytest.param(protocol, served, marks=marker, id=id or protocol)


@pytest.mark.osf(graph=Graph(duration=Fixed(30)))
@pytest.mark.parametrize(
    ("protocol", "served"),
    [
        era("2026-07-28"),
        era("2025-11-25"),
        era("2025-06-18"),
        era("auto", ("2025-11-25",), id="auto-vs-legacy-only-server"),
        era("auto", ("2026-07-28",), id="auto-vs-modern-only-server"),
    ],
)
def test_the_agent_works_on_every_revision(osf_world, osf_agent, protocol, served):
    run = osf_agent.run(osf_world.sessions[0].graph_session_id)

    assert run.status == "completed"
    expected = protocol if protocol != "auto" else served[0]
    assert osf_agent.client.negotiated_version == expected
