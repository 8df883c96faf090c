"""``osfoundry-fake``: the reference server and the fake desktop relay as programs.

``osfoundry-fake serve`` starts the reference server on loopback with one owner,
project, desktop and agents provisioned, and a second account (the *stranger*: an
agent, a desktop and a project of its own), prints exactly one JSON line describing
it (``mcp_url``, ``relay_url``, the project ids and every token: the names match the
suite's ``--osf-...`` options) and serves until SIGINT or SIGTERM. With ``--relay``
it also runs the fake desktop in the same process on real time, sharing
``--sessions`` generated sessions (listed in the JSON line as ``sessions``) and
running each queued command on a fake Graph of ``--graph-duration`` seconds, so one
command gives a complete round trip for an agent written in any language. With
``--virtual-clock`` time moves only when told, over the admin path
(:mod:`pytest_osfoundry.server._clock_admin`), and the ``--relay`` desktop runs on
that clock in-process: the JSON line adds ``clock`` and ``admin_url``. The fault flags
set the world's faults at start, with the ``osf`` marker's meanings and checks
(:class:`~pytest_osfoundry._serve_faults.ServeFaults`); with ``--virtual-clock``
or ``--admin-token`` the admin door also sets them later (``POST /_osf/faults``), and
the JSON line adds ``admin_token`` and ``faults_url`` (a plain ``serve``'s line is
the suite's ``--osf-...`` options only).
With ``--accounts N`` it also provisions N load accounts (a project, a desktop and
``--agents-per-account`` agents each) and writes their credentials to an accounts
file for ``osfoundry-load --target`` (mode 0600; the JSON line names it as
``accounts_file`` and never prints those tokens).
``osfoundry-fake relay`` runs the fake desktop relay alone, against any server (see
:mod:`pytest_osfoundry.relay._cli`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import signal
import sys
import tempfile
import threading
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

from pytest_osfoundry._cli_types import (
    bounded_seconds,
    mcp_path,
    number,
    port,
    positive_int,
    positive_seconds,
    seconds_at_least,
    session_count,
    whole_at_least,
    worker_count,
)
from pytest_osfoundry._origin import origin_of
from pytest_osfoundry._serve_faults import ServeFaults
from pytest_osfoundry._vocabulary import RESULT_LIMIT
from pytest_osfoundry.clock import Clock, RealClock, VirtualClock
from pytest_osfoundry.doors._internal import MAX_LATENCY
from pytest_osfoundry.faults import FaultyHandler, FaultyTransport
from pytest_osfoundry.http import Handler
from pytest_osfoundry.load import Account, Target, write_target
from pytest_osfoundry.relay._internal import DEFAULT_HISTORY
from pytest_osfoundry.server import LoopbackServer, ReferenceServer, Retention
from pytest_osfoundry.server._internal import (
    KEY_SECONDS_MIN,
    ClockAdmin,
    OriginPolicy,
    normalize_protocols,
)

if TYPE_CHECKING:
    from pytest_osfoundry.client import RelayApiClient
    from pytest_osfoundry.relay import FakeRelay, RelayEvent

__all__ = ["build_parser", "main"]

#: Seconds ``serve --relay`` waits for the desktop's first sync before giving up.
_FIRST_SYNC_TIMEOUT = 15.0


def _fake_desktop(
    clock: Clock, client: RelayApiClient, project_id: str, args: Any, *, seed: int | None = None
) -> tuple[FakeRelay, list[dict[str, Any]]]:
    """The fake desktop of ``serve --relay`` on ``clock``, not started: a FakeRelay sharing
    ``--sessions`` generated sessions, each command a Graph of ``--graph-duration``
    seconds; and the sessions as the JSON line lists them. ``seed``: its execution ids."""
    from pytest_osfoundry.engine import FakeEngine, make_sessions, served_graph
    from pytest_osfoundry.relay import FakeRelay, MemoryOutbox

    sessions = make_sessions(args.sessions, seed=0)
    engine = FakeEngine(clock, default=served_graph(args.graph_duration))
    relay = FakeRelay(
        clock,
        client,
        engine,
        interval=args.interval,
        outbox=MemoryOutbox(),
        seed=seed,
        history=args.relay_history,
    )
    relay.share(project_id, sessions)
    return relay, [s.to_dict() for s in sessions]


class _Desktop:
    """The fake desktop of ``serve --relay``: on real time, in a thread, over HTTP."""

    def __init__(self, origin: str, desktop_token: str, project_id: str, args: Any) -> None:
        from pytest_osfoundry.client import HttpTransport, RelayClient

        self.clock = RealClock()
        self.transport = HttpTransport(timeout=10.0)
        client = RelayClient(self.transport, origin, desktop_token)
        self.relay, self.sessions = _fake_desktop(self.clock, client, project_id, args)
        self.synced = threading.Event()

        def on_event(event: RelayEvent) -> None:
            if event.kind == "synced":
                self.synced.set()

        self.relay.on_event(on_event)
        self.thread = threading.Thread(target=self.clock.run, name="osf-fake-desktop", daemon=True)

    def start(self) -> bool:
        """Start polling; whether the first sync succeeded in time."""
        self.relay.start()
        self.thread.start()
        return self.synced.wait(_FIRST_SYNC_TIMEOUT)

    def stop(self) -> None:
        """Stop polling and the clock, and close the HTTP client."""
        self.relay.stop()
        self.clock.stop()
        self.thread.join(timeout=10.0)
        self.transport.close()


def provision_accounts(server: ReferenceServer, count: int, agents: int) -> list[Account]:
    """``count`` load accounts: each an owner with a project, a desktop and ``agents``
    agents connected to it with ``osfoundry:read osfoundry:run``."""
    from pytest_osfoundry._vocabulary import READ_SCOPE, RUN_SCOPE

    made = []
    st = server.state
    for _ in range(count):
        owner = st.add_account()
        project = st.add_project(owner.account_id)
        desktop = server.tokens.issue("desktop", owner.account_id)
        owner.desktop_tokens.add(desktop)
        tokens = tuple(
            server.tokens.issue(
                "agent",
                st.add_agent(owner.account_id, [project.project_id], (READ_SCOPE, RUN_SCOPE))
                .agent_id,
            )
            for _ in range(agents)
        )
        made.append(Account(project.project_id, desktop, tokens))
    return made


def _accounts_path(given: str | None) -> str:
    """Where the accounts file goes: ``given``, or a new file in a private temp folder."""
    if given:
        return given
    folder = tempfile.mkdtemp(prefix="osfoundry-accounts-")
    return os.path.join(folder, "accounts.json")


def _log_refusals(server: ReferenceServer) -> None:
    """Print the server's warnings (a request refused for breaking MCP's schema) on
    stderr, one line each, so an agent author sees their bug where the server runs.

    Every line passes through the server's token mask on its way out (the server masks
    what it echoes already; this covers any other line on its logger, a traceback too).
    """
    from pytest_osfoundry.relay._internal import MaskingFilter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("osfoundry-fake serve: %(message)s"))
    handler.addFilter(MaskingFilter(server.tokens.mask))
    log = logging.getLogger("pytest_osfoundry.server")
    log.addHandler(handler)
    log.setLevel(logging.WARNING)


def _serve(args: argparse.Namespace) -> int:
    try:
        protocols = normalize_protocols(args.protocol)
        origins = OriginPolicy(args.allow_origin or ())
        if args.public_url is not None:
            origin_of(args.public_url)
    except ValueError as err:
        print(f"osfoundry-fake serve: {err}", file=sys.stderr)
        return 2
    if args.admin_token is not None and len(args.admin_token) < 16:
        print("osfoundry-fake serve: --admin-token: at least 16 characters", file=sys.stderr)
        return 2
    clock: Clock = VirtualClock() if args.virtual_clock else RealClock()
    try:
        server = ReferenceServer(
            clock,
            mcp_path=args.mcp_path,
            public_url=args.public_url,
            protocols=protocols,
            allow_origins=origins.extra,
            retention=Retention(args.keep_runs, args.keep_chars, args.keep_keys),
        )
    except ValueError as err:
        print(f"osfoundry-fake serve: --mcp-path: {err}", file=sys.stderr)
        return 2
    _log_refusals(server)
    try:
        info = server.provision(
            project_id=args.project_id,
            agent_token=args.agent_token,
            other_agent_token=args.other_agent_token,
            read_token=args.read_token,
            desktop_token=args.desktop_token,
        )
    except ValueError as err:
        print(f"osfoundry-fake serve: {err}", file=sys.stderr)
        return 2
    accounts = provision_accounts(server, args.accounts, args.agents_per_account)
    try:
        handler, faults, virtual = _admin_door(server, clock, info, args)
    except (TypeError, ValueError) as err:
        print(f"osfoundry-fake serve: fault flags: {err}", file=sys.stderr)
        return 2
    if handler is None:
        print("osfoundry-fake serve: the fake desktop's first sync failed", file=sys.stderr)
        return 1
    try:
        loop = LoopbackServer(
            handler, host=args.host, port=args.port, workers=args.workers, delay=faults.delay
        )
    except (OSError, ValueError) as err:
        print(
            f"osfoundry-fake serve: cannot listen on {args.host}:{args.port}: {err}",
            file=sys.stderr,
        )
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    line: dict[str, Any] = {
        "mcp_url": loop.origin + args.mcp_path,
        "relay_url": loop.origin,
        "project_id": info.project_id,
        "agent_token": info.agent_token,
        "other_agent_token": info.other_agent_token,
        "read_token": info.read_token,
        "desktop_token": info.desktop_token,
        "stranger_token": info.stranger_token,
        "stranger_desktop_token": info.stranger_desktop_token,
        "stranger_project_id": info.stranger_project_id,
    }
    if isinstance(handler, ClockAdmin):
        line["admin_token"] = handler.admin_token
        line["faults_url"] = loop.origin + "/_osf/faults"
    if virtual:
        line["clock"] = "virtual"
        line["admin_url"] = loop.origin + "/_osf/clock"
        if "sessions" in virtual:
            line["sessions"] = virtual["sessions"]
    if accounts:
        path = _accounts_path(args.accounts_file)
        try:
            write_target(path, Target(loop.origin + args.mcp_path, loop.origin, tuple(accounts)))
        except OSError as err:
            loop.close()
            print(f"osfoundry-fake serve: cannot write the accounts file {path}: {err}",
                  file=sys.stderr)
            return 2
        line["accounts_file"] = os.path.abspath(path)
        line["accounts"] = len(accounts)
    desktop: _Desktop | None = None
    if args.relay and not virtual:
        desktop = _Desktop(loop.origin, info.desktop_token, info.project_id, args)
        if not desktop.start():
            desktop.stop()
            loop.close()
            print("osfoundry-fake serve: the fake desktop's first sync failed", file=sys.stderr)
            return 1
        line["sessions"] = desktop.sessions
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        if desktop is not None:
            desktop.stop()
        loop.close()
    return 0


def _admin_door(
    server: ReferenceServer, clock: Clock, info: Any, args: Any
) -> tuple[Handler | None, ServeFaults, dict[str, Any]]:
    """The handler ``serve`` serves: the server behind the world's faults (set from the
    fault flags) behind the admin door (a :class:`ClockAdmin`, open with
    ``--virtual-clock`` or ``--admin-token``); the faults (whose ``delay`` the loopback
    door waits out: ``--latency`` and real time's ``latency``); and what
    ``_virtual_clock`` adds on the virtual clock. ``None`` when the ``--relay``
    desktop's first sync failed; a bad fault flag raises what ``POST /_osf/faults``
    answers 400 with."""
    door = FaultyHandler(server)
    virtual: dict[str, Any] = {}
    if isinstance(clock, VirtualClock):
        virtual = _virtual_clock(server, clock, info, args)
    faults = ServeFaults(
        clock, door, args.mcp_path, desktop=virtual.get("desktop"), relay=virtual.get("relay"),
        latency=args.latency,
    )
    if isinstance(clock, VirtualClock) and not virtual:
        return None, faults, {}
    faults.set(_fault_flags(args))
    if not virtual and args.admin_token is None:
        return door, faults, virtual  # no admin door: the JSON line stays the suite's options
    token = args.admin_token or "osf_admin_" + secrets.token_urlsafe(24)
    server.tokens.hide(token)  # masked wherever the server masks the tokens it issued
    admin = ClockAdmin(
        door, clock if isinstance(clock, VirtualClock) else None, token,
        virtual.get("idle", _never_busy), mask=server.tokens.mask, faults=faults,
    )
    return admin, faults, virtual


def _virtual_clock(
    server: ReferenceServer, clock: VirtualClock, info: Any, args: Any
) -> dict[str, Any]:
    """The ``--relay`` desktop on ``clock`` and what the admin door needs of it: ``idle``,
    and with ``--relay`` the ``relay``, its ``desktop`` transport (where
    ``lose_completions`` acts) and its ``sessions``; empty when its first sync failed.

    The desktop then runs inside the request that moves the clock: each relay pass,
    Graph completion and control poll due on the way happens before
    ``POST /_osf/clock/advance`` answers, talking to the server in-process (no
    socket), so a test in any language sees a 60 s Graph finish in milliseconds,
    deterministically. Idle (``run-until-idle``) is no run queued or running and no
    completion waiting in the desktop's outbox.
    """
    from pytest_osfoundry.client import DirectTransport, RelayClient

    extra: dict[str, Any] = {}
    relay: FakeRelay | None = None
    if args.relay:
        transport = FaultyTransport(DirectTransport(server))
        client = RelayClient(transport, "http://127.0.0.1", info.desktop_token)
        relay, extra["sessions"] = _fake_desktop(clock, client, info.project_id, args, seed=0)
        relay.start()  # its first pass, the sync, runs now
        clock.advance(0)
        if not any(event.kind == "synced" for event in relay.events):
            return {}
        extra["relay"], extra["desktop"] = relay, transport

    def idle() -> bool:
        counts = server.state.counts()
        busy = counts["queued"] or counts["running"]
        outbox = relay.outbox if relay is not None else None
        return not busy and (outbox is None or not outbox.items())

    extra["idle"] = idle
    return extra


def _never_busy() -> bool:
    return True


def _fault_flags(args: Any) -> dict[str, Any]:
    """The fault flags given, as ``POST /_osf/faults`` fields (checked there)."""
    fields: dict[str, Any] = {}
    for name in ("drop_replies", "lose_completions", "desktop_dies", "seed"):
        value = getattr(args, "fault_seed" if name == "seed" else name)
        if value is not None:
            fields[name] = value
    if args.server_errors is not None:
        path, _, status = args.server_errors.rpartition(":")
        fields["server_errors"] = [path, int(status) if status.isdigit() else status]
    if args.offline is not None:
        parts = args.offline.split(":")
        fields["offline"] = [_number(p) for p in parts[:2]] + parts[2:]
    return fields


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text  # the marker's check names it


def build_parser() -> argparse.ArgumentParser:
    """The ``osfoundry-fake`` argument parser (``serve`` and ``relay``)."""
    parser = argparse.ArgumentParser(
        prog="osfoundry-fake",
        description="Run the pytest-osfoundry reference server or fake desktop relay.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = sub.add_parser(
        "serve",
        help="start the reference server on loopback and print one JSON line",
        description="Start the reference server with one owner, project, desktop and three "
        "agents, and a second account (stranger agent, desktop and project); print one JSON "
        "line (mcp_url, relay_url, project_id, agent_token, other_agent_token, read_token, "
        "desktop_token, stranger_token, stranger_desktop_token, stranger_project_id; with "
        "--relay also sessions) and serve until SIGINT/SIGTERM.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=port, default=0, help="port (default 0: a free one)")
    serve.add_argument(
        "--mcp-path", type=mcp_path, default="/mcp", help="path of the MCP endpoint (default /mcp)"
    )
    serve.add_argument("--project-id", help="fix the project id (default: random)")
    serve.add_argument(
        "--latency",
        type=bounded_seconds(MAX_LATENCY),
        default=0.0,
        metavar="SECONDS",
        help="delay every answer by SECONDS (default 0), like a server a round trip away "
        "(each request waits at the door, holding no worker thread; the admin door's do not "
        "wait)",
    )
    serve.add_argument(
        "--workers",
        type=worker_count,
        default=16,
        metavar="N",
        help="threads answering requests (default 16); a request delayed by --latency or the "
        "latency fault waits without one, so N bounds only the requests being answered",
    )
    for role in ("agent", "other-agent", "read", "desktop"):
        serve.add_argument(f"--{role}-token", help=f"fix the {role} token (default: random)")
    serve.add_argument(
        "--relay",
        action="store_true",
        help="also run the fake desktop in this process on real time, so queued runs get "
        "picked up, run and completed",
    )
    serve.add_argument(
        "--virtual-clock",
        action="store_true",
        help="time moves only when told: POST /_osf/clock/advance {\"seconds\": 20} or "
        "/_osf/clock/run-until-idle with the admin token (admin_url, admin_token in the "
        "JSON line); with --relay the desktop runs on that clock",
    )
    serve.add_argument(
        "--admin-token", help="fix the admin token, which opens /_osf/ (with --virtual-clock "
        "default: random); on real time it opens the faults' admin door"
    )
    faults = serve.add_argument_group(
        "faults", "the osf marker's faults at start (POST /_osf/faults changes them later); "
        "the desktop's need --virtual-clock --relay",
    )
    faults.add_argument("--drop-replies", type=number, metavar="FRACTION",
                        help="lose this seeded fraction of the replies to agents' MCP calls")
    faults.add_argument("--server-errors", metavar="PATH:STATUS",
                        help="answer requests whose path contains PATH with STATUS (400-599)")
    faults.add_argument("--lose-completions", type=int, metavar="N",
                        help="the desktop's next N completion POSTs never reach the server")
    faults.add_argument("--offline", metavar="OFFSET:DURATION[:MODE]",
                        help="the desktop offline from OFFSET s for DURATION s (MODE: asleep "
                        "or network)")
    faults.add_argument("--desktop-dies", type=number, metavar="SECONDS",
                        help="the desktop's process dies SECONDS after the start")
    faults.add_argument("--fault-seed", type=int, metavar="N",
                        help="the seed of the lost replies (default 0)")
    serve.add_argument(
        "--interval",
        type=positive_seconds,
        default=20.0,
        help="with --relay: seconds between passes (20)",
    )
    serve.add_argument(
        "--graph-duration",
        type=positive_seconds,
        default=5.0,
        help="with --relay: seconds each fake Graph runs (default 5)",
    )
    serve.add_argument(
        "--sessions",
        type=session_count,
        default=3,
        help="with --relay: sessions the desktop shares (default 3)",
    )
    serve.add_argument(
        "--relay-history",
        type=positive_int,
        default=DEFAULT_HISTORY,
        metavar="N",
        help="with --relay: passes, events and executed command ids the desktop keeps of "
        "each, the newest (default 10000)",
    )
    serve.add_argument(
        "--keep-runs",
        type=positive_int,
        default=Retention.finished_runs,
        metavar="N",
        help="terminal runs the server keeps, the most recently finished (default 10000); "
        "a forgotten run answers as an unknown id",
    )
    serve.add_argument(
        "--keep-chars",
        type=whole_at_least(RESULT_LIMIT, "one completion at its bound"),
        default=Retention.finished_chars,
        metavar="N",
        help="what the kept terminal runs' completions may weigh in all, in characters as "
        "JSON.stringify counts them (default 50000000)",
    )
    serve.add_argument(
        "--keep-keys",
        type=seconds_at_least(KEY_SECONDS_MIN, "R5: 24 hours"),
        default=Retention.key_seconds,
        metavar="SECONDS",
        help="seconds an idempotency key is remembered after its run was queued (default "
        "86400, the least R5 allows)",
    )
    serve.add_argument(
        "--accounts",
        type=whole_at_least(0),
        default=0,
        metavar="N",
        help="also provision N load accounts (a project, a desktop and --agents-per-account "
        "agents each) and write their credentials to --accounts-file for osfoundry-load "
        "--target (default 0)",
    )
    serve.add_argument(
        "--agents-per-account",
        type=positive_int,
        default=2,
        metavar="A",
        help="with --accounts: agents of each account (default 2)",
    )
    serve.add_argument(
        "--accounts-file",
        metavar="PATH",
        help="with --accounts: where to write the credentials (mode 0600; default: a new "
        "file in a private temporary folder); the JSON line names it, never the tokens",
    )
    serve.add_argument(
        "--protocol",
        action="append",
        metavar="REVISION",
        help="serve only this MCP revision (repeatable; 2026-07-28, 2025-11-25, 2025-06-18; "
        "default: all three)",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="also allow browser requests from this Origin (repeatable; loopback origins "
        "and the server's own are always allowed)",
    )
    serve.add_argument(
        "--public-url",
        metavar="URL",
        help="the MCP URL named in OAuth metadata and challenges (default: the bound address)",
    )
    serve.set_defaults(func=_serve)
    from pytest_osfoundry.relay._internal import add_relay_parser

    add_relay_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``osfoundry-fake``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result
