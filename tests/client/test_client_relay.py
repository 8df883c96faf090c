"""RelayClient against a recording fake of the relay API, through both transports."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from pytest_osfoundry.client import HttpStatusError, ProtocolViolation, RelayClient, Transport
from pytest_osfoundry.http import Handler, Request, Response, json_response

Via = Callable[[Handler], Transport]
TOKEN = "desk-TOKEN-a1b2c3d4e5"
ROOT = "/external-assistants/graph-relays"


class FakeRelayApi:
    """Records requests; answers each with the next scripted reply (default: ``{}``)."""

    def __init__(self, *replies: Response) -> None:
        self.seen: list[Request] = []
        self.replies = list(replies)

    def __call__(self, request: Request) -> Response:
        self.seen.append(request)
        return self.replies.pop(0) if self.replies else json_response(200, {})

    @property
    def last(self) -> Request:
        return self.seen[-1]

    def last_json(self) -> Any:
        return json.loads(self.last.body)


@pytest.mark.parametrize("base", ["https://osf.test", "https://osf.test/"])
def test_sync_posts_sessions_and_returns_commands(via: Via, base: str) -> None:
    commands = [{"command_id": "c1", "graph_session_id": "gs_1", "slug": "s", "arguments": {}}]
    api = FakeRelayApi(json_response(200, {"project_id": "p1", "commands": commands}))
    sessions = [{"graph_session_id": "gs_1", "name": "N", "slug": "s"}]
    assert RelayClient(via(api), base, TOKEN).sync("p1", sessions) == commands
    req = api.last
    assert (req.method, req.path) == ("POST", f"{ROOT}/sync")
    assert req.header("authorization") == f"Bearer {TOKEN}"
    assert req.header("content-type") == "application/json"
    assert api.last_json() == {"project_id": "p1", "sessions": sessions}


def test_start_quotes_the_command_id_and_returns_status(via: Via) -> None:
    api = FakeRelayApi(json_response(200, {"status": "cancelled"}))
    status = RelayClient(via(api), "https://osf.test", TOKEN).start("a/b c?", "exec-1")
    assert status == "cancelled"
    assert api.last.path == f"{ROOT}/commands/a%2Fb%20c%3F/start"
    assert api.last.query == ""
    assert api.last_json() == {"execution_id": "exec-1"}


def test_control_is_a_get_without_body(via: Via) -> None:
    api = FakeRelayApi(json_response(200, {"status": "running", "cancel_requested": True}))
    answer = RelayClient(via(api), "https://osf.test", TOKEN).control("c-9")
    assert answer == {"status": "running", "cancel_requested": True}
    assert (api.last.method, api.last.path, api.last.body) == (
        "GET",
        f"{ROOT}/commands/c-9/control",
        b"",
    )
    assert api.last.header("authorization") == f"Bearer {TOKEN}"


def test_complete_posts_the_body(via: Via) -> None:
    api = FakeRelayApi(json_response(200, {"status": "completed"}))
    body = {"status": "completed", "execution_id": "e", "result": "ünïcode", "total_tokens": 3}
    answer = RelayClient(via(api), "https://osf.test", TOKEN).complete("c-1", body)
    assert answer == {"status": "completed"}
    assert (api.last.method, api.last.path) == ("POST", f"{ROOT}/commands/c-1/complete")
    assert api.last_json() == body


@pytest.mark.parametrize("status", [401, 404, 409, 413])
def test_non_2xx_raises_http_status_error(via: Via, status: int) -> None:
    api = FakeRelayApi(json_response(status, {"error": "no", "echo": f"Bearer {TOKEN}"}))
    with pytest.raises(HttpStatusError) as info:
        RelayClient(via(api), "https://osf.test", TOKEN).complete("c-1", {"status": "failed"})
    err = info.value
    assert err.status == status
    assert json.loads(err.body)["error"] == "no"
    assert f"{ROOT}/commands/c-1/complete" in str(err)
    assert TOKEN not in str(err) + repr(err)


@pytest.mark.parametrize(
    ("reply", "call"),
    [
        (Response(200, {}, b"<html>"), "control"),
        (json_response(200, [1]), "control"),
        (json_response(200, {"project_id": "p"}), "sync"),
        (json_response(200, {"commands": ["x"]}), "sync"),
        (json_response(200, {}), "start"),
    ],
)
def test_malformed_answers_are_violations(via: Via, reply: Response, call: str) -> None:
    client = RelayClient(via(FakeRelayApi(reply)), "https://osf.test", TOKEN)
    with pytest.raises(ProtocolViolation):
        if call == "control":
            client.control("c")
        elif call == "sync":
            client.sync("p", [])
        else:
            client.start("c", "e")


def test_no_token_sends_no_authorization(via: Via) -> None:
    api = FakeRelayApi()
    RelayClient(via(api), "https://osf.test", None).control("c")
    assert api.last.header("authorization") is None


def test_repr_hides_the_token() -> None:
    client = RelayClient(NeverCalled(), "https://osf.test/", TOKEN)
    assert TOKEN not in repr(client)
    assert "https://osf.test" in repr(client)


class NeverCalled:
    """A transport that must never be called."""

    def request(self, method: str, url: str, headers: object, body: bytes) -> Response:
        raise AssertionError("not called")
