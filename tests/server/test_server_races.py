"""The reference server under simultaneous identical requests, over real sockets.

Eight threads, each with its own connection, are released together by a barrier.
The server's state lock must make one of them do the work and the others replay it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from pytest_osfoundry.server import LoopbackServer, Provisioned, ReferenceServer

CALLERS = 8
RELAY = "/external-assistants/graph-relays"
GS = "gs_" + "7" * 32


@pytest.fixture
def served() -> Iterator[tuple[LoopbackServer, ReferenceServer, Provisioned]]:
    server = ReferenceServer()
    made = server.provision()
    loop = LoopbackServer(server)
    try:
        yield loop, server, made
    finally:
        loop.close()


def _together(call: Callable[[httpx.Client], httpx.Response]) -> list[httpx.Response]:
    """``call`` made by CALLERS threads at once, each on a connection of its own."""
    barrier = threading.Barrier(CALLERS)
    answers: list[httpx.Response | None] = [None] * CALLERS

    def run(index: int) -> None:
        with httpx.Client(timeout=30) as client:
            barrier.wait(timeout=30)
            answers[index] = call(client)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(CALLERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(a is not None for a in answers)
    return [a for a in answers if a is not None]


def _tool(loop: LoopbackServer, token: str, name: str, args: dict[str, Any]) -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": args},
    }
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    reply = httpx.post(f"{loop.origin}/mcp", json=body, headers=headers)
    return reply.json()["result"]["structuredContent"]


def _share(loop: LoopbackServer, made: Provisioned) -> None:
    session = {
        "graph_session_id": GS,
        "name": "race",
        "description": "d",
        "slug": "race",
        "version": 1,
        "status": "active",
    }
    reply = httpx.post(
        f"{loop.origin}{RELAY}/sync",
        json={"project_id": made.project_id, "sessions": [session]},
        headers={"Authorization": f"Bearer {made.desktop_token}"},
    )
    assert reply.status_code == 200


def test_simultaneous_identical_completions_apply_once(
    served: tuple[LoopbackServer, ReferenceServer, Provisioned],
) -> None:
    loop, server, made = served
    _share(loop, made)
    ticket = _tool(
        loop,
        made.agent_token,
        "run_graph_session",
        {"graph_session_id": GS, "idempotency_key": "race-completion-1"},
    )
    cid = ticket["command_id"]
    url = f"{loop.origin}{RELAY}/commands/{cid}"
    auth = {"Authorization": f"Bearer {made.desktop_token}"}
    assert httpx.post(f"{url}/start", json={"execution_id": "e1"}, headers=auth).json() == {
        "status": "running"
    }
    completion = {"execution_id": "e1", "status": "completed", "result": {"answer": 42}}
    answers = _together(lambda c: c.post(f"{url}/complete", json=completion, headers=auth))
    assert [a.status_code for a in answers] == [200] * CALLERS
    assert {a.text for a in answers} == {'{"status":"completed"}'}
    view = server.state.view(cid)
    assert view["status"] == "completed" and view["result"] == {"answer": 42}
    finished = view["finished_at"]
    other = {"execution_id": "e1", "status": "failed", "error": "late"}
    assert httpx.post(f"{url}/complete", json=other, headers=auth).status_code == 409
    assert server.state.view(cid)["finished_at"] == finished


def test_simultaneous_calls_with_one_key_queue_one_run(
    served: tuple[LoopbackServer, ReferenceServer, Provisioned],
) -> None:
    loop, server, made = served
    _share(loop, made)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "run_graph_session",
            "arguments": {"graph_session_id": GS, "idempotency_key": "race-key-0001"},
        },
    }
    headers = {
        "Authorization": f"Bearer {made.agent_token}",
        "Accept": "application/json, text/event-stream",
    }
    answers = _together(lambda c: c.post(f"{loop.origin}/mcp", json=body, headers=headers))
    ids = {a.json()["result"]["structuredContent"]["command_id"] for a in answers}
    assert len(ids) == 1
    assert server.state.counts()["queued"] == 1
