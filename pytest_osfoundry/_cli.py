"""``osfoundry-fake``: the reference server and the fake desktop relay as programs.

``osfoundry-fake serve`` starts the reference server on loopback with one owner,
project, desktop and agents provisioned, prints exactly one JSON line describing it
(``mcp_url``, ``relay_url``, ``project_id`` and the tokens) and serves until SIGINT
or SIGTERM. ``osfoundry-fake relay`` runs the fake desktop relay on real time against
any server (see :mod:`pytest_osfoundry.relay._cli`).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from pytest_osfoundry.clock import RealClock
from pytest_osfoundry.server import Delayed, LoopbackServer, ReferenceServer
from pytest_osfoundry.server._latency import check_latency

__all__ = ["main"]


def _serve(args: argparse.Namespace) -> int:
    server = ReferenceServer(RealClock(), mcp_path=args.mcp_path)
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
    try:
        handler = Delayed(server, args.latency) if args.latency else server
        loop = LoopbackServer(handler, host=args.host, port=args.port)
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
    line = {
        "mcp_url": loop.origin + args.mcp_path,
        "relay_url": loop.origin,
        "project_id": info.project_id,
        "agent_token": info.agent_token,
        "other_agent_token": info.other_agent_token,
        "read_token": info.read_token,
        "desktop_token": info.desktop_token,
    }
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        loop.close()
    return 0


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {port}")
    return port


def _latency(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    try:
        return check_latency(seconds)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


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
        "agents; print one JSON line (mcp_url, relay_url, project_id, agent_token, "
        "other_agent_token, read_token, desktop_token) and serve until SIGINT/SIGTERM.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=0, help="port (default 0: a free one)")
    serve.add_argument("--mcp-path", default="/mcp", help="path of the MCP endpoint (default /mcp)")
    serve.add_argument("--project-id", help="fix the project id (default: random)")
    serve.add_argument(
        "--latency",
        type=_latency,
        default=0.0,
        metavar="SECONDS",
        help="delay every answer by SECONDS (default 0), like a server a round trip away",
    )
    for role in ("agent", "other-agent", "read", "desktop"):
        serve.add_argument(f"--{role}-token", help=f"fix the {role} token (default: random)")
    serve.set_defaults(func=_serve)
    try:
        from pytest_osfoundry.relay._cli import add_relay_parser
    except ImportError:  # pragma: no cover - the relay ships with the package
        pass
    else:
        add_relay_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``osfoundry-fake``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result
