"""The kit's fake relay as a relay under test: ``python -m pytest_osfoundry.relay.driven``.

This is the adapter the relay suite runs for ``--osf-relay-command=embedded``, and a
command a user can copy. It reads the driver contract's environment
(``docs/relay-conformance.md``) and wires :class:`~pytest_osfoundry.relay.FakeRelay`
to its three seams, with no other change to the relay:

1. timing from ``OSF_RELAY_INTERVAL`` / ``OSF_RELAY_CONTROL_POLL`` (20 s and 3 s when unset);
2. sharing from ``GET {driver}/sharing``, read at the start of every pass and just
   before every command (the D13 re-check), with a thread waiting on ``?after=n``
   that starts a pass at once when sharing changes;
3. a Graph engine that asks ``POST {driver}/runs`` and ``/runs/{id}/cancel``.

The outbox is a :class:`~pytest_osfoundry.relay.FileOutbox` in ``OSF_RELAY_STATE_DIR``.
Lines on stderr never carry the token. SIGTERM/SIGINT stop it; the outbox stays.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType
from typing import Any

from pytest_osfoundry._masking import mask_token
from pytest_osfoundry._vocabulary import CONTROL_POLL_SECONDS, RELAY_INTERVAL_SECONDS
from pytest_osfoundry.client import HttpTransport, OsfClientError, RelayClient
from pytest_osfoundry.clock import ProcessGen, RealClock
from pytest_osfoundry.relay._cli import log_to_stderr
from pytest_osfoundry.relay._desktop import (
    FakeRelay,
    PassRecord,
    ProjectShare,
    session_dict,
    start_unanswered,
    token_refused,
)
from pytest_osfoundry.relay._driver_seams import (
    DriverClient,
    DriverEngine,
    DriverError,
    watch_sharing,
)
from pytest_osfoundry.relay._outbox import FileOutbox, Outbox

__all__ = [
    "START_ATTEMPTS",
    "DrivenRelay",
    "EnvError",
    "StartRetrying",
    "main",
    "read_env",
    "shares_from",
]

REQUIRED = ("OSF_RELAY_URL", "OSF_DESKTOP_TOKEN", "OSF_RELAY_DRIVER", "OSF_RELAY_STATE_DIR")
log = logging.getLogger("pytest_osfoundry.relay.driven")

START_ATTEMPTS = 3
"""R14: how many times in a row a pass sends a start that has no answer."""


class EnvError(ValueError):
    """The contract's environment is missing or malformed (the message names the variable)."""


def read_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """The contract's variables, checked: required ones present, timings positive numbers."""
    values: dict[str, Any] = {}
    for name in REQUIRED:
        value = environ.get(name, "").strip()
        if not value:
            raise EnvError(f"{name} is not set (the relay suite sets it)")
        values[name] = value
    for name, default in (
        ("OSF_RELAY_INTERVAL", RELAY_INTERVAL_SECONDS),
        ("OSF_RELAY_CONTROL_POLL", CONTROL_POLL_SECONDS),
    ):
        raw = environ.get(name)
        if raw is None or raw.strip() == "":
            values[name] = float(default)
            continue
        try:
            seconds = float(raw)
        except ValueError:
            raise EnvError(f"{name} must be a number of seconds, got {raw!r}") from None
        if not seconds > 0:
            raise EnvError(f"{name} must be positive, got {raw!r}")
        values[name] = seconds
    values["OSF_RELAY_SCENARIO"] = environ.get("OSF_RELAY_SCENARIO", "")
    return values


def shares_from(sharing: Mapping[str, Any]) -> dict[str, ProjectShare]:
    """The relay's sharing settings from a driver answer: ticked sessions only, in order."""
    shares: dict[str, ProjectShare] = {}
    for project in sharing.get("projects", []):
        if not isinstance(project, Mapping) or not isinstance(project.get("project_id"), str):
            raise DriverError(f"a sharing project needs a project_id: {str(project)[:200]}")
        share = ProjectShare(enabled=bool(project.get("enabled")))
        for session in project.get("sessions", []):
            if isinstance(session, Mapping) and session.get("ticked"):
                data = session_dict({k: v for k, v in session.items() if k != "ticked"})
                share.sessions[data["graph_session_id"]] = data
        shares[project["project_id"]] = share
    return shares


class StartRetrying:
    """A relay client whose start is sent again at once, same execution id, while it has
    no answer (no reply, a 5xx), up to ``attempts`` times in all.

    R14 from the relay's side: the server may have applied a start whose answer never
    came back; asking again is safe (it answers ``running`` again). A refused token is
    not retried (R15). When every try of a pass is lost, the relay keeps the start and
    asks again next pass (:class:`~pytest_osfoundry.relay.FakeRelay`). Every other call
    is the inner client's.
    """

    def __init__(self, inner: RelayClient, attempts: int = START_ATTEMPTS) -> None:
        self.inner = inner
        self.attempts = attempts

    def sync(self, project_id: str, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """As the inner client."""
        return self.inner.sync(project_id, sessions)

    def start(self, command_id: str, execution_id: str) -> str:
        """The inner start, asked again (up to ``attempts`` in all) while it has no answer."""
        for _ in range(self.attempts - 1):
            try:
                return self.inner.start(command_id, execution_id)
            except OsfClientError as err:
                if not start_unanswered(err) or token_refused(err):
                    raise
                log.info("start-unanswered %s %s: asking again", command_id, err)
        return self.inner.start(command_id, execution_id)

    def control(self, command_id: str) -> dict[str, Any]:
        """As the inner client."""
        return self.inner.control(command_id)

    def complete(self, command_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """As the inner client."""
        return self.inner.complete(command_id, body)


class DrivenRelay(FakeRelay):
    """:class:`FakeRelay` whose sharing settings are the driver's, read when consulted.

    A pass reads them first; a command re-reads them just before its re-check. When
    the driver cannot be read, the command waits for the next pass (nothing is lost).
    """

    def __init__(self, *args: Any, driver: DriverClient, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.driver = driver

    def refresh(self) -> bool:
        """Read the sharing settings from the driver; False (settings kept) on failure."""
        try:
            self._shares = shares_from(self.driver.sharing())
        except DriverError as err:
            log.info("sharing-unreadable - %s", err)
            return False
        return True

    def sharing_changed(self) -> None:
        """The watcher saw a new revision: a pass at once (on the clock's thread)."""
        self._sharing_changed()

    def _pass(self, record: PassRecord) -> ProcessGen:
        self.refresh()
        yield from super()._pass(record)

    def _handle(self, project_id: str, command: Mapping[str, Any]) -> ProcessGen:
        if not self.refresh():
            self._event("skipped", None, "sharing unreadable: the command waits for a pass")
            return
        yield from super()._handle(project_id, command)


def build(
    env: dict[str, Any], relay_class: type[DrivenRelay] = DrivenRelay
) -> tuple[RealClock, DrivenRelay, DriverClient, Outbox]:
    """The clock, relay, driver client and outbox the environment asks for."""
    clock = RealClock()
    driver = DriverClient(env["OSF_RELAY_DRIVER"])
    client = StartRetrying(
        RelayClient(HttpTransport(timeout=10.0), env["OSF_RELAY_URL"], env["OSF_DESKTOP_TOKEN"])
    )
    outbox = FileOutbox(Path(env["OSF_RELAY_STATE_DIR"]) / "outbox.json")
    relay = relay_class(
        clock,
        client,
        DriverEngine(clock, driver),
        interval=env["OSF_RELAY_INTERVAL"],
        control_poll=env["OSF_RELAY_CONTROL_POLL"],
        outbox=outbox,
        driver=driver,
    )
    return clock, relay, driver, outbox


def _soon(clock: RealClock, fn: Callable[[], None]) -> None:
    clock.call_later(0.0, fn)


def main(
    environ: Mapping[str, str] | None = None, relay_class: type[DrivenRelay] = DrivenRelay
) -> int:
    """Run the driven relay until SIGTERM/SIGINT; 2 on a bad environment or driver."""
    env_map = os.environ if environ is None else environ
    token = env_map.get("OSF_DESKTOP_TOKEN", "")
    log_to_stderr([token] if token else [])  # the relay's lines on stderr, the token masked

    def say(text: str) -> None:
        print(
            f"pytest_osfoundry.relay.driven: {mask_token(text, [token] if token else [])}",
            file=sys.stderr,
        )

    try:
        env = read_env(env_map)
        clock, relay, driver, outbox = build(env, relay_class)
        first = driver.sharing()
    except (EnvError, DriverError, ValueError) as err:
        say(str(err))
        return 2
    say(
        f"scenario {env['OSF_RELAY_SCENARIO'] or '-'}: interval {relay.interval} s, "
        f"control poll {relay.control_poll} s, {len(outbox.items())} completion(s) in the outbox"
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        clock.stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    watch_sharing(
        driver,
        int(first["revision"]),
        lambda: _soon(clock, relay.sharing_changed),
        stop,
    )
    relay.start()
    try:
        clock.run()
    finally:
        stop.set()
        relay.stop()
        say(f"stopped; {len(outbox.items())} completion(s) wait in the outbox")
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a command
    sys.exit(main())
