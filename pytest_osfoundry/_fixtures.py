"""The ``osf_`` fixtures: a whole fake round trip on a virtual clock, fresh per test.

Configure a test with the ``osf`` marker (any :class:`~pytest_osfoundry.world.WorldConfig`
field; ``patch_sleep``, ``virtual_loop``, ``stall_after`` and ``stall_timeout`` are the
fixtures' own)::

    @pytest.mark.osf(seed=1, interval=20, drop_replies=0.3, patch_sleep=True)
    def test_my_agent(osf_world, osf_clock):
        ...

or override the ``osf_config`` fixture to configure many tests at once (the marker
still applies on top, test by test). Fixtures:

* ``osf_world`` — the :class:`~pytest_osfoundry.world.OsfWorld` (everything below).
* ``osf_clock`` — its :class:`~pytest_osfoundry.clock.VirtualClock`; while it is in
  use ``datetime.now()``/``time.time()`` follow it (freezegun). ``patch_sleep=True``
  implies it (no need to request ``osf_clock``): ``time.sleep(s)`` advances it
  instead of sleeping.
* ``osf_server`` — the :class:`~pytest_osfoundry.server.ReferenceServer`
  (``osf_server.provisioned`` holds the tokens and project id).
* ``osf_relay`` — the started :class:`~pytest_osfoundry.relay.FakeRelay`.
* ``osf_engine`` — the :class:`~pytest_osfoundry.engine.FakeEngine`.
* ``osf_agent`` — a :class:`~pytest_osfoundry.agent.ScriptedAgent`.
* ``osf_make_agent`` / ``osf_make_relay`` — factories for more of them.
* ``osf_respx`` — the server mounted into httpx at ``osf_world.base_url`` (the router
  of a :class:`~pytest_osfoundry.doors.RespxDoor`; strict: other URLs raise
  ``httpx.ConnectError`` naming the fixture), so your own httpx code reaches it.
* ``osf_httpx2`` — the server as an httpx2 transport
  (:class:`~pytest_osfoundry.doors.Httpx2Door`): what the official MCP Python SDK
  sends through (``streamable_http_client(url,
  http_client=osf_httpx2.async_client(...))``); sync clients too. httpx2 comes with
  the ``sdk`` extra (``mcp``); without it the fixture says so in one line.
* ``osf_requests`` — the server mounted into ``requests`` at ``osf_world.base_url``
  (:class:`~pytest_osfoundry.doors.RequestsDoor`; in-process, strict:
  other URLs raise ``requests.ConnectionError`` naming the fixture).
* ``osf_loopback`` — the same server on a real ``127.0.0.1`` port: any client with a
  socket (aiohttp, requests, the SDK over real HTTP); on the virtual loop time holds
  while it holds a request (:mod:`pytest_osfoundry.aio`).

Async tests: ``@pytest.mark.osf(virtual_loop=True)`` on an ``async def`` test runs it
on a :class:`~pytest_osfoundry.aio.VirtualEventLoop` on the world's clock (the kit runs
it; no async plugin is needed): ``asyncio.sleep``/``anyio.sleep`` jump virtual time,
and a stall fails (``stall_after``, ``stall_timeout``) instead of hanging. An ``async
def`` test that uses the world on any other loop (pytest-asyncio's, anyio's own) is
refused at set-up, naming the fix (:mod:`pytest_osfoundry._aio_tests`): the world's
clock would never move there, and the test would hang. Any other event loop that sets
a timer while the virtual clock is in charge fails with a message too: freezegun
freezes the monotonic clock such loops read.

Set-up refusals (a bad marker option, a bad value, an ``osf`` marker on a test that
uses no ``osf_`` fixture) fail the test at set-up with one message naming the test
and the fix, no traceback of the kit's code.

The agent-side faults (``drop_replies``, ``latency``, ``server_errors``) apply to
your own requests through every door (``osf_respx``, ``osf_httpx2``, ``osf_requests``,
``osf_loopback``) as they do to the kit's agent: a dropped reply reached the server,
and your client gets a transport error.

The world's base URL (``https://osfoundry.test``) resolves nowhere: while the world
exists, a lookup of its host (``socket.getaddrinfo``, which httpx, httpx2, requests
and aiohttp all call) fails with ``socket.gaierror`` naming the doors
(:data:`NO_DOOR`), so a client that reaches no door fails with a message saying which
fixture to use, and no lookup ever leaves the machine.

The plugin imports this module in every pytest run of a project that installs the
kit, so the components (and respx, Faker, httpx, :mod:`http.server`, freezegun) are
imported inside the fixtures, when a test first uses one.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    import respx

    from pytest_osfoundry.agent import ScriptedAgent
    from pytest_osfoundry.clock import VirtualClock
    from pytest_osfoundry.doors import Httpx2Door, LoopbackServer, RequestsDoor
    from pytest_osfoundry.engine import FakeEngine
    from pytest_osfoundry.relay import FakeRelay
    from pytest_osfoundry.server import ReferenceServer
    from pytest_osfoundry.world import OsfWorld, WorldConfig

__all__ = [
    "osf_agent",
    "osf_clock",
    "osf_config",
    "osf_engine",
    "osf_httpx2",
    "osf_loopback",
    "osf_make_agent",
    "osf_make_relay",
    "osf_relay",
    "osf_requests",
    "osf_respx",
    "osf_server",
    "osf_world",
]

WORLD: pytest.StashKey[OsfWorld] = pytest.StashKey()
"""Where ``osf_world`` leaves the test's world (for the virtual loop and the set-up checks)."""


def refuse(message: str) -> NoReturn:
    """Fail the test being set up with ``message`` alone: no traceback of the kit's code."""
    pytest.fail(message, pytrace=False)


def _marker_options(node: pytest.Item) -> dict[str, Any]:
    """The ``osf`` markers' options, the closest winning (module, class, then the test)."""
    options: dict[str, Any] = {}
    for marker in reversed(list(node.iter_markers("osf"))):
        if marker.args:
            refuse(
                f"{node.nodeid}: @pytest.mark.osf takes keyword arguments only, "
                f"got {marker.args!r}"
            )
        options.update(marker.kwargs)
    return options


def _config(build: Callable[[], WorldConfig], node: pytest.Item) -> WorldConfig:
    try:
        return build()
    except TypeError as err:  # an unknown option
        problem = str(err)
    refuse(f"{node.nodeid}: @pytest.mark.osf: {problem}")  # outside: no chained exception


def check_marker_use(item: pytest.Item) -> None:
    """An ``osf`` marker on a test that uses no ``osf_`` fixture configures nothing: refuse it.

    Only a marker on the test itself: one on its module or class configures a group,
    which may hold tests that need no world.
    """
    if any(m.name == "osf" for m in item.own_markers) and "osf_config" not in getattr(
        item, "fixturenames", ()
    ):
        refuse(
            f"{item.nodeid}: @pytest.mark.osf configures the osf_ fixtures, and this test "
            "uses none of them, so it would change nothing: request osf_world (or another "
            "osf_ fixture), or drop the marker"
        )


@pytest.fixture
def osf_config(request: pytest.FixtureRequest) -> WorldConfig:
    """The world's configuration, from the ``osf`` marker.

    Override it (in a ``conftest.py``) to configure many tests at once: any
    ``WorldConfig`` field, the fixtures' own (``patch_sleep``, ``virtual_loop``,
    ``stall_after``, ``stall_timeout``) included. An ``osf`` marker still applies on top
    of the override, test by test.
    """
    from pytest_osfoundry.world import WorldConfig

    options = _marker_options(request.node)
    return _config(lambda: WorldConfig.from_kwargs(**options), request.node)


@pytest.fixture
def osf_world(osf_config: WorldConfig, request: pytest.FixtureRequest) -> OsfWorld:
    """A fresh fake round trip (server, relay, engine, clock) for this test.

    With ``patch_sleep=True``, or ``virtual_loop=True`` on an ``async def`` test, the
    virtual clock is put in charge at once, as if the test had requested ``osf_clock``.
    """
    from pytest_osfoundry.world import OsfWorld, WorldConfig

    node = request.node
    if not isinstance(osf_config, WorldConfig):
        refuse(f"{node.nodeid}: osf_config must return a WorldConfig, got {osf_config!r}")
    options = _marker_options(node)
    config = _config(lambda: osf_config.updated(options), node)
    try:
        world = OsfWorld(config)
    except (TypeError, ValueError) as err:
        problem = str(err)
    else:
        node.stash[WORLD] = world
        _resolve_nowhere(world, request)
        if config.patch_sleep or (config.virtual_loop and is_async_test(node)):
            _take_over_time(world, request)
        return world
    refuse(f"{node.nodeid}: osf configuration: {problem}")  # outside: no chained exception


#: What a lookup of the world's host fails with: every door, by the clients it serves.
NO_DOOR = (
    "{host} is the osf world's base URL host (osf_world.base_url): it resolves nowhere, so "
    "this client reached no door into the world. Wire it through one: osf_respx (httpx), "
    "osf_httpx2 (httpx2: the MCP SDK, fastmcp, pydantic-ai, openai-agents), osf_requests "
    "(requests), or osf_loopback.origin in place of the base URL (aiohttp, any client with "
    "a socket); docs/fixtures.md has the line for each framework"
)


def _resolve_nowhere(world: OsfWorld, request: pytest.FixtureRequest) -> None:
    """Until the test ends, a lookup of the world's host name fails naming the doors.

    Only a name: a base URL on an IP address or ``localhost`` is looked up as usual.
    """
    import ipaddress
    import socket
    from urllib.parse import urlsplit

    host = (urlsplit(world.base_url).hostname or "").lower()
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        if host in ("", "localhost"):
            return
    real = socket.getaddrinfo
    message = NO_DOOR.format(host=host)

    def getaddrinfo(name: Any, *args: Any, **kwargs: Any) -> Any:
        text = name.decode("ascii", "replace") if isinstance(name, bytes) else str(name)
        if text.lower().rstrip(".") == host:
            raise socket.gaierror(socket.EAI_NONAME, message)
        return real(name, *args, **kwargs)

    patch = pytest.MonkeyPatch()
    patch.setattr(socket, "getaddrinfo", getaddrinfo)
    request.addfinalizer(patch.undo)


def is_async_test(node: pytest.Item) -> bool:
    """Whether ``node`` is an ``async def`` test (under any plugin's ``functools.wraps``)."""
    function = getattr(node, "obj", None)
    if function is None:
        return False
    return inspect.iscoroutinefunction(inspect.unwrap(function, stop=inspect.iscoroutinefunction))


_CLOCK_ACTIVE = pytest.StashKey["VirtualClock"]()

def _take_over_time(world: OsfWorld, request: pytest.FixtureRequest) -> VirtualClock:
    """Make ``datetime.now()``/``time.time()`` follow the world's clock (and
    ``time.sleep`` advance it under ``patch_sleep``) until the test ends; once per test
    (:func:`~pytest_osfoundry._process_time.follow_clock`)."""
    active: VirtualClock | None = request.node.stash.get(_CLOCK_ACTIVE, None)
    if active is not None:
        return active
    from pytest_osfoundry._process_time import follow_clock
    from pytest_osfoundry.aio import VirtualEventLoop

    config = world.config
    clock = world.clock
    undo = follow_clock(
        clock,
        patch_sleep=config.patch_sleep,
        what="@pytest.mark.osf(patch_sleep=True)" if config.patch_sleep else "osf_clock",
        own_loop=VirtualEventLoop,
    )

    def restore() -> None:
        undo()
        del request.node.stash[_CLOCK_ACTIVE]

    request.node.stash[_CLOCK_ACTIVE] = clock
    request.addfinalizer(restore)
    return clock


@pytest.fixture
def osf_clock(osf_world: OsfWorld, request: pytest.FixtureRequest) -> VirtualClock:
    """The virtual clock; ``datetime.now()``/``time.time()`` follow it while the test runs."""
    return _take_over_time(osf_world, request)


@pytest.fixture
def osf_server(osf_world: OsfWorld) -> ReferenceServer:
    """The reference server of this test's world (``.provisioned`` has the tokens)."""
    return osf_world.server


@pytest.fixture
def osf_relay(osf_world: OsfWorld) -> FakeRelay:
    """The world's fake desktop relay, already started and sharing ``osf_world.sessions``."""
    return osf_world.relay


@pytest.fixture
def osf_engine(osf_world: OsfWorld) -> FakeEngine:
    """The world's fake Graph engine (``engine.graphs[gsid] = Graph(...)`` to set one)."""
    return osf_world.engine


@pytest.fixture
def osf_agent(osf_world: OsfWorld) -> ScriptedAgent:
    """A scripted agent with the first agent's token."""
    return osf_world.make_agent()


@pytest.fixture
def osf_make_agent(osf_world: OsfWorld) -> Callable[..., ScriptedAgent]:
    """A factory: ``osf_make_agent(token=None, strategy=..., retry=..., drop_replies=...)``."""
    return osf_world.make_agent


@pytest.fixture
def osf_make_relay(osf_world: OsfWorld) -> Callable[..., FakeRelay]:
    """A factory for more relays: ``osf_make_relay(outbox=..., lose_completions=...)``."""
    return osf_world.make_relay


@pytest.fixture
def osf_respx(osf_world: OsfWorld) -> Iterator[respx.MockRouter]:
    """The server mounted into every httpx client at ``osf_world.base_url`` (no sockets)."""
    from pytest_osfoundry.doors import RespxDoor

    with RespxDoor(osf_world.faulty_server(), osf_world.base_url, door="osf_respx") as door:
        yield door.router


@pytest.fixture
def osf_httpx2(osf_world: OsfWorld, request: pytest.FixtureRequest) -> Httpx2Door:
    """The server as an httpx2 transport at ``osf_world.base_url`` (no sockets): the door
    for agents on the official MCP Python SDK (``.async_client()``, ``.client()``)."""
    try:
        from pytest_osfoundry.doors import Httpx2Door
    except ImportError as err:
        missing = str(err)
    else:
        return Httpx2Door(osf_world.faulty_server(), osf_world.base_url, door="osf_httpx2")
    refuse(f"{request.node.nodeid}: {missing}")  # outside the except: no chained exception


@pytest.fixture
def osf_requests(osf_world: OsfWorld, request: pytest.FixtureRequest) -> Iterator[RequestsDoor]:
    """The server mounted into every ``requests`` call at ``osf_world.base_url`` (no
    sockets; strict: other URLs raise ``requests.ConnectionError`` naming this fixture)."""
    try:
        from pytest_osfoundry.doors import RequestsDoor
    except ImportError as err:
        missing = str(err)
    else:
        with RequestsDoor(osf_world.faulty_server(), osf_world.base_url, door="osf_requests") as m:
            yield m
        return
    refuse(f"{request.node.nodeid}: {missing}")  # outside the except: no chained exception


@pytest.fixture
def osf_loopback(osf_world: OsfWorld) -> Iterator[LoopbackServer]:
    """The server on a real 127.0.0.1 port (``.origin``); closed after the test."""
    from pytest_osfoundry.doors import LoopbackServer

    with LoopbackServer(osf_world.faulty_server()) as server:
        yield server
