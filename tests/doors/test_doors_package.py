"""The doors' package: one naming (``<Stack>Door``), the respx door a class like the
others, and every older name still importable from where it was (issue 44 item 3)."""

from __future__ import annotations

import httpx
import pytest

import pytest_osfoundry.doors as doors
import pytest_osfoundry.server as server
from pytest_osfoundry.http import DropConnection, Request, Response
from pytest_osfoundry.server import ReferenceServer


def test_the_older_names_are_the_doors() -> None:
    assert server.LoopbackServer is doors.LoopbackServer
    assert server.Delayed is doors.Delayed
    assert server.Httpx2Mount is doors.Httpx2Door
    assert server.RequestsMount is doors.RequestsDoor
    for name in server.__all__:
        assert getattr(server, name) is not None, name
    for name in doors.__all__:
        assert getattr(doors, name) is not None, name


def test_each_in_process_door_is_named_for_its_stack() -> None:
    in_process = [name for name in doors.__all__ if name not in ("LoopbackServer", "Delayed")]
    assert in_process == ["Httpx2Door", "RequestsDoor", "RespxDoor"]
    with pytest.raises(AttributeError, match="no attribute 'Mount'"):
        doors.Mount  # noqa: B018


def test_respx_door_serves_while_started_and_counts() -> None:
    door = doors.RespxDoor(ReferenceServer(), "https://osf.test", door="my_door")
    url = "https://osf.test/.well-known/oauth-protected-resource"
    with door, httpx.Client() as client:
        assert client.get(url).status_code == 200
        with pytest.raises(httpx.ConnectError, match=r"my_door serves https://osf\.test only"):
            client.get("https://elsewhere.test/")
    assert door.requests == 1
    assert door.base_url == "https://osf.test"


def test_respx_door_drops_a_reply_as_httpx_would() -> None:
    def dropping(request: Request) -> Response:
        raise DropConnection("dropped")

    with (
        doors.RespxDoor(dropping, "https://osf.test"),
        httpx.Client() as client,
        pytest.raises(httpx.RemoteProtocolError, match="without sending a response"),
    ):
        client.get("https://osf.test/mcp")


def test_mount_is_the_respx_doors_router() -> None:
    with server.mount(ReferenceServer(), "https://osf.test") as router, httpx.Client() as client:
        reply = client.get("https://osf.test/.well-known/oauth-protected-resource")
        assert reply.status_code == 200
        assert router.calls.call_count == 1
