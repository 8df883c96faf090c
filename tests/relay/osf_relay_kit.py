"""Kit for the fake-relay tests (D11-D18): a world on a virtual clock, and recorders.

Everything here drives the kit's real parts (reference server, relay client, fake
relay, fake engine) in-process. :class:`Recorder` is a transport wrapper that notes
every relay request *as it is attempted* (before any fault), with the virtual time
and the JSON body, so a test can check the order of a pass's requests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_osfoundry._ids import parse_rfc3339
from pytest_osfoundry.client._mcp_client import McpClient
from pytest_osfoundry.client._relay_client import RelayClient
from pytest_osfoundry.client._transport import Transport
from pytest_osfoundry.clock import DEFAULT_START
from pytest_osfoundry.engine import Graph
from pytest_osfoundry.faults import Fault, FaultyTransport
from pytest_osfoundry.http import Response
from pytest_osfoundry.relay._desktop import FakeRelay
from pytest_osfoundry.relay._outbox import Outbox
from pytest_osfoundry.world import OsfWorld, WorldConfig

T0 = DEFAULT_START
RELAY = "/external-assistants/graph-relays"


def world(graph: Graph | None = None, **options: Any) -> OsfWorld:
    """A world with a fixed 30 s Graph (unless given) and ``options`` as its config."""
    return OsfWorld(WorldConfig(graph=graph or Graph(duration=30, result="ok"), **options))


@dataclass(frozen=True)
class Sent:
    """One relay request as it was attempted."""

    at: float
    method: str
    path: str
    body: Any

    @property
    def action(self) -> str:
        """``sync``, ``start``, ``control`` or ``complete``."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def command_id(self) -> str | None:
        """The command id in the path (``None`` for a sync)."""
        parts = self.path.split("/")
        return parts[-2] if "/commands/" in self.path else None


class Recorder:
    """A transport that records each request (time, method, path, JSON body), then forwards."""

    def __init__(self, inner: Transport, clock: Any) -> None:
        self.inner = inner
        self.clock = clock
        self.sent: list[Sent] = []

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        path = "/" + url.split("://", 1)[-1].split("/", 1)[-1]
        data = json.loads(body) if body else None
        self.sent.append(Sent(self.clock.now(), method, path, data))
        return self.inner.request(method, url, headers, body)

    def actions(self, since: float = 0.0) -> list[str]:
        """The actions attempted at or after ``since`` (absolute time), in order."""
        return [s.action for s in self.sent if s.at >= since]


def recorded_relay(
    w: OsfWorld,
    *faults: Fault,
    outbox: Outbox | bool | None = None,
    share: bool = True,
    **options: Any,
) -> tuple[FakeRelay, Recorder]:
    """A relay (not started) whose requests are recorded before ``faults`` apply."""
    inner: Transport = FaultyTransport(w.transport, *faults) if faults else w.transport
    rec = Recorder(inner, w.clock)
    client = RelayClient(rec, w.base_url, w.creds.desktop_token)
    box: Any = None if outbox is None or outbox is True else outbox
    relay = FakeRelay(w.clock, client, w.engine, outbox=box, seed=w.config.seed, **options)
    if share:
        relay.share(w.project_id, w.sessions)
    return relay, rec


def queue(
    w: OsfWorld,
    index: int = 0,
    key: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    client: McpClient | None = None,
) -> str:
    """Queue a run of ``w.sessions[index]`` as the first agent; return its command id."""
    agent = client or w.agent_client()
    gsid = w.sessions[index].graph_session_id
    ticket = agent.run_graph_session(gsid, key or f"key-{gsid}-{w.clock.now()}", arguments)
    assert ticket["status"] == "queued", ticket
    return str(ticket["command_id"])


def view(w: OsfWorld, command_id: str) -> dict[str, Any]:
    """``get_graph_run`` as the agent that started it sees it (over MCP)."""
    return w.agent_client().get_graph_run(command_id)


def stamp(text: Any) -> float:
    """An RFC 3339 timestamp from a run view as epoch seconds (fails the test if it is none)."""
    parsed = parse_rfc3339(text)
    assert parsed is not None, f"not an RFC 3339 timestamp: {text!r}"
    return parsed.timestamp()


def engine_runs_for(w: OsfWorld, command_id: str) -> list[Any]:
    """The engine runs started on ``graph:external:<command_id>``."""
    return [r for r in w.engine.runs if r.channel == f"graph:external:{command_id}"]
