"""Wrappers of a handler pass a door's ``serve_at`` on (``http.HandlerWrapper``).

A wrapped :class:`ReferenceServer` behind the loopback door or the respx mount names
the origin it is really served at in its metadata and its challenge (SPEC R1), not
``http://localhost``, however many wrappers stand in front of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_osfoundry.faults import DropReplies, FaultyHandler
from pytest_osfoundry.http import HandlerWrapper, Request, Response, announce_origin
from pytest_osfoundry.server import Delayed, LoopbackServer, ReferenceServer, mount
from tests.conformance import osf_variant_kit, variants_protocol, variants_race

ROOT = Path(__file__).resolve().parents[2]


class _Counting(HandlerWrapper[ReferenceServer]):
    """A new wrapper that overrides only ``__call__``: nothing else to remember."""

    def __init__(self) -> None:
        super().__init__(ReferenceServer())
        self.seen = 0

    def __call__(self, request: Request, /) -> Response:
        self.seen += 1
        return self.inner(request)


WRAPPERS: dict[str, Callable[[], Any]] = {
    "HandlerWrapper itself": lambda: HandlerWrapper(ReferenceServer()),
    "a subclass overriding __call__": _Counting,
    "FaultyHandler": lambda: FaultyHandler(ReferenceServer(), DropReplies(fraction=0.0)),
    "Delayed": lambda: Delayed(ReferenceServer(), 0.0),
    "FaultyHandler around Delayed": lambda: FaultyHandler(Delayed(ReferenceServer(), 0.0)),
    "the variant kit's Wrapped": osf_variant_kit.Wrapped,
    "the protocol variants' Wrapped": lambda: variants_protocol.Wrapped(ReferenceServer()),
    "RacyKeys": variants_race.RacyKeys,
}


def _innermost(handler: Any) -> ReferenceServer:
    while not isinstance(handler, ReferenceServer):
        handler = handler.inner
    return handler


def _announced(client: httpx.Client, origin: str) -> tuple[str, str]:
    """The metadata's ``resource`` and the challenge's ``resource_metadata``."""
    meta = client.get(origin + "/.well-known/oauth-protected-resource").json()
    challenge = client.post(
        origin + "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "get_graph_run", "arguments": {}},
        },
        headers={"accept": "application/json, text/event-stream"},
    )
    assert challenge.status_code == 401
    return meta["resource"], challenge.headers["www-authenticate"]


@pytest.mark.parametrize("make", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_a_wrapped_server_behind_the_loopback_door_names_its_real_origin(
    make: Callable[[], Any],
) -> None:
    wrapper = make()
    with LoopbackServer(wrapper) as loop, httpx.Client(timeout=10) as client:
        resource, challenge = _announced(client, loop.origin)
    assert resource == loop.origin + "/mcp"
    assert f'resource_metadata="{loop.origin}/.well-known/oauth-protected-resource"' in challenge
    assert _innermost(wrapper).mcp_url() == loop.origin + "/mcp"


@pytest.mark.parametrize("make", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_a_wrapped_server_behind_the_respx_mount_names_its_base_url(
    make: Callable[[], Any],
) -> None:
    wrapper = make()
    with mount(wrapper, "https://wrapped.example"), httpx.Client() as client:
        resource, _ = _announced(client, "https://wrapped.example")
    assert resource == "https://wrapped.example/mcp"


def test_a_wrapper_that_does_not_forward_leaves_the_server_at_localhost() -> None:
    """The property the base class gives: without it the inner server never hears."""

    class Forgetful:
        def __init__(self) -> None:
            self.inner = ReferenceServer()

        def __call__(self, request: Request, /) -> Response:
            return self.inner(request)

    forgetful = Forgetful()
    announce_origin(forgetful, "http://127.0.0.1:1")
    assert forgetful.inner.mcp_url() == "http://localhost/mcp"
    wrapped = HandlerWrapper(ReferenceServer())
    announce_origin(wrapped, "http://127.0.0.1:1")
    assert wrapped.inner.mcp_url() == "http://127.0.0.1:1/mcp"


def test_announce_origin_leaves_a_handler_without_serve_at_alone() -> None:
    def plain(request: Request) -> Response:
        return Response(204)

    announce_origin(plain, "http://127.0.0.1:1")  # no error, nothing to tell


def test_no_wrapper_forwards_serve_at_by_hand() -> None:
    """Only the server (which adopts the origin) and the base class define serve_at."""
    allowed = {"pytest_osfoundry/server/_app.py", "pytest_osfoundry/http.py"}
    defining = {
        path.relative_to(ROOT).as_posix()
        for folder in ("pytest_osfoundry", "tests", "conformance", "examples")
        for path in (ROOT / folder).rglob("*.py")
        if re.search(r"def serve_at\(", path.read_text(encoding="utf-8"))
    }
    defining.discard("tests/server/test_server_wrappers.py")
    assert defining <= allowed, sorted(defining - allowed)
