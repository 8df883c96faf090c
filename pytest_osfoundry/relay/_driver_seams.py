"""The three seams a relay under the relay suite wires to the kit's driver API.

The driver contract (``docs/relay-conformance.md``) gives a relay its sharing
settings (``GET {driver}/sharing``, ``?after=n`` to wait for a change) and a fake
Graph engine that asks the driver what each run does (``POST {driver}/runs``,
``POST {driver}/runs/{command_id}/cancel``). This module is the kit's side of that
wiring for its own fake relay: :class:`DriverClient` (the HTTP calls),
:class:`DriverEngine` (an :class:`~pytest_osfoundry.engine.Engine` whose runs end
as the driver says) and :func:`watch_sharing` (a thread calling back on a change).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from pytest_osfoundry._vocabulary import CANCELLED, COMPLETED, FAILED
from pytest_osfoundry.client import HttpStatusError, HttpTransport, ProtocolViolation, ReplyLost
from pytest_osfoundry.client._internal import json_call
from pytest_osfoundry.clock import Clock, Signal, Timer
from pytest_osfoundry.engine import RunOutcome

__all__ = ["DriverClient", "DriverEngine", "DriverError", "DriverRun", "watch_sharing"]

_RETRIES = 3
_NO_BODY: dict[str, str] = {}
_JSON_BODY = {"Content-Type": "application/json"}


class DriverError(Exception):
    """The driver could not be asked, or answered something the contract does not allow."""


class DriverClient:
    """HTTP calls to the driver API at ``base``: ``timeout`` seconds each, 20 for a
    wait for a change of sharing."""

    def __init__(self, base: str, *, timeout: float = 5.0) -> None:
        self.base = base.rstrip("/")
        self._quick = HttpTransport(timeout=timeout)
        self._waiting = HttpTransport(timeout=20.0)

    def close(self) -> None:
        """Close the connections."""
        self._quick.close()
        self._waiting.close()

    def _call(self, method: str, path: str, payload: Any = None, *, wait: bool = False) -> Any:
        transport = self._waiting if wait else self._quick
        headers = _NO_BODY if payload is None else _JSON_BODY
        try:
            return json_call(transport, method, self.base + path, headers, payload)
        except HttpStatusError as err:
            text = err.body.decode("utf-8", "replace")[:200]
            raise DriverError(f"{method} {path}: HTTP {err.status}: {text}") from None
        except ProtocolViolation:
            raise DriverError(f"{method} {path}: the answer is not JSON") from None
        except ReplyLost as err:
            raise DriverError(f"{method} {path}: {type(err).__name__}: {err}") from None

    def sharing(self, after: int | None = None) -> dict[str, Any]:
        """The sharing settings now (``after``: wait until the revision is past it)."""
        path = "/sharing" if after is None else f"/sharing?after={after}"
        data = self._call("GET", path, wait=after is not None)
        if not isinstance(data, dict) or not isinstance(data.get("projects"), list):
            raise DriverError(f"GET {path}: no projects list in {str(data)[:200]}")
        if not isinstance(data.get("revision"), int):
            raise DriverError(f"GET {path}: no integer revision in {str(data)[:200]}")
        return data

    def run(
        self, command_id: str, channel: str, graph_session_id: str, arguments: Any
    ) -> dict[str, Any]:
        """Ask the driver how the run of ``command_id`` goes (retried on a failure)."""
        body = {
            "command_id": command_id,
            "channel": channel,
            "graph_session_id": graph_session_id,
            "arguments": arguments,
        }
        data = self._retried("POST", "/runs", body)
        if not isinstance(data, dict) or data.get("status") not in (COMPLETED, FAILED):
            raise DriverError(f"POST /runs: not a run plan: {str(data)[:200]}")
        return data

    def cancel(self, command_id: str) -> float:
        """Tell the driver the engine cancels ``command_id``; the seconds until it stops."""
        data = self._retried("POST", f"/runs/{quote(command_id, safe='')}/cancel", {})
        stop_after = data.get("stop_after") if isinstance(data, dict) else None
        if not isinstance(stop_after, (int, float)) or stop_after < 0:
            raise DriverError(f"POST /runs/.../cancel: no stop_after in {str(data)[:200]}")
        return float(stop_after)

    def _retried(self, method: str, path: str, body: Any) -> Any:
        last: DriverError | None = None
        for attempt in range(_RETRIES):
            try:
                return self._call(method, path, body)
            except DriverError as err:
                last = err
                time.sleep(0.1 * (attempt + 1))
        assert last is not None
        raise last


class DriverRun:
    """One run of :class:`DriverEngine` (a :class:`~pytest_osfoundry.engine.StartedRun`)."""

    def __init__(
        self, engine: DriverEngine, command_id: str, channel: str, plan: dict[str, Any]
    ) -> None:
        self._engine = engine
        self.command_id = command_id
        self._channel = channel
        self._done = engine.clock.signal()
        self._outcome: RunOutcome | None = None
        status = str(plan["status"])
        error = plan.get("error")
        self._planned = RunOutcome(
            status=status,
            result=plan.get("result") if status == COMPLETED else None,
            total_tokens=int(plan.get("total_tokens") or 0),
            reported_cost=float(plan.get("reported_cost") or 0.0),
            error=str(error) if status == FAILED and error is not None else None,
        )
        duration = plan.get("duration", 0)
        seconds = float(duration) if isinstance(duration, (int, float)) and duration >= 0 else 0.0
        self._timer: Timer | None = engine.clock.call_later(
            seconds, lambda: self._end(self._planned)
        )

    @property
    def channel(self) -> str:
        """The channel it was started on."""
        return self._channel

    @property
    def done(self) -> Signal:
        """Set when the run has ended."""
        return self._done

    @property
    def outcome(self) -> RunOutcome | None:
        """How it ended (``None`` while running)."""
        return self._outcome

    def cancel(self) -> None:
        """Ask the driver how long stopping takes; end as cancelled then, unless ended."""
        try:
            stop_after = self._engine.driver.cancel(self.command_id)
        except DriverError:
            stop_after = 0.0
        cancelled = RunOutcome(
            status=CANCELLED,
            total_tokens=self._planned.total_tokens,
            reported_cost=self._planned.reported_cost,
        )
        self._engine.clock.call_later(stop_after, lambda: self._end(cancelled))

    def _end(self, outcome: RunOutcome) -> None:
        if self._outcome is not None:
            return
        self._outcome = outcome
        if self._timer is not None:
            self._timer.cancel()
        self._done.set(outcome)


class DriverEngine:
    """A Graph engine whose every run is shaped by the driver (an ``Engine``)."""

    def __init__(self, clock: Clock, driver: DriverClient) -> None:
        self.clock = clock
        self.driver = driver

    def start(self, graph_session_id: str, arguments: dict[str, Any], channel: str) -> DriverRun:
        """Ask the driver for the run's plan; raise ``ValueError`` when it cannot be had.

        The command id is the channel's last ``:`` part (``graph:external:<id>``).
        """
        command_id = channel.rsplit(":", 1)[-1]
        try:
            plan = self.driver.run(command_id, channel, graph_session_id, arguments)
        except DriverError as err:
            raise ValueError(str(err)) from None
        return DriverRun(self, command_id, channel, plan)


def watch_sharing(
    driver: DriverClient, revision: int, changed: Callable[[], None], stop: threading.Event
) -> threading.Thread:
    """Start a daemon thread that long-polls ``?after=n`` and calls ``changed()`` on a change."""

    def loop() -> None:
        seen = revision
        while not stop.is_set():
            try:
                now = int(driver.sharing(after=seen)["revision"])
            except DriverError:
                stop.wait(0.3)
                continue
            if now != seen:
                seen = now
                changed()

    thread = threading.Thread(target=loop, name="osf-sharing-watcher", daemon=True)
    thread.start()
    return thread
