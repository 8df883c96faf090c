"""``serve``'s admin door sets the world's faults (issue 37 item 3): ``POST /_osf/faults``
with the ``osf`` marker's faults, the marker's checks, only the admin token; the fault
flags set them at start. In-process: the handler ``serve`` serves, built by its own
``_admin_door`` from parsed flags, called without a socket."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_osfoundry._cli import _admin_door, build_parser
from pytest_osfoundry.client._mcp_client import McpClient
from pytest_osfoundry.client._transport import DirectTransport
from pytest_osfoundry.clock import RealClock, VirtualClock
from pytest_osfoundry.http import DropConnection, Request
from pytest_osfoundry.server import ReferenceServer
from pytest_osfoundry.server._clock_admin import ClockAdmin

ADMIN = "fixed-admin-token-0001"


class Served:
    """What ``serve <flags>`` would serve, in-process."""

    def __init__(self, *flags: str) -> None:
        args = build_parser().parse_args(["serve", "--admin-token", ADMIN, *flags])
        self.clock: Any = VirtualClock() if args.virtual_clock else RealClock()
        self.server = ReferenceServer(self.clock)
        self.info = self.server.provision()
        handler, self.faults, self.virtual = _admin_door(self.server, self.clock, self.info, args)
        assert isinstance(handler, ClockAdmin)
        self.handler = handler

    def admin(self, method: str, body: Any = None, token: str | None = ADMIN,
              path: str = "/_osf/faults") -> tuple[int, dict[str, Any]]:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        raw = body if isinstance(body, bytes) else json.dumps(body).encode() if body else b""
        reply = self.handler(Request(method, path, headers, raw, ""))
        return reply.status, json.loads(reply.body)

    def agent(self) -> McpClient:
        client = McpClient(DirectTransport(self.handler), "http://127.0.0.1/mcp",
                           self.info.agent_token)
        client.connect()
        return client

    def queue(self, client: McpClient, key: str = "admin-faults-key-1") -> str:
        gsid = self.virtual["sessions"][0]["graph_session_id"]
        return str(client.run_graph_session(gsid, key)["command_id"])


@pytest.mark.parametrize(
    ("token", "status"), [(None, 401), ("agent", 403), ("desktop", 403), (ADMIN, 200)]
)
def test_only_the_admin_token_opens_the_faults(token: str | None, status: int) -> None:
    served = Served()
    tokens = {"agent": served.info.agent_token, "desktop": served.info.desktop_token}
    code, body = served.admin("POST", {"drop_replies": 0.5}, token=tokens.get(token or "", token))
    assert code == status, body
    expected = {"drop_replies": 0.5} if status == 200 else {}
    assert served.admin("GET")[1]["faults"] == expected  # a refused POST set nothing


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({"drop_replies": 1.5}, "drop_replies"),
        ({"latency": -1}, "latency"),
        ({"server_errors": ["/mcp", 200]}, "server_errors status"),
        ({"server_errors": "/mcp"}, "server_errors must be"),
        ({"offline": [10]}, "offline must be"),
        ({"offline": [10, 60, "napping"]}, "offline's third item"),
        ({"desktop_dies": "soon"}, "desktop_dies"),
        ({"lose_completions": -2}, "lose_completions"),
        ({"seed": "abc"}, "seed"),
        ({"dorp_replies": 0.3}, "dorp_replies: not a fault"),
        ({"interval": 5}, "interval: not a fault"),
        (b"[1, 2]", "body: must be a JSON object"),
        (b"{not json", "body:"),
    ],
)
def test_a_bad_body_is_400_naming_the_field_and_changes_nothing(body: Any, names: str) -> None:
    served = Served("--virtual-clock", "--relay", "--drop-replies", "0.25")
    code, answer = served.admin("POST", body)
    assert code == 400
    assert names in answer["error"]
    assert served.admin("GET")[1]["faults"] == {"drop_replies": 0.25}


def test_dropped_replies_reach_the_server_and_are_counted() -> None:
    served = Served("--virtual-clock", "--relay")
    client = served.agent()
    assert served.admin("POST", {"drop_replies": 1.0, "seed": 4})[0] == 200
    with pytest.raises(DropConnection):
        served.queue(client)
    assert len(served.server.state.runs) == 1  # it reached the server
    assert served.admin("GET")[1]["counts"] == {"dropped": 1}
    served.admin("POST", {})  # none any more: the same key answers the same run
    served.queue(client)
    assert len(served.server.state.runs) == 1


def test_server_errors_and_latency_act_on_the_virtual_clock() -> None:
    served = Served("--virtual-clock")
    served.admin("POST", {"server_errors": ["/.well-known", 503], "latency": 7})
    meta = served.handler(Request("GET", "/.well-known/oauth-protected-resource", {}, b"", ""))
    assert meta.status == 503
    before = served.clock.now()
    served.agent()  # the MCP calls wait 7 virtual seconds each
    assert served.clock.now() - before >= 7


def test_latency_moves_the_virtual_clock_only_while_the_admin_door_does_not() -> None:
    import threading

    served = Served("--virtual-clock")
    served.admin("POST", {"latency": 5})
    assert served.handler.faults is not None
    start = served.clock.now()
    with served.handler.faults.moving:  # as while POST /_osf/clock/advance runs
        agent = threading.Thread(target=served.agent)
        agent.start()
        agent.join(0.2)
        assert agent.is_alive() and served.clock.now() == start  # it waits its turn
    agent.join(10)
    assert not agent.is_alive() and served.clock.now() - start >= 5


def test_desktop_faults_act_on_the_in_process_desktop() -> None:
    served = Served("--virtual-clock", "--relay", "--graph-duration", "30")
    client = served.agent()
    code, view = served.admin("POST", {"offline": [1, 100], "lose_completions": 1})
    assert code == 200
    (window,) = view["scheduled"]
    assert window["offline"][1] - window["offline"][0] == 100 and window["mode"] == "asleep"
    command = served.queue(client)
    served.clock.advance(90)
    assert client.get_graph_run(command)["status"] == "queued"  # the desktop is asleep
    served.clock.advance(45)  # back at 101, picked up at once: its completion at 131 is lost
    assert client.get_graph_run(command)["status"] == "running"
    assert served.admin("GET")[1]["counts"] == {"lost": 1}
    served.clock.advance(60)  # the outbox sends it again
    assert client.get_graph_run(command)["status"] == "completed"


def test_the_desktop_dies_when_told() -> None:
    served = Served("--virtual-clock", "--relay", "--graph-duration", "60", "--desktop-dies", "30")
    command = served.queue(served.agent())
    served.clock.advance(600)
    assert served.server.state.view(command)["status"] == "running"  # for good: D11


@pytest.mark.parametrize("fault", [{"offline": [1, 60]}, {"lose_completions": 1},
                                   {"desktop_dies": 5}])
def test_real_time_takes_agent_side_faults_only(fault: dict[str, Any]) -> None:
    served = Served("--relay")
    code, answer = served.admin("POST", fault)
    assert code == 400 and "virtual clock only" in answer["error"]
    assert served.admin("POST", {"drop_replies": 0.3, "server_errors": ["/x", 502]})[0] == 200
    assert served.admin("POST", {"latency": 3600})[0] == 400  # a worker would wait it out


def test_on_real_time_the_clock_paths_say_so() -> None:
    code, answer = Served().admin("GET", path="/_osf/clock")
    assert code == 404 and "real time" in answer["error"]


def test_without_relay_a_desktop_fault_says_what_is_missing() -> None:
    code, answer = Served("--virtual-clock").admin("POST", {"desktop_dies": 5})
    assert code == 400 and "add --relay" in answer["error"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--drop-replies", "2"], "drop_replies"),
        (["--offline", "5"], "offline must be"),
        (["--server-errors", "/mcp:99"], "server_errors status"),
        (["--offline", "5:60"], "virtual clock only"),
    ],
)
def test_a_bad_fault_flag_is_refused_by_name(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_osfoundry._cli import main

    assert main(["serve", *flags]) == 2
    err = capsys.readouterr().err
    assert "fault flags" in err and message in err


def test_a_plain_serve_takes_fault_flags_without_opening_an_admin_door() -> None:
    from pytest_osfoundry.faults import DropReplies, FaultyHandler

    args = build_parser().parse_args(["serve", "--drop-replies", "0.5", "--fault-seed", "9"])
    clock = RealClock()
    server = ReferenceServer(clock)
    handler, _, _ = _admin_door(server, clock, server.provision(), args)
    assert isinstance(handler, FaultyHandler)  # no ClockAdmin: nothing answers /_osf/
    (drops,) = handler.faults
    assert isinstance(drops, DropReplies) and (drops.fraction, drops.seed) == (0.5, 9)


def _held(served: Served, path: str, method: str = "POST") -> float:
    return float(served.faults.delay(Request(method, path, {}, b"", "")))


def test_on_real_time_latency_is_the_doors_wait_not_a_workers() -> None:
    """Issue 42 item 8: the latency fault (and ``--latency``) is what the loopback door
    waits out before a worker takes the request; no fault in the handler sleeps."""
    from pytest_osfoundry.faults import Latency

    served = Served("--latency", "5")
    relay = "/external-assistants/graph-relays/sync"
    assert (_held(served, "/mcp"), _held(served, relay), _held(served, "/_osf/faults")) == (
        5, 5, 0)
    assert served.admin("POST", {"latency": 60})[0] == 200
    assert not any(isinstance(f, Latency) for f in served.faults.door.faults)
    assert (_held(served, "/mcp"), _held(served, relay), _held(served, "/_osf/faults")) == (
        65, 5, 0)
    served.admin("POST", {"latency": 60, "server_errors": ["/mcp", 503]})
    assert _held(served, "/mcp") == 0  # answered at once, as errors come first at the door


def test_on_the_virtual_clock_only_the_flag_is_waited_out_at_the_door() -> None:
    served = Served("--virtual-clock", "--latency", "2")
    served.admin("POST", {"latency": 7})
    assert _held(served, "/mcp") == 2  # the fault moves the virtual clock instead
