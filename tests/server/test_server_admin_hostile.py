"""``serve``'s admin door as an attacker tries it (issue 42 items 7-10, 15), over real
loopback HTTP against a ``serve`` process: no fault wedges the server or locks the
operator out, every number is bounded (a refused one is a 400 naming the field and
its range, and changes nothing), and the admin token is masked like an agent's."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from pytest_osfoundry._serve_faults import MAX_SEED
from pytest_osfoundry.server._clock_admin import MAX_ADVANCE
from tests.server.test_server_cli import first_line, spawn, stop

ADMIN = "hostile-admin-token-0001"
AUTH = {"authorization": f"Bearer {ADMIN}"}
ACCEPT = {"accept": "application/json, text/event-stream"}
RELAY_CONTROL = "/external-assistants/graph-relays/commands/cmd_x/control"


def _serve(*flags: str) -> Generator[dict[str, Any], None, None]:
    proc = spawn("--admin-token", ADMIN, *flags)
    try:
        line = json.loads(first_line(proc))
        line["proc"] = proc
        yield line
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=5)


@pytest.fixture(scope="module")
def virtual() -> Iterator[dict[str, Any]]:
    yield from _serve("--virtual-clock", "--relay")


def _faults(served: dict[str, Any], body: bytes | None = None) -> httpx.Response:
    url = served["faults_url"]
    if body is None:
        return httpx.get(url, headers=AUTH, timeout=10)
    return httpx.post(url, content=body, headers=AUTH, timeout=10)


def _initialize(served: dict[str, Any], timeout: float = 10) -> httpx.Response:
    return httpx.post(
        served["mcp_url"],
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "1"}}},
        headers={**ACCEPT, "authorization": f"Bearer {served['agent_token']}"},
        timeout=timeout,
    )


def _now(served: dict[str, Any]) -> float:
    now: float = httpx.get(served["admin_url"], headers=AUTH, timeout=10).json()["now"]
    return now


BIG = "1" + "0" * 400


@pytest.mark.parametrize(
    ("body", "names"),
    [
        (b'{"latency": 1e300}', "latency: a number of seconds from 0 to 60"),
        (b'{"latency": 61}', "latency: a number of seconds from 0 to 60"),
        (f'{{"latency": {BIG}}}'.encode(), "latency: a number of seconds from 0 to 60"),
        (f'{{"drop_replies": {BIG}}}'.encode(), "drop_replies: a number from 0 to 1"),
        (b'{"drop_replies": 1e400}', "drop_replies: a number from 0 to 1"),
        (f'{{"lose_completions": {BIG}}}'.encode(), "lose_completions: a whole number"),
        (b'{"seed": -1}', f"seed: a whole number from 0 to {MAX_SEED}"),
        (("{\"seed\": 1" + "0" * 4000 + "}").encode(), "seed: a whole number from 0 to"),
        (b'{"server_errors": ["", 500]}', "server_errors path: a path substring of 1 to"),
        (f'{{"server_errors": ["/mcp", {BIG}]}}'.encode(), "server_errors status"),
        (b'{"offline": [1e300, 10]}',
         f"offline offset: a number of seconds from 0 to {int(MAX_ADVANCE)}"),
        (b'{"offline": [10, 1e308]}', "offline duration: a number of seconds from 0 to"),
        (f'{{"desktop_dies": {BIG}}}'.encode(), "desktop_dies: a number of seconds from 0 to"),
    ],
)
def test_a_number_past_its_range_is_a_400_naming_it_and_changes_nothing(
    virtual: dict[str, Any], body: bytes, names: str
) -> None:
    before = _faults(virtual).json()
    reply = _faults(virtual, body)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert names in error and "\n" not in error and len(error) < 300, error
    assert _faults(virtual).json() == before  # a refused POST changed nothing


@pytest.mark.parametrize(
    ("path", "body", "names"),
    [
        ("/advance", f'{{"seconds": {BIG}}}', "seconds: a number of seconds from 0 to 31622400"),
        ("/advance", '{"seconds": 1e400}', "seconds: a number of seconds from 0 to"),
        ("/run-until-idle", f'{{"limit": {BIG}}}', "limit: a number of seconds from 0 to"),
    ],
)
def test_the_clock_paths_refuse_an_integer_past_a_float_by_name(
    virtual: dict[str, Any], path: str, body: str, names: str
) -> None:
    """Item 9 on the clock's own paths: ``OverflowError`` closed the connection."""
    start = _now(virtual)
    reply = httpx.post(virtual["admin_url"] + path, content=body.encode(), headers=AUTH,
                       timeout=10)
    assert reply.status_code == 400 and names in reply.json()["error"], reply.text
    assert len(reply.json()["error"]) < 200 and _now(virtual) == start


def test_no_fault_moves_the_virtual_clock_past_its_bound_in_one_request(
    virtual: dict[str, Any],
) -> None:
    """Item 7: ``latency`` 1e300 was accepted and the next request spun for ever; the
    largest of every fault at once moves the clock by the latency alone (60 s)."""
    assert _faults(virtual, b'{"latency": 1e300}').status_code == 400
    most = {"latency": 60, "offline": [MAX_ADVANCE, MAX_ADVANCE], "desktop_dies": MAX_ADVANCE,
            "drop_replies": 0, "seed": MAX_SEED}
    reply = _faults(virtual, json.dumps(most).encode())
    assert reply.status_code == 200, reply.text
    try:
        start = _now(virtual)
        assert _initialize(virtual).status_code == 200
        assert _now(virtual) - start == 60
    finally:
        assert _faults(virtual, b"{}").status_code == 200
    assert _initialize(virtual).status_code == 200


def test_an_empty_body_sets_no_fault_and_leaves_the_schedule_as_the_readme_says(
    virtual: dict[str, Any],
) -> None:
    """Item 15: ``{}`` sets no fault; a window already scheduled stays scheduled (and
    listed), as the README now says."""
    assert _faults(virtual, b'{"offline": [5000, 10], "drop_replies": 0.5}').status_code == 200
    view = _faults(virtual, b"{}").json()
    assert view["faults"] == {} and view["counts"] == {}
    assert any(entry.get("offline") for entry in view["scheduled"])
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    said = " ".join(readme.split())
    assert "(`{}`: none)" not in said
    assert re.search(r"`\{\}` sets none; an `offline` window or a `desktop_dies` already "
                     r"scheduled stays scheduled", said), "the README says what {} does"


def _abandon(served: dict[str, Any], count: int) -> list[socket.socket]:
    """``count`` MCP requests sent whole on their own connections, never read, and as
    many stalled halfway (the head sent, the body never)."""
    url = urlsplit(served["mcp_url"])
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    held = []
    for whole in [True] * count + [False] * count:
        sock = socket.create_connection((str(url.hostname), int(url.port or 80)), timeout=10)
        sock.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s"
                     % (url.path.encode(), len(body), body if whole else b""))
        held.append(sock)
    return held


@pytest.mark.parametrize("how", ["fault", "flag"])
def test_the_admin_door_and_the_relay_api_answer_while_every_worker_would_wait(
    how: str,
) -> None:
    """Item 8: on real time, latency at its most (the fault, or ``--latency``) and more
    abandoned MCP requests than workers (and as many stalled clients): the admin door
    (so the reset) answers at once, and the relay API too under the fault
    (``--latency`` delays it by design), since a delayed request holds no worker.
    (Before, each held a worker for its minute.)"""
    flags = ["--workers", "2"] + (["--latency", "60"] if how == "flag" else [])
    gen = _serve(*flags)
    served = next(gen)
    try:
        if how == "fault":
            assert _faults(served, b'{"latency": 60}').status_code == 200
        held = _abandon(served, 4)
        if how == "fault":
            relay = httpx.get(served["relay_url"] + RELAY_CONTROL, timeout=10,
                              headers={"authorization": f"Bearer {served['desktop_token']}"})
            assert relay.status_code == 404 and "not found" in relay.json()["error"]
            assert _faults(served).json()["faults"] == {"latency": 60}
            assert _faults(served, b"{}").status_code == 200  # the reset
            assert _initialize(served).status_code == 200  # no latency any more
        else:
            assert _faults(served).json()["faults"] == {}
        for sock in held:
            sock.close()
    finally:
        gen.close()


def test_the_admin_token_is_masked_wherever_an_agent_token_is() -> None:
    """Item 10: the admin token sent in a refused field (no credential needed) was
    echoed in the answer and on serve's stderr; now it is ``***`` in both."""
    gen = _serve()
    served = next(gen)
    try:
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": ADMIN, "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": ADMIN,
                "clientInfo": {"name": "x", "version": "1"}}},
        ):
            reply = httpx.post(served["mcp_url"], json=message, headers=ACCEPT, timeout=10)
            assert ADMIN not in reply.text and "***" in reply.text, reply.text
        _, _, err = stop(served["proc"])
        text = err.decode()
        assert "breaking MCP's schema" in text and "***" in text
        assert ADMIN not in text
    finally:
        gen.close()
