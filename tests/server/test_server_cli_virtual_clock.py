"""``osfoundry-fake serve --relay --virtual-clock`` from a second process: time moves only
when told, over an admin path only the admin token opens."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_osfoundry.client._http_transport import HttpTransport
from pytest_osfoundry.client._mcp_client import McpClient
from tests.server.test_server_cli import first_line, spawn, stop

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and select")


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, Any]]:
    proc = spawn("--relay", "--virtual-clock", "--graph-duration", "60", "--sessions", "1")
    try:
        yield json.loads(first_line(proc))
    finally:
        if proc.poll() is None:
            code, _, err = stop(proc)
            assert code == 0, err.decode()


def admin(served: dict[str, Any], path: str, body: Any = None, token: str | None = "admin",
          method: str = "POST") -> httpx.Response:
    headers = {}
    if token == "admin":
        headers["authorization"] = f"Bearer {served['admin_token']}"
    elif token is not None:
        headers["authorization"] = f"Bearer {token}"
    if isinstance(body, bytes):
        content = body
    else:
        content = b"" if body is None else json.dumps(body).encode()
    return httpx.request(
        method, served["admin_url"] + path, content=content, headers=headers, timeout=10
    )


def now(served: dict[str, Any]) -> float:
    reply = admin(served, "", method="GET")
    assert reply.status_code == 200, reply.text
    return float(reply.json()["now"])


def test_the_json_line_names_the_virtual_clock_and_its_admin(served: dict[str, Any]) -> None:
    assert served["clock"] == "virtual"
    assert served["admin_url"] == served["relay_url"] + "/_osf/clock"
    assert served["admin_token"].startswith("osf_admin_")
    assert served["admin_token"] not in (served["agent_token"], served["desktop_token"])
    assert len(served["sessions"]) == 1


def test_a_minute_long_graph_runs_when_told_and_only_then(served: dict[str, Any]) -> None:
    client = McpClient(HttpTransport(timeout=10), served["mcp_url"], served["agent_token"])
    client.connect()
    gsid = served["sessions"][0]["graph_session_id"]
    ticket = client.run_graph_session(gsid, idempotency_key="virtual-clock-key-1")
    start = now(served)
    time.sleep(0.3)  # real time passes; virtual time does not
    assert now(served) == start
    assert client.get_graph_run(ticket["command_id"])["status"] == "queued"

    moved = admin(served, "/advance", {"seconds": 20})
    assert moved.status_code == 200 and moved.json()["now"] == start + 20
    assert client.get_graph_run(ticket["command_id"])["status"] == "running"

    idle = admin(served, "/run-until-idle", {})
    assert idle.status_code == 200 and idle.json()["idle"] is True
    run = client.get_graph_run(ticket["command_id"])
    assert run["status"] == "completed"
    assert now(served) - start <= 20 + 60 + 20  # finished and delivered within a pass


def test_agent_and_desktop_tokens_never_open_the_admin_path(served: dict[str, Any]) -> None:
    before = now(served)
    for token in (served["agent_token"], served["desktop_token"], served["stranger_token"]):
        reply = admin(served, "/advance", {"seconds": 20}, token=token)
        assert reply.status_code == 403 and "admin token" in reply.json()["error"]
        assert token not in reply.text
    missing = admin(served, "/advance", {"seconds": 20}, token=None)
    assert missing.status_code == 401 and "Bearer" in missing.headers["www-authenticate"]
    assert now(served) == before  # nothing moved the clock


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/advance", {}, "seconds: required"),
        ("/advance", {"seconds": -1}, "seconds: a number of seconds from 0 to 31622400"),
        ("/advance", {"seconds": "20"}, "seconds: must be a number"),
        ("/advance", {"seconds": True}, "seconds: must be a number"),
        ("/advance", {"seconds": 1e12}, "seconds: a number of seconds from 0 to 31622400"),
        ("/advance", {"seconds": 1, "extra": 2}, "extra: unknown field"),
        ("/advance", b"{not json", "body:"),
        ("/advance", [20], "body: must be a JSON object"),
        ("/run-until-idle", {"limit": "x"}, "limit: must be a number"),
    ],
)
def test_bad_bodies_are_400_naming_the_field(
    served: dict[str, Any], path: str, body: Any, field: str
) -> None:
    reply = admin(served, path, body)
    assert reply.status_code == 400
    assert reply.json()["error"].startswith(field)


def test_wrong_methods_and_paths_are_named(served: dict[str, Any]) -> None:
    wrong = admin(served, "/advance", method="GET")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
    unknown = admin(served, "/rewind", {"seconds": 1})
    assert unknown.status_code == 404 and "/_osf/clock/advance" in unknown.json()["error"]


README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
README_BLOCK = next(
    b for b in re.findall(r"```sh\n(.*?)```", README, flags=re.S) if "--virtual-clock" in b
)
README_ORIGIN = "http://127.0.0.1:8766"


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_readme_s_curl_example_is_true(tmp_path: Path) -> None:
    lines = [
        ln.strip()
        for ln in re.sub(r"\\\n\s*", " ", README_BLOCK).splitlines()
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    args = shlex.split(lines[0].rstrip("&"))
    assert args[:4] == ["osfoundry-fake", "serve", "--relay", "--virtual-clock"]
    assert args[-2:] == [">", "fake.json"]  # the block waits for the line in that file
    args = args[:-2]
    args[args.index("--port") + 1] = "0"
    proc = spawn(*args[2:])
    try:
        raw = first_line(proc)
        line = json.loads(raw)
        (tmp_path / "fake.json").write_bytes(raw)  # what the block's wait reads
        script = "set -e\n" + "\n".join(lines[1:]).replace(README_ORIGIN, line["relay_url"])
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                              cwd=tmp_path)
    finally:
        stop(proc)
    assert done.returncode == 0, done.stderr
    decoder, answers, pos = json.JSONDecoder(), [], 0
    text = done.stdout
    while pos < len(text):  # curl prints no newline between the answers
        if text[pos].isspace():
            pos += 1
            continue
        value, pos = decoder.raw_decode(text, pos)
        answers.append(value)
    assert [a["now"] - answers[0]["now"] for a in answers] == [0, 0, 0]  # idle at once
    assert answers[0]["advanced"] == 20 and answers[1]["idle"] is True


def test_without_relay_the_clock_still_moves_only_when_told() -> None:
    proc = spawn("--virtual-clock", "--admin-token", "fixed-admin-token-0001")
    try:
        line = json.loads(first_line(proc))
        assert "sessions" not in line and line["admin_token"] == "fixed-admin-token-0001"
        auth = {"authorization": "Bearer fixed-admin-token-0001"}
        moved = httpx.post(line["admin_url"] + "/advance", json={"seconds": 5}, headers=auth)
        assert moved.status_code == 200 and moved.json()["advanced"] == 5
        idle = httpx.post(line["admin_url"] + "/run-until-idle", headers=auth)
        assert idle.status_code == 200 and idle.json()["idle"] is True  # nothing queued
    finally:
        code, _, err = stop(proc)
    assert code == 0, err.decode()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--virtual-clock", "--admin-token", "short"], "--admin-token: at least 16 characters"),
    ],
)
def test_a_bad_admin_token_option_is_refused_by_name(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_osfoundry._cli import main

    assert main(["serve", *args]) == 2
    assert message in capsys.readouterr().err
