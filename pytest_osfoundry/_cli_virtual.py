"""``osfoundry-fake serve --virtual-clock``: the server (and ``--relay`` desktop) on a
clock that moves only when told, through the admin path
(:mod:`pytest_osfoundry.server._clock_admin`).

The fake desktop then runs inside the request that moves the clock: each relay
pass, Graph completion and control poll due on the way happens before
``POST /_osf/clock/advance`` answers, talking to the server in-process (no socket),
so a test in any language sees a 60 s Graph finish in milliseconds, deterministically.
"""

from __future__ import annotations

import secrets
from typing import Any

from pytest_osfoundry.clock import VirtualClock
from pytest_osfoundry.http import Handler
from pytest_osfoundry.server._app import ReferenceServer
from pytest_osfoundry.server._clock_admin import ClockAdmin

__all__ = ["VirtualDesktop", "admin_door", "new_admin_token"]


def new_admin_token() -> str:
    """A fresh admin token (random; printed once, in the JSON line)."""
    return "osf_admin_" + secrets.token_urlsafe(24)


class VirtualDesktop:
    """The fake desktop of ``serve --relay --virtual-clock``, on the server's clock."""

    def __init__(
        self, server: ReferenceServer, clock: VirtualClock, origin: str, desktop_token: str,
        project_id: str, args: Any,
    ) -> None:
        from pytest_osfoundry.client._relay_client import RelayClient
        from pytest_osfoundry.client._transport import DirectTransport
        from pytest_osfoundry.engine._fake_engine import FakeEngine
        from pytest_osfoundry.engine._graph import served_graph
        from pytest_osfoundry.engine._sessions import make_sessions
        from pytest_osfoundry.relay._desktop import FakeRelay
        from pytest_osfoundry.relay._outbox import MemoryOutbox

        self.clock = clock
        client = RelayClient(DirectTransport(server), origin, desktop_token)
        sessions = make_sessions(args.sessions, seed=0)
        self.sessions = [s.to_dict() for s in sessions]
        engine = FakeEngine(clock, default=served_graph(args.graph_duration), seed=0)
        self.relay = FakeRelay(
            clock,
            client,
            engine,
            interval=args.interval,
            outbox=MemoryOutbox(),
            seed=0,
            history=args.relay_history,
        )
        self.relay.share(project_id, sessions)

    def start(self) -> bool:
        """Start the relay; its first pass (the sync) runs now. Whether it synced."""
        self.relay.start()
        self.clock.advance(0)
        return any(event.kind == "synced" for event in self.relay.events)

    def stop(self) -> None:
        """Stop the relay's passes."""
        self.relay.stop()

    def idle(self) -> bool:
        """Nothing left in flight: no completion waits in the outbox."""
        outbox = self.relay.outbox
        return outbox is None or not outbox.items()


def admin_door(
    handler: Handler, server: ReferenceServer, clock: VirtualClock, admin_token: str,
    desktop: VirtualDesktop | None,
) -> ClockAdmin:
    """``handler`` behind the clock's admin path; idle means no run queued or running
    (and, with the desktop, no completion waiting to be delivered)."""

    def idle() -> bool:
        counts = server.state.counts()
        busy = counts["queued"] or counts["running"]
        return not busy and (desktop is None or desktop.idle())

    return ClockAdmin(handler, clock, admin_token, idle, mask=server.tokens.mask)
