"""D15: a command id that is not a UUID is refused before anything is bound or run."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_osfoundry.client._relay_client import RelayClient
from pytest_osfoundry.relay._desktop import FakeRelay
from tests.relay.osf_relay_kit import queue, view, world

BOGUS_IDS: list[Any] = [
    "not-a-uuid",
    "",
    "../../sync",
    "12345678123456781234567812345678",  # 32 hex, no hyphens
    "{12345678-1234-5678-1234-567812345678}",
    "12345678-1234-5678-1234-567812345678\n",
    "12345678-1234-5678-1234-56781234567",  # one digit short
    "g2345678-1234-5678-1234-567812345678",
    None,
    42,
    ["12345678-1234-5678-1234-567812345678"],
]


class InjectingClient(RelayClient):
    """A relay client whose sync answers carry extra, invented commands; records calls."""

    def __init__(self, real: RelayClient, extra: list[dict[str, Any]]) -> None:
        super().__init__(real.transport, real.base_url, real._token)
        self.extra = extra
        self.calls: list[tuple[str, Any]] = []

    def sync(self, project_id: str, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        commands = super().sync(project_id, sessions)
        return [*self.extra, *commands]

    def start(self, command_id: str, execution_id: str) -> str:
        self.calls.append(("start", command_id))
        return super().start(command_id, execution_id)

    def control(self, command_id: str) -> dict[str, Any]:
        self.calls.append(("control", command_id))
        return super().control(command_id)

    def complete(self, command_id: str, body: Any) -> dict[str, Any]:
        self.calls.append(("complete", command_id))
        return super().complete(command_id, body)


def bogus_command(w: Any, command_id: Any) -> dict[str, Any]:
    s = w.sessions[0]
    return {
        "command_id": command_id,
        "graph_session_id": s.graph_session_id,
        "slug": s.slug,
        "arguments": {},
        "queued_at": "2026-11-08T00:00:00.000Z",
    }


def relay_with(w: Any, extra: list[dict[str, Any]]) -> tuple[FakeRelay, InjectingClient]:
    client = InjectingClient(w.relay_client(), extra)
    relay = FakeRelay(w.clock, client, w.engine, seed=1)
    relay.share(w.project_id, w.sessions)
    return relay, client


@pytest.mark.parametrize("bad", BOGUS_IDS, ids=repr)
def test_a_non_uuid_command_is_refused(bad: Any) -> None:
    w = world(start_relay=False)
    relay, client = relay_with(w, [bogus_command(w, bad)])
    relay.start()
    w.clock.advance(45)
    assert client.calls == [], "nothing may be started, polled or completed for it"
    assert w.engine.runs == []
    assert relay.executed == []
    refused = [e for e in relay.events if e.kind == "refused"]
    assert len(refused) == 3  # one per pass: at 0, 20 and 40
    assert repr(bad) in refused[0].detail
    assert len(relay.outbox.items()) == 0  # type: ignore[union-attr]


def test_a_command_without_an_id_is_refused() -> None:
    w = world(start_relay=False)
    command = bogus_command(w, None)
    del command["command_id"]
    relay, client = relay_with(w, [command])
    relay.start()
    w.clock.advance(0)
    assert client.calls == []
    assert w.engine.runs == []
    assert sorted(e.kind for e in relay.events) == ["refused", "synced"]


def test_real_commands_in_the_same_sync_still_run() -> None:
    w = world(start_relay=False)
    relay, client = relay_with(w, [bogus_command(w, "nope"), bogus_command(w, "still-nope")])
    relay.start()
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(60)
    assert view(w, cid)["status"] == "completed"
    assert relay.executed == [cid]
    assert {c for _, c in client.calls} == {cid}
    assert [r.channel for r in w.engine.runs] == [f"graph:external:{cid}"]


def test_an_uppercase_uuid_is_a_uuid() -> None:
    # Sanity check of the refusal's boundary: a well-formed UUID in capitals is not refused
    # (the server answers 404 for it, as it knows no such command).
    w = world(start_relay=False)
    upper = "12345678-ABCD-4ABC-8ABC-1234567890AB"
    relay, client = relay_with(w, [bogus_command(w, upper)])
    relay.start()
    w.clock.advance(0)
    assert ("start", upper) in client.calls
    assert not [e for e in relay.events if e.kind == "refused"]
    assert w.engine.runs == []
