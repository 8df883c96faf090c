"""A whole fake round trip in one object: clock, server, engine, relay and agents.

:class:`OsfWorld` wires the kit's real components the way the fixtures hand them to
users and the way ``osfoundry-sim`` runs its experiments, so both stand on the same
code::

    world = OsfWorld(WorldConfig(seed=1))
    agent = world.make_agent()
    run = agent.run(world.sessions[0].graph_session_id)   # moves the virtual clock
    assert run.status == "completed"

Every fault is one :class:`WorldConfig` field: ``drop_replies`` (agents' replies),
``latency`` (virtual seconds each agent request takes), ``lose_completions`` (the
relay's next N completion POSTs), ``offline`` (a window in which the desktop reaches
nothing: asleep, its Graph paused, by default; or ``(offset, duration, "network")``:
awake with its network gone, its Graph running on), ``outbox=False`` (no outbox),
``server_errors`` (an HTTP status on a path). The
agent-side ones (``drop_replies``, ``latency``, ``server_errors``) apply alike to the
kit's agents and to any client of :meth:`OsfWorld.faulty_server` (what the
``osf_respx``, ``osf_httpx2``, ``osf_requests`` and ``osf_loopback`` fixtures serve),
such as your own httpx agent or one on the official MCP SDK. :data:`FAULT_FIELDS` are
the faults ``osfoundry-fake serve`` takes too, checked by :func:`faults_config`.

``protocols`` restricts the MCP revisions the server serves (all three by default);
``protocol`` is what the agents' clients speak: ``"auto"`` (the default) settles the
era once, when the world is made, the way a dual-era client would (``server/discover``
first, ``initialize`` when the server is legacy-only), and every agent client is then
pinned to the revision found; or one pinned revision.

Four fields are the ``osf_`` fixtures' and mean nothing to :class:`OsfWorld` itself:
``patch_sleep``, ``virtual_loop``, ``stall_after`` and ``stall_timeout`` (so that the
``osf`` marker and an ``osf_config`` override take the same options).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from pytest_osfoundry._checks import (
    ArgumentTypeError,
    check_count,
    check_flag,
    check_fraction,
    check_http_error,
    check_implements,
    check_int,
    check_positive_int,
    check_seconds,
)
from pytest_osfoundry._vocabulary import MAX_SYNC_SESSIONS
from pytest_osfoundry.agent import ScriptedAgent, Strategy, ToolClient
from pytest_osfoundry.agent._internal import Retry
from pytest_osfoundry.client import (
    DirectTransport,
    McpClient,
    RelayApiClient,
    RelayClient,
    Transport,
)
from pytest_osfoundry.client._internal import MODERN_PROTOCOL_VERSION, PROTOCOL_CHOICES
from pytest_osfoundry.clock import DEFAULT_START, Clock, VirtualClock
from pytest_osfoundry.engine import FakeEngine, Graph, LogNormal, SessionInfo, make_sessions
from pytest_osfoundry.faults import (
    Death,
    DropReplies,
    Fault,
    FaultyHandler,
    FaultyTransport,
    Latency,
    LoseRequests,
    ServerErrors,
    schedule_death,
    schedule_offline,
)
from pytest_osfoundry.relay import FakeRelay, Outbox
from pytest_osfoundry.relay._internal import DEFAULT_HISTORY, OfflineMode, check_offline_mode
from pytest_osfoundry.server import Provisioned, ReferenceServer, Retention, ServerState
from pytest_osfoundry.server._internal import DirectRelayClient, DirectToolClient

__all__ = ["SEED_DURATION", "SEED_SIGMA", "OsfWorld", "WorldConfig"]

#: The lognormal spread fitted to the seed's "runs queued at once" table (see
#: docs/experiments.md): of the grid 0.70-0.95 (step 0.01), the point whose fan-out
#: runs through the kit's components (3,000 single runs, 1,000 batches of 3 and 5,
#: master seeds 0-2) minimise the summed squared log-ratios to the table's nine
#: figures (``osfoundry-sim --fit-sigma --runs 3000`` redoes the fit).
SEED_SIGMA = 0.81
SEED_DURATION = LogNormal(median=60.0, sigma=SEED_SIGMA, minimum=5.0)


@dataclass
class WorldConfig:
    """Everything a world can be told; every field has the documented default."""

    seed: int = 0
    start: float = DEFAULT_START
    interval: float = 20.0
    control_poll: float = 3.0
    poll_after: float = 20
    """What every ticket's ``poll_after_seconds`` says (R4): the documented 20 unless
    the world runs on another pickup interval."""
    stop_latency: float = 0.5
    sessions: int = 3
    graph: Graph | None = None
    graphs: Mapping[str, Graph] | None = None
    outbox: Outbox | bool = True
    lose_completions: int = 0
    drop_replies: float = 0.0
    latency: float = 0.0
    offline: tuple[float, float] | tuple[float, float, OfflineMode] | None = None
    """``(offset, duration)``: the desktop is asleep for that window (its Graph paused);
    ``(offset, duration, "network")``: awake, its network gone (its Graph runs on)."""
    server_errors: tuple[str, int] | None = None
    start_relay: bool = True
    relay_phase: float = 0.0
    base_url: str = "https://osfoundry.test"
    strategy: Strategy | None = None
    retry: Retry = "same-key"
    desktop_dies: float | None = None
    """Seconds after the start at which the relay process dies (:func:`schedule_death`)."""
    protocols: tuple[str, ...] | None = None
    protocol: str = "auto"
    direct: bool = False
    """Scripted agents and the relay call the server's state directly
    (``server._state_clients``): no JSON-RPC, HTTP or wire checks; the same state, faster.
    Not with faults on those calls."""
    patch_sleep: bool = False
    """Fixtures only: ``time.sleep(s)`` advances the clock (the clock is put in charge)."""
    virtual_loop: bool = False
    """Fixtures only: an ``async def`` test runs on a
    :class:`~pytest_osfoundry.aio.VirtualEventLoop` on the world's clock."""
    stall_after: float | None = None
    """Fixtures only, with ``virtual_loop``: virtual seconds the loop may move with nothing
    of the test's own coming due before it fails as stalled (``None``: one day)."""
    stall_timeout: float | None = None
    """Fixtures only, with ``virtual_loop``: wall seconds a stall takes to fail
    (``None``: 10)."""
    retention: Retention | None = None
    """What finished work the server keeps (:class:`~pytest_osfoundry.server.Retention`;
    ``None``: its defaults, 10,000 terminal runs and keys for 24 hours)."""
    relay_history: int | None = DEFAULT_HISTORY
    """Passes, events and executed command ids the world's relays keep of each (the
    newest; ``None``: all)."""

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> WorldConfig:
        """Build a config, naming any unknown keyword and the accepted ones."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - names)
        if unknown:
            hints = [
                f"{name} (did you mean {close[0]}?)" if close else name
                for name in unknown
                for close in [difflib.get_close_matches(name, names, n=1, cutoff=0.7)]
            ]
            raise TypeError(
                f"unknown osf option(s): {', '.join(hints)}; accepted: {', '.join(sorted(names))}"
            )
        return cls(**kwargs)

    def updated(self, options: Mapping[str, Any]) -> WorldConfig:
        """This config with ``options`` (field names, as for :meth:`from_kwargs`) replaced."""
        if not options:
            return self
        return self.from_kwargs(**{**{f.name: getattr(self, f.name) for f in fields(self)},
                                   **options})


def _pair(value: object, name: str, shape: str) -> tuple[object, object]:
    """``value`` as a two-item tuple or list; else an ``ArgumentTypeError`` naming ``shape``."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ArgumentTypeError(f"{name} must be {shape}, got {value!r}")
    return value[0], value[1]


_OFFLINE_SHAPE = "(offset, duration) or (offset, duration, 'asleep' | 'network') in seconds"


def _offline_window(value: object) -> tuple[float, float, OfflineMode]:
    """``offline`` checked: offset and duration in seconds, and how the desktop is away."""
    if not isinstance(value, (tuple, list)) or len(value) not in (2, 3):
        raise ArgumentTypeError(f"offline must be {_OFFLINE_SHAPE}, got {value!r}")
    offset = check_seconds(value[0], "offline offset")
    duration = check_seconds(value[1], "offline duration")
    mode = value[2] if len(value) == 3 else "asleep"
    return offset, duration, check_offline_mode(mode, "offline's third item")


def _validate(cfg: WorldConfig) -> None:
    """Refuse a bad field before anything is built, naming the field (fixtures show it).

    Every check goes through :mod:`pytest_osfoundry._checks`: a wrong kind raises
    :class:`~pytest_osfoundry._checks.ArgumentTypeError` (a ``TypeError`` and a
    ``ValueError``), a value out of range a ``ValueError``.
    """
    check_int(cfg.sessions, "sessions", low=0, high=MAX_SYNC_SESSIONS)  # one sync's cap
    check_fraction(cfg.drop_replies, "drop_replies")
    check_seconds(cfg.latency, "latency")
    check_count(cfg.lose_completions, "lose_completions")
    if not isinstance(cfg.outbox, bool):  # True / False switch the default outbox on or off
        check_implements(cfg.outbox, "outbox", Outbox)
    if cfg.offline is not None:
        _offline_window(cfg.offline)
    if cfg.server_errors is not None:
        path, status = _pair(cfg.server_errors, "server_errors", "(path, HTTP status 400-599)")
        if not isinstance(path, str):
            raise ArgumentTypeError(f"server_errors path must be a string, got {path!r}")
        check_http_error(status, "server_errors status")
    if cfg.desktop_dies is not None:
        check_seconds(cfg.desktop_dies, "desktop_dies")
    if cfg.retry not in ("same-key", "new-key"):
        raise ValueError(f"retry must be 'same-key' or 'new-key', got {cfg.retry!r}")
    if cfg.strategy is not None and not callable(cfg.strategy):
        raise TypeError(
            f"strategy must be callable (attempt, elapsed) -> seconds, got {cfg.strategy!r}"
        )
    check_seconds(cfg.relay_phase, "relay_phase")
    check_seconds(cfg.poll_after, "poll_after", positive=True)
    if cfg.graph is not None and not isinstance(cfg.graph, Graph):
        raise TypeError(f"graph must be a Graph or None, got {cfg.graph!r}")
    if not isinstance(cfg.base_url, str) or not cfg.base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http(s) URL, got {cfg.base_url!r}")
    if not isinstance(cfg.direct, bool):
        raise ArgumentTypeError(f"direct must be True or False, got {cfg.direct!r}")
    if cfg.direct:
        faulty = [
            name
            for name, on in (
                ("drop_replies", cfg.drop_replies),
                ("latency", cfg.latency),
                ("server_errors", cfg.server_errors is not None),
                ("lose_completions", cfg.lose_completions),
            )
            if on
        ]
        if faulty:
            raise ValueError(
                f"direct=True skips the wire its faults act on: leave out {', '.join(faulty)}"
            )
    check_flag(cfg.patch_sleep, "patch_sleep")
    check_flag(cfg.virtual_loop, "virtual_loop")
    if cfg.stall_after is not None:
        check_seconds(cfg.stall_after, "stall_after", positive=True)
    if cfg.stall_timeout is not None:
        check_seconds(cfg.stall_timeout, "stall_timeout")
    if cfg.retention is not None and not isinstance(cfg.retention, Retention):
        raise TypeError(f"retention must be a Retention or None, got {cfg.retention!r}")
    if cfg.relay_history is not None:
        check_positive_int(cfg.relay_history, "relay_history")
    if cfg.protocol not in PROTOCOL_CHOICES:
        raise ValueError(
            f"protocol must be one of {', '.join(PROTOCOL_CHOICES)}, got {cfg.protocol!r}"
        )


#: The fields of a :class:`WorldConfig` that are faults: what ``serve``'s admin door sets
#: (``POST /_osf/faults``) and its fault flags, with the marker's meanings.
FAULT_FIELDS = (
    "drop_replies", "latency", "server_errors", "lose_completions", "offline",
    "desktop_dies", "seed",
)


def faults_config(fields: Mapping[str, Any]) -> WorldConfig:
    """``fields`` (JSON: lists for tuples) as a checked :class:`WorldConfig` of faults.

    The one validation path of the ``osf`` marker's checks: an unknown field, or one
    that is not a fault, raises ``TypeError`` naming it; a bad value raises what the
    marker raises (a ``ValueError`` or ``TypeError`` naming the field).
    """
    unknown = sorted(set(fields) - set(FAULT_FIELDS))
    if unknown:
        raise TypeError(
            f"{unknown[0]}: not a fault (accepted: {', '.join(FAULT_FIELDS)})"
        )
    options = {
        name: tuple(value) if name in ("offline", "server_errors") and isinstance(value, list)
        else value
        for name, value in fields.items()
    }
    if "seed" in options:
        check_int(options["seed"], "seed")  # JSON may send anything; the marker takes an int
    cfg = WorldConfig.from_kwargs(**options)
    _validate(cfg)
    return cfg


def agent_faults(
    cfg: WorldConfig,
    clock: Clock,
    *,
    seed: int,
    server_errors: bool = True,
    drop_replies: float | None = None,
    match: str | None = None,
) -> list[Fault]:
    """Fresh agent-side faults of ``cfg`` (server errors, latency, lost replies), in the
    order every door applies them; the lost replies seeded by ``seed``.

    ``drop_replies`` overrides the config's fraction; ``match`` (a path substring)
    limits latency and lost replies to matching requests (``serve``: the MCP endpoint).
    """
    fraction = cfg.drop_replies if drop_replies is None else drop_replies
    faults: list[Fault] = []
    if server_errors and cfg.server_errors is not None:
        path, status = cfg.server_errors
        faults.append(ServerErrors(path, status=status))
    if cfg.latency:
        faults.append(Latency(match, seconds=cfg.latency, clock=clock))
    if fraction:
        faults.append(DropReplies(match, fraction=fraction, seed=seed))
    return faults


@dataclass
class OsfWorld:
    """Clock, reference server, engine, relay and agents wired together (in-process).

    Attributes: ``clock`` (a :class:`VirtualClock`), ``server`` (the
    :class:`ReferenceServer`), ``creds`` (its :class:`Provisioned` tokens),
    ``project_id``, ``transport`` (the direct in-process transport), ``engine``,
    ``relay`` (started unless ``start_relay=False``) and ``sessions`` (what the relay
    shares, made by Faker under ``seed``).
    """

    config: WorldConfig = field(default_factory=WorldConfig)

    def __post_init__(self) -> None:
        cfg = self.config
        if not isinstance(cfg, WorldConfig):
            raise TypeError(f"config must be a WorldConfig, got {cfg!r}")
        _validate(cfg)
        self.clock = VirtualClock(cfg.start)
        self.server = ReferenceServer(
            self.clock,
            state=ServerState(
                self.clock,
                seed=cfg.seed,
                retention=cfg.retention,
                poll_after_seconds=cfg.poll_after,
            ),
            public_url=cfg.base_url + "/mcp",
            protocols=cfg.protocols,
        )
        self.creds: Provisioned = self.server.provision()
        self.project_id = self.creds.project_id
        self.base_url = cfg.base_url.rstrip("/")
        self.mcp_url = self.base_url + "/mcp"
        self.transport: Transport = DirectTransport(self.server)
        self.protocol = self._settle_protocol(cfg.protocol)
        """The revision every agent client speaks (``protocol="auto"`` settled)."""
        if cfg.server_errors is not None:
            path, status = cfg.server_errors
            self.transport = FaultyTransport(self.transport, ServerErrors(path, status=status))
        self.engine = FakeEngine(
            self.clock,
            cfg.graphs,
            default=cfg.graph if cfg.graph is not None else Graph(duration=SEED_DURATION),
            seed=cfg.seed,
            stop_latency=cfg.stop_latency,
        )
        self.sessions: list[SessionInfo] = make_sessions(cfg.sessions, seed=cfg.seed)
        self.relay = self.make_relay(
            outbox=cfg.outbox, lose_completions=cfg.lose_completions, seed=cfg.seed
        )
        self.relay.share(self.project_id, self.sessions)
        self.deaths: list[Death] = []
        """The relay's :class:`~pytest_osfoundry.faults.Death`, once ``desktop_dies`` struck."""
        if cfg.desktop_dies is not None:
            self.deaths = schedule_death(self.clock, self.relay, cfg.start + cfg.desktop_dies)
        if cfg.start_relay:
            self.relay.start(phase=cfg.relay_phase)
            if cfg.relay_phase == 0:
                self.clock.advance(0)  # the first pass shares the sessions now
        if cfg.offline is not None:
            offset, duration, mode = _offline_window(cfg.offline)
            schedule_offline(self.clock, self.relay, self.clock.now() + offset, duration, mode=mode)
        self._agents = 0

    def _settle_protocol(self, protocol: str) -> str:
        if protocol != "auto":
            return protocol
        probe = McpClient(DirectTransport(self.server), self.mcp_url, era_cache={})
        probe.connect()  # fault-free: the world's faults are for the agents' calls
        return MODERN_PROTOCOL_VERSION if probe.era == "modern" else str(probe.negotiated_version)

    # ------------------------------------------------------------------ factories
    def agent_client(
        self,
        token: str | None = None,
        *,
        drop_replies: float | None = None,
        seed: int | None = None,
        protocol: str | None = None,
    ) -> McpClient:
        """An MCP client for ``token`` (the first agent's by default) over the direct path.

        It speaks :attr:`protocol` unless told another (``"auto"`` or a revision).
        """
        faults = self._agent_faults(drop_replies, seed, server_errors=False)
        transport = FaultyTransport(self.transport, *faults) if faults else self.transport
        return McpClient(
            transport,
            self.mcp_url,
            token or self.creds.agent_token,
            protocol=self.protocol if protocol is None else protocol,
        )

    def _agent_faults(
        self, drop_replies: float | None, seed: int | None, *, server_errors: bool
    ) -> list[Fault]:
        """Fresh agent-side faults of the config: server errors, latency, lost replies.

        ``server_errors=False`` leaves out the server errors (the world's own
        transport already answers them for the kit's clients).
        """
        cfg = self.config
        fraction = cfg.drop_replies if drop_replies is None else drop_replies
        return agent_faults(
            cfg, self.clock, seed=self._seed(seed) if fraction else 0,
            server_errors=server_errors, drop_replies=fraction,
        )

    def faulty_server(self) -> ReferenceServer | FaultyHandler:
        """The server as the user's own clients should meet it: behind the agent-side
        faults of the config (the server itself when there are none)."""
        faults = self._agent_faults(None, None, server_errors=True)
        return FaultyHandler(self.server, *faults) if faults else self.server

    def make_agent(
        self,
        token: str | None = None,
        *,
        strategy: Strategy | None = None,
        retry: Retry | None = None,
        drop_replies: float | None = None,
        seed: int | None = None,
        protocol: str | None = None,
        **options: Any,
    ) -> ScriptedAgent:
        """A scripted agent (first agent's token unless given); options go to ScriptedAgent.

        ``protocol`` is its client's MCP revision (default: the world's :attr:`protocol`).
        """
        agent_seed = self._seed(seed)
        client: ToolClient
        if self.config.direct and not drop_replies:
            client = self._direct_agent(token)
        else:
            client = self.agent_client(
                token, drop_replies=drop_replies, seed=agent_seed, protocol=protocol
            )
        return ScriptedAgent(
            self.clock,
            client,
            strategy=strategy if strategy is not None else self.config.strategy,
            retry=retry if retry is not None else self.config.retry,
            seed=agent_seed,
            **options,
        )

    def _direct_agent(self, token: str | None) -> DirectToolClient:
        cred = self.server.tokens.lookup(token or self.creds.agent_token, self.clock.now())
        agent = self.server.state.agents.get(cred.principal_id) if cred is not None else None
        if agent is None:
            raise ValueError("direct=True: the token is not an agent token of this world")
        return DirectToolClient(self.server.state, agent)

    def _direct_relay(self) -> DirectRelayClient:
        cred = self.server.tokens.lookup(self.creds.desktop_token, self.clock.now())
        assert cred is not None, "the world's own desktop token is always valid"
        return DirectRelayClient(self.server.state, self.server.state.accounts[cred.principal_id])

    def relay_client(self, *faults: Fault, token: str | None = None) -> RelayClient:
        """A relay API client with the owner's desktop token, through ``faults``."""
        transport = FaultyTransport(self.transport, *faults) if faults else self.transport
        return RelayClient(transport, self.base_url, token or self.creds.desktop_token)

    def make_relay(
        self,
        *,
        outbox: Outbox | bool = True,
        lose_completions: int = 0,
        seed: int | None = None,
        interval: float | None = None,
        control_poll: float | None = None,
    ) -> FakeRelay:
        """A fake desktop relay (not started) sharing nothing yet."""
        faults: list[Fault] = []
        if lose_completions:
            faults.append(LoseRequests("/complete", count=lose_completions))
        box: Outbox | Literal[False] | None = (
            False if outbox is False else None if outbox is True else outbox
        )
        direct = self.config.direct and not faults
        api: RelayApiClient = self._direct_relay() if direct else self.relay_client(*faults)
        return FakeRelay(
            self.clock,
            api,
            self.engine,
            interval=self.config.interval if interval is None else interval,
            control_poll=self.config.control_poll if control_poll is None else control_poll,
            outbox=box,
            seed=seed,
            history=self.config.relay_history,
        )

    def _seed(self, seed: int | None) -> int:
        if seed is not None:
            return seed
        self._agents += 1
        return self.config.seed * 1_000_003 + self._agents

    # ------------------------------------------------------------------ views
    def run_view(self, command_id: str) -> dict[str, Any]:
        """The run as its agent would see it, read straight from the state."""
        return self.server.state.view(command_id)
