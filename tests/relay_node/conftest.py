"""The ``node`` and ``node_world`` fixtures of the Node relay tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_osfoundry.client import HttpxTransport, McpClient
from pytest_osfoundry.server import LoopbackServer
from tests.relay_node._harness import Driver, RecordingServer, session
from tests.relay_node._world import NO_NODE, NODES, NodeWorld


@pytest.fixture
def node() -> str | None:
    """The newest Node >= 20 found (``None``: none; ``node_world`` then skips the test).

    A test parametrizes ``node`` with ``_world.NODE_PATHS`` to run on every Node found.
    """
    return NODES[0][1] if NODES else None


@pytest.fixture
def node_world(node: str | None, tmp_path: Path) -> Iterator[NodeWorld]:
    """A :class:`NodeWorld` on loopback; every relay it started is stopped afterwards."""
    if node is None:
        pytest.skip(NO_NODE)
    server = RecordingServer()
    made = server.server.provision()
    disabled = server.server.state.add_project(made.account_id).project_id
    driver = Driver(
        projects=[
            {
                "project_id": made.project_id,
                "enabled": True,
                "sessions": [session(0), session(1), session(2, ticked=False)],
            },
            {"project_id": disabled, "enabled": False, "sessions": [session(3)]},
        ]
    )
    state = tmp_path / "state"
    state.mkdir()
    with (
        LoopbackServer(server) as loop,
        LoopbackServer(driver) as driver_loop,
        HttpxTransport() as transport,
    ):
        world = NodeWorld(
            server=server,
            driver=driver,
            relay_url=loop.origin,
            driver_url=driver_loop.origin,
            desktop_token=made.desktop_token,
            project_id=made.project_id,
            disabled_project_id=disabled,
            agent=McpClient(transport, loop.origin + server.mcp_path, made.agent_token),
            agent_token=made.agent_token,
            state_dir=state,
            node=node,
        )
        try:
            yield world
        finally:
            for relay in world.relays:
                relay.stop()
                log = relay.stderr()
                assert made.desktop_token not in log, "the desktop token leaked into the log"
                assert "Traceback" not in log and "at file://" not in log, log
