"""The same behaviour through the other doors: real HTTP on loopback, and respx-mounted httpx.

Plain ``httpx.Client`` with keep-alive; a representative subset of the rules, plus
concurrent ``run_graph_session`` calls that must neither lose nor duplicate a run.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.server import LoopbackServer, Provisioned, ReferenceServer, mount
from tests.server.osf_server_kit import GS1, INVENTED, RUN_NOT_FOUND, session

RELAY = "/external-assistants/graph-relays"
ACCEPT = {"accept": "application/json, text/event-stream"}


class Door:
    """An httpx client pointed at one server, with JSON-RPC and relay helpers."""

    def __init__(self, client: httpx.Client, base: str, info: Provisioned) -> None:
        self.client = client
        self.base = base
        self.info = info
        self._id = 0

    def rpc(self, method: str, params: Any = None, token: str | None = None) -> httpx.Response:
        self._id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            message["params"] = params
        headers = dict(ACCEPT)
        if token:
            headers["authorization"] = f"Bearer {token}"
        return self.client.post(f"{self.base}/mcp", json=message, headers=headers)

    def tool(self, name: str, args: dict[str, Any], token: str | None = None) -> dict[str, Any]:
        reply = self.rpc(
            "tools/call", {"name": name, "arguments": args}, token or self.info.agent_token
        )
        assert reply.status_code == 200, reply.text
        result: dict[str, Any] = reply.json()["result"]
        return result

    def relay(self, method: str, path: str, body: Any = None) -> httpx.Response:
        headers = {"authorization": f"Bearer {self.info.desktop_token}"}
        return self.client.request(method, f"{self.base}{RELAY}{path}", json=body, headers=headers)


@pytest.fixture
def served() -> Iterator[tuple[ReferenceServer, LoopbackServer]]:
    server = ReferenceServer(VirtualClock())
    with LoopbackServer(server) as loop:
        yield server, loop


@pytest.fixture(params=["loopback", "respx"])
def door(request: pytest.FixtureRequest) -> Iterator[Door]:
    server = ReferenceServer(VirtualClock())
    info = server.provision()
    server.state.share(info.project_id, [session(GS1)])
    if request.param == "loopback":
        with LoopbackServer(server) as loop, httpx.Client(timeout=10) as client:
            yield Door(client, loop.origin, info)
    else:
        with mount(server, "https://osf.test"), httpx.Client() as client:
            yield Door(client, "https://osf.test", info)


def test_tools_list_without_auth(door: Door) -> None:
    reply = door.rpc("tools/list")
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    names = [t["name"] for t in reply.json()["result"]["tools"]]
    assert names == [
        "run_graph_session",
        "list_graph_sessions",
        "get_graph_run",
        "cancel_graph_run",
    ]


def test_full_lifecycle(door: Door) -> None:
    init = door.rpc(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    )
    assert init.json()["result"]["protocolVersion"] == "2025-11-25"
    assert init.headers["mcp-session-id"]
    ticket = door.tool(
        "run_graph_session",
        {"graph_session_id": GS1, "idempotency_key": "door-key-1", "arguments": {"q": "日本語"}},
    )["structuredContent"]
    cid = ticket["command_id"]
    assert ticket["status"] == "queued" and ticket["poll_after_seconds"] == 20
    sync = door.relay(
        "POST", "/sync", {"project_id": door.info.project_id, "sessions": [session(GS1)]}
    )
    assert sync.status_code == 200
    assert [c["command_id"] for c in sync.json()["commands"]] == [cid]
    assert sync.json()["commands"][0]["arguments"] == {"q": "日本語"}
    assert door.relay("POST", f"/commands/{cid}/start", {"execution_id": "x1"}).json() == {
        "status": "running"
    }
    assert door.relay("GET", f"/commands/{cid}/control").json() == {
        "status": "running",
        "cancel_requested": False,
    }
    done = {
        "execution_id": "x1",
        "status": "completed",
        "result": {"answer": 42},
        "total_tokens": 99,
        "reported_cost": 0.01,
    }
    reply = door.relay("POST", f"/commands/{cid}/complete", done)
    assert (reply.status_code, reply.json()) == (200, {"status": "completed"})
    again = door.relay("POST", f"/commands/{cid}/complete", done)
    assert (again.status_code, again.json()) == (200, {"status": "completed"})
    view = door.tool("get_graph_run", {"command_id": cid})["structuredContent"]
    assert view["status"] == "completed" and view["result"] == {"answer": 42}
    assert view["total_tokens"] == 99 and view["execution_id"] == "x1"
    other = door.tool("get_graph_run", {"command_id": cid}, door.info.other_agent_token)
    assert other == {"content": [{"type": "text", "text": RUN_NOT_FOUND}], "isError": True}


def test_challenges(door: Door) -> None:
    host = httpx.URL(door.base).netloc.decode()
    scheme = httpx.URL(door.base).scheme
    meta = f"{scheme}://{host}/.well-known/oauth-protected-resource"
    reply = door.rpc("tools/call", {"name": "get_graph_run", "arguments": {"command_id": INVENTED}})
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"] == (
        f'Bearer scope="osfoundry:read", resource_metadata="{meta}"'
    )
    reply = door.rpc(
        "tools/call",
        {"name": "cancel_graph_run", "arguments": {"command_id": INVENTED}},
        door.info.read_token,
    )
    assert reply.status_code == 403
    assert reply.headers["www-authenticate"] == (
        f'Bearer error="insufficient_scope", scope="osfoundry:run", resource_metadata="{meta}"'
    )
    assert door.client.get(meta).json()["resource"] == f"{scheme}://{host}/mcp"


def test_notification_is_202_and_get_is_405(door: Door) -> None:
    reply = door.client.post(
        f"{door.base}/mcp",
        headers=ACCEPT,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
    )
    assert reply.status_code == 202 and reply.content == b""
    reply = door.client.get(f"{door.base}/mcp", headers={"accept": "text/event-stream"})
    assert reply.status_code == 405 and reply.headers["allow"] == "POST, DELETE"
    # the connection stays usable after both
    assert door.rpc("ping").json()["result"] == {}


def test_paths_reach_the_app_percent_encoded(door: Door) -> None:
    reply = door.relay("GET", "/commands/a%2Fb/control")
    assert (reply.status_code, reply.json()) == (404, {"error": "command a/b not found"})
    reply = door.relay("GET", "/commands/%2541/control")
    assert reply.json() == {"error": "command %41 not found"}  # decoded once, not twice
    reply = door.client.get(f"{door.base}/.well-known/oauth-protected-resource?x=%20")
    assert reply.status_code == 200


def test_oversized_body_is_413(door: Door) -> None:
    reply = door.client.post(
        f"{door.base}/mcp",
        content=b" " * (1024 * 1024 + 1),
        headers={"content-type": "application/json"},
    )
    assert reply.status_code == 413
    assert door.rpc("ping").status_code == 200


def test_loopback_keeps_the_connection_alive(
    served: tuple[ReferenceServer, LoopbackServer],
) -> None:
    server, loop = served
    server.provision()
    peers: set[Any] = set()
    with httpx.Client() as client:
        for _ in range(5):
            reply = client.post(
                f"{loop.origin}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
            )
            assert reply.status_code == 200
            stream = reply.extensions["network_stream"]
            peers.add(stream.get_extra_info("socket").getsockname())
    assert len(peers) == 1


def test_loopback_reads_chunked_bodies(served: tuple[ReferenceServer, LoopbackServer]) -> None:
    _, loop = served

    def chunks() -> Iterator[bytes]:
        yield b'{"jsonrpc":"2.0",'
        yield b'"id":5,"method":"ping"}'

    with httpx.Client() as client:
        reply = client.post(f"{loop.origin}/mcp", content=chunks())
        assert reply.request.headers["transfer-encoding"] == "chunked"
        assert reply.json() == {"jsonrpc": "2.0", "id": 5, "result": {}}
        assert (
            client.post(
                f"{loop.origin}/mcp", json={"jsonrpc": "2.0", "id": 6, "method": "ping"}
            ).status_code
            == 200
        )


def test_loopback_raw_http_edge_cases(served: tuple[ReferenceServer, LoopbackServer]) -> None:
    _, loop = served

    def exchange(raw: bytes) -> bytes:
        with socket.create_connection((loop.host, loop.port), timeout=5) as sock:
            sock.sendall(raw)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
            return data

    assert exchange(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n").startswith(
        b"HTTP/1.1 400"
    )
    assert exchange(
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n"
    ).startswith(b"HTTP/1.1 413")
    assert exchange(
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
    ).startswith(b"HTTP/1.1 400")
    # any method token reaches the app (405/404 as on the other doors, never 501)
    assert exchange(b"PROPFIND /mcp HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 405")
    assert exchange(b"PROPFIND /x HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 404")
    assert b"400" in exchange(b"GARBAGE\r\n\r\n")  # http.server's own HTTP/0.9-style refusal


def test_loopback_answers_expect_100_continue_at_once(
    served: tuple[ReferenceServer, LoopbackServer],
) -> None:
    _, loop = served
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    with socket.create_connection((loop.host, loop.port), timeout=2) as sock:
        sock.sendall(head)
        assert sock.recv(1024).startswith(b"HTTP/1.1 100")  # before any body was sent
        sock.sendall(body)
        reply = b""
        while not reply.endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200")
        assert reply.endswith(b'{"jsonrpc":"2.0","id":1,"result":{}}')


def test_loopback_rejects_bad_arguments() -> None:
    with pytest.raises(TypeError):
        LoopbackServer("not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="port"):
        LoopbackServer(ReferenceServer(), port=70000)


def test_respx_mount_is_strict_about_other_hosts() -> None:
    server = ReferenceServer(VirtualClock())
    with mount(server, "https://osf.test"), httpx.Client() as client:
        with pytest.raises(Exception):  # noqa: B017 - respx's own error type
            client.get("https://elsewhere.test/")
        assert client.get("https://osf.test/nowhere").status_code == 404


# ---------------------------------------------------------------------- concurrency
THREADS = 8
CALLS = 200
SHARED_KEYS = 25


def test_concurrent_run_graph_session_loses_and_duplicates_nothing(
    served: tuple[ReferenceServer, LoopbackServer],
) -> None:
    server, loop = served
    info = server.provision()
    server.state.share(info.project_id, [session(GS1)])
    tokens = [info.agent_token, info.other_agent_token]
    tickets: list[list[tuple[int, str, str]]] = [[] for _ in range(THREADS)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS)

    def work(t: int) -> None:
        agent = t % 2
        try:
            with httpx.Client(timeout=30) as client:
                barrier.wait()
                for j in range(CALLS):
                    if j % 2 == 0:  # shared between the threads of one agent
                        n = (j // 2) % SHARED_KEYS
                        key, args = f"shared-key-{n:03d}", {"n": n}
                    else:
                        key, args = f"t{t}-distinct-{j:04d}", {"t": t, "j": j}
                    message = {
                        "jsonrpc": "2.0",
                        "id": j,
                        "method": "tools/call",
                        "params": {
                            "name": "run_graph_session",
                            "arguments": {
                                "graph_session_id": GS1,
                                "idempotency_key": key,
                                "arguments": args,
                            },
                        },
                    }
                    reply = client.post(
                        f"{loop.origin}/mcp",
                        json=message,
                        headers={**ACCEPT, "authorization": f"Bearer {tokens[agent]}"},
                    )
                    assert reply.status_code == 200, reply.text
                    cid = reply.json()["result"]["structuredContent"]["command_id"]
                    tickets[t].append((agent, key, cid))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert not errors, errors[0]
    by_key: dict[tuple[int, str], set[str]] = {}
    for per_thread in tickets:
        assert len(per_thread) == CALLS
        for agent, key, cid in per_thread:
            by_key.setdefault((agent, key), set()).add(cid)
    assert all(len(ids) == 1 for ids in by_key.values())  # one run per (agent, key)
    distinct_per_thread = CALLS // 2
    expected = 2 * SHARED_KEYS + THREADS * distinct_per_thread
    assert len(by_key) == expected
    all_ids = {next(iter(ids)) for ids in by_key.values()}
    assert len(all_ids) == expected  # no two keys share a run
    assert set(server.state.runs) == all_ids  # nothing lost, nothing extra
    commands = server.state.relay_sync(
        server.state.accounts[info.account_id], info.project_id, [session(GS1)]
    )["commands"]
    assert {c["command_id"] for c in commands} == all_ids
    for c in commands:
        run = server.state.runs[c["command_id"]]
        assert json.dumps(c["arguments"], sort_keys=True) == json.dumps(
            run.arguments, sort_keys=True
        )


@pytest.mark.parametrize(
    "origins", [("http://evil.example", "http://localhost"), ("http://localhost", "null")]
)
def test_two_origin_fields_are_refused_through_every_door(
    door: Door, origins: tuple[str, str]
) -> None:
    """A repeated field reaches the app as its values joined (RFC 9110 §5.3) through the
    in-process doors too, as through the loopback server: two ``Origin`` fields are no
    valid origin, whichever comes last (issue 39 item 3)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = [*ACCEPT.items(), ("authorization", f"Bearer {door.info.agent_token}")]
    headers += [("origin", origin) for origin in origins]
    reply = door.client.post(f"{door.base}/mcp", json=body, headers=headers)
    assert reply.status_code == 403, reply.text
    one = [*headers[:-2], ("origin", "http://localhost")]
    assert door.client.post(f"{door.base}/mcp", json=body, headers=one).status_code == 200
