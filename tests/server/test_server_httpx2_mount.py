"""The httpx2 door (Httpx2Door, osf_httpx2): sync and async clients, faults, strictness."""

from __future__ import annotations

import httpx
import httpx2
import pytest

from pytest_osfoundry import aio
from pytest_osfoundry.clock import DEFAULT_START
from pytest_osfoundry.doors import Httpx2Door
from pytest_osfoundry.faults import DropReplies, FaultyHandler
from pytest_osfoundry.http import Request, Response, json_response
from pytest_osfoundry.world import OsfWorld

METADATA = "/.well-known/oauth-protected-resource"


class Recorder:
    """A handler that answers 200 and keeps what it was given."""

    def __init__(self) -> None:
        self.seen: list[Request] = []

    def __call__(self, request: Request) -> Response:
        self.seen.append(request)
        return json_response(200, {"path": request.path})


def test_a_sync_client_reaches_the_handler_as_sent() -> None:
    handler = Recorder()
    mount = Httpx2Door(handler, "https://osf.test")
    with mount.client() as http:
        reply = http.post(
            "https://osf.test/a%20b/c?x=1&y=%2F", content=b"body", headers={"X-Thing": "v"}
        )
    assert reply.status_code == 200 and reply.json() == {"path": "/a%20b/c"}
    (seen,) = handler.seen
    assert (seen.method, seen.path, seen.query) == ("POST", "/a%20b/c", "x=1&y=%2F")
    assert seen.body == b"body"
    assert seen.headers["x-thing"] == "v" and seen.headers["x-forwarded-proto"] == "https"
    assert mount.requests == 1


def test_an_async_client_reaches_the_reference_server_inside_the_loop() -> None:
    world = OsfWorld()
    mount = Httpx2Door(world.server, world.base_url)

    async def main() -> dict[str, object]:
        async with mount.async_client() as http:
            reply = await http.get(world.base_url + METADATA)
            assert reply.status_code == 200
            body: dict[str, object] = reply.json()
            return body

    assert aio.run(main(), world.clock)["resource"] == world.mcp_url


def test_other_origins_and_paths_are_refused_by_name() -> None:
    mount = Httpx2Door(Recorder(), "https://osf.test/base/")
    with mount.client() as http:
        assert http.get("https://osf.test/base").status_code == 200
        assert http.get("https://osf.test/base/deeper").status_code == 200
        for url in ("https://elsewhere.test/base", "http://osf.test/base", "https://osf.test/basement"):
            with pytest.raises(httpx2.ConnectError, match=r"serves https://osf.test/base only"):
                http.get(url)
    assert mount.requests == 2


def test_a_dropped_reply_is_a_transport_error_after_the_server_handled_it() -> None:
    handler = Recorder()
    mount = Httpx2Door(FaultyHandler(handler, DropReplies(fraction=1.0)), "https://osf.test")
    with mount.client() as http, pytest.raises(httpx2.RemoteProtocolError, match="disconnected"):
        http.get("https://osf.test/x")
    assert len(handler.seen) == 1  # it reached the server; only the reply was lost


@pytest.mark.osf(server_errors=("/mcp", 503), latency=2.5)
def test_world_faults_reach_osf_httpx2(osf_world: OsfWorld, osf_httpx2: Httpx2Door) -> None:
    start = osf_world.clock.now()
    with osf_httpx2.client() as http:
        assert http.post(osf_world.mcp_url, content=b"{}").status_code == 503
        assert http.get(osf_world.base_url + METADATA).status_code == 200
    # The injected 503 answers before the latency fault; the request that reached the
    # server waited its 2.5 virtual seconds.
    assert osf_world.clock.now() == start + 2.5


@pytest.mark.osf(drop_replies=1.0)
def test_drop_replies_reaches_osf_httpx2(osf_world: OsfWorld, osf_httpx2: Httpx2Door) -> None:
    async def main() -> None:
        async with osf_httpx2.async_client() as http:
            with pytest.raises(httpx2.RemoteProtocolError):
                await http.get(osf_world.base_url + METADATA)

    aio.run(main(), osf_world.clock)


def test_httpx_async_client_works_through_osf_respx(osf_world: OsfWorld, osf_respx: object) -> None:
    async def main() -> int:
        async with httpx.AsyncClient() as http:
            reply = await http.get(osf_world.base_url + METADATA)
            await httpx_sleep()
            return reply.status_code

    assert aio.run(main(), osf_world.clock) == 200
    assert osf_world.clock.now() == DEFAULT_START + 1


async def httpx_sleep() -> None:
    import asyncio

    await asyncio.sleep(1)


def test_bad_arguments_and_bad_handlers_are_named() -> None:
    with pytest.raises(TypeError, match="handler"):
        Httpx2Door("not callable", "https://osf.test")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="base_url"):
        Httpx2Door(Recorder(), "osf.test")
    mount = Httpx2Door(lambda request: "nope", "https://osf.test")  # type: ignore[arg-type]
    with mount.client() as http, pytest.raises(TypeError, match="must return a Response"):
        http.get("https://osf.test/")
