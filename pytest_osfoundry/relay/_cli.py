"""``osfoundry-fake relay``: the fake desktop relay on real time, against any server.

It shares N generated sessions with one project, prints one JSON line
``{"sessions": [...], "project_id": ...}`` once its first sync succeeded, logs each
pass and command to stderr (never a token), and stops cleanly on SIGINT/SIGTERM: an
event under way finishes, and every completion not yet delivered stays in the
outbox (``--outbox PATH`` keeps it across restarts).
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from pytest_osfoundry._cli_types import positive_int, positive_seconds, session_count
from pytest_osfoundry._masking import (
    mask_token,
    mask_url,
    mask_url_credentials,
    secrets_in,
)
from pytest_osfoundry.client import HttpStatusError, HttpTransport, OsfClientError, RelayClient
from pytest_osfoundry.clock import RealClock
from pytest_osfoundry.engine import FakeEngine, Fixed, Graph, make_sessions
from pytest_osfoundry.relay._desktop import DEFAULT_HISTORY, FakeRelay, RelayEvent
from pytest_osfoundry.relay._outbox import FileOutbox, MemoryOutbox, Outbox

__all__ = [
    "MaskingFilter",
    "add_relay_parser",
    "first_sync_problem",
    "log_to_stderr",
    "run_relay",
]


def add_relay_parser(sub: Any) -> None:
    """Add the ``relay`` sub-command to ``osfoundry-fake``'s parser."""
    p = sub.add_parser(
        "relay",
        help="run the fake desktop relay on real time against a server",
        description="Run the fake desktop relay against any server: share N generated "
        "sessions with a project, pull and run commands on a fake Graph engine, post "
        "bounded completions. Prints one JSON line once the first sync succeeded.",
    )
    p.add_argument(
        "--relay-url", required=True, help="the relay API base URL (the server's origin)"
    )
    p.add_argument("--desktop-token", required=True, help="the owner's desktop token")
    p.add_argument("--project-id", required=True, help="the project to share sessions with")
    p.add_argument(
        "--sessions", type=session_count, default=3, help="sessions to share (default 3)"
    )
    p.add_argument(
        "--interval", type=positive_seconds, default=20.0, help="seconds between passes (20)"
    )
    p.add_argument(
        "--control-poll", type=positive_seconds, default=3.0, help="control poll seconds (3)"
    )
    p.add_argument(
        "--graph-duration",
        type=positive_seconds,
        default=5.0,
        help="seconds each fake Graph runs (default 5)",
    )
    p.add_argument(
        "--outbox", metavar="PATH", help="keep the outbox in this file (default: memory)"
    )
    p.add_argument(
        "--history",
        type=positive_int,
        default=DEFAULT_HISTORY,
        metavar="N",
        help="passes, events and executed command ids kept of each, the newest (default "
        "10000): a relay running for weeks holds a fixed amount",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="make execution ids and the fake engine repeatable (default: random ids, "
        "so they never repeat across restarts); the shared sessions are the same either way",
    )
    p.set_defaults(func=run_relay)


class MaskingFilter(logging.Filter):
    """Passes every record a handler prints through ``mask``: its message and, when it
    carries one, its exception's traceback (formatted here, then masked)."""

    def __init__(self, mask: Callable[[str], str]) -> None:
        super().__init__()
        self.mask = mask

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.mask(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.mask(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = self.mask(record.exc_text)
        if record.stack_info:
            record.stack_info = self.mask(record.stack_info)
        return True


def _masked(text: str, secrets: list[str]) -> str:
    return mask_token(mask_url_credentials(text), secrets)


def log_to_stderr(secrets: list[str]) -> None:
    """The relay's own lines on stderr, masked."""
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name("osfoundry-relay")
    handler.setFormatter(logging.Formatter("%(asctime)s relay %(message)s"))
    handler.addFilter(MaskingFilter(lambda text: _masked(text, secrets)))
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "osfoundry-relay"]:
        root.removeHandler(old)  # run_relay called again in one process
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def first_sync_problem(error: OsfClientError, relay_url: str) -> str:
    """The line that says why the first sync failed, decided by the error's type.

    An :class:`~pytest_osfoundry.client.HttpStatusError` means the server answered and
    refused (a wrong token, say: the line shows its status); anything else (no reply,
    a reply that is not the relay API's) means the relay could not sync with it.
    URL credentials are masked; the caller masks tokens.
    """
    if isinstance(error, HttpStatusError):
        return f"the first sync was refused: {error}"
    return f"cannot sync with {mask_url(relay_url)}: {error}"


def run_relay(args: argparse.Namespace) -> int:
    """Run the relay until SIGINT/SIGTERM; returns the exit status."""
    secrets = [args.desktop_token, *secrets_in(args.relay_url)]
    log_to_stderr(secrets)

    def say(line: str) -> None:
        print(f"osfoundry-fake relay: {_masked(line, secrets)}", file=sys.stderr)

    try:
        outbox: Outbox = FileOutbox(args.outbox) if args.outbox else MemoryOutbox()
    except ValueError as err:
        say(str(err))
        return 2
    clock = RealClock()
    transport = HttpTransport(timeout=10.0)
    client = RelayClient(transport, args.relay_url, args.desktop_token)
    sessions = make_sessions(args.sessions, seed=0 if args.seed is None else args.seed)
    shared = [s.to_dict() for s in sessions]
    engine = FakeEngine(clock, default=Graph(duration=Fixed(args.graph_duration)), seed=args.seed)
    relay = FakeRelay(
        clock,
        client,
        engine,
        interval=args.interval,
        control_poll=args.control_poll,
        outbox=outbox,
        seed=args.seed,
        history=args.history,
    )
    relay.share(args.project_id, sessions)
    # The relay's own first pass is the first sync (one sync at start, not two): the JSON
    # line is printed once it succeeded; a failed first sync ends the command.
    first_sync: list[OsfClientError | None] = []

    def on_first_sync(event: RelayEvent) -> None:
        if first_sync or event.kind not in ("synced", "sync-failed"):
            return
        if event.kind == "synced":
            first_sync.append(None)
            sys.stdout.write(json.dumps({"project_id": args.project_id, "sessions": shared}) + "\n")
            sys.stdout.flush()
        else:
            failure = event.error
            first_sync.append(failure if failure is not None else OsfClientError(event.detail))
            clock.stop()

    relay.on_event(on_first_sync)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        clock.stop()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    def log_pass(event: RelayEvent) -> None:
        if event.kind == "synced":
            logging.getLogger("pytest_osfoundry.relay").debug("pass %s", event.detail)

    relay.on_event(log_pass)
    relay.start()
    try:
        clock.run()
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # run_relay called in-process leaves no handler behind
                signal.signal(sig, handler)
        relay.stop()
        transport.close()
        pending = len(outbox.items())
        if not (first_sync and first_sync[0] is not None):
            print(f"relay stopped; {pending} completion(s) wait in the outbox", file=sys.stderr)
    problem = first_sync[0] if first_sync else None
    if problem is not None:
        say(first_sync_problem(problem, args.relay_url))
        return 2
    return 0
