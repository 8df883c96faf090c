"""Running one command on the fake desktop relay, and delivering its completion (D13-D18).

:class:`CommandRunner` is the part of
:class:`~pytest_osfoundry.relay._desktop.FakeRelay` that handles one queued command:
a command id that is not a UUID is refused (D15); one whose completion still waits
in the outbox is not run again; just before running, the share is re-checked and a
command no longer shared is completed ``cancelled`` with ``NO_LONGER_SHARED`` (D13);
otherwise the run is started, the Graph run with a control poll every
``control_poll`` seconds (D14), cancelled once when asked (D16), and its bounded
completion (D18) put in the outbox before its POST and taken out after a 2xx (D17).
Every step is a :class:`~pytest_osfoundry.relay._records.RelayEvent`.

While the desktop is offline (``online`` false) none of it reaches the server: no
start (a pass takes no command then), no control poll (the relay cannot see a cancel
until it is back) and no completion POST (the completion waits in the outbox, or is
lost without one).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from typing import Any

from pytest_osfoundry._ids import is_uuid, uuid4_hex
from pytest_osfoundry._vocabulary import (
    CANCELLED,
    COMPLETED,
    FAILED,
    NO_LONGER_SHARED,
    RUNNING,
)
from pytest_osfoundry.client._errors import HttpStatusError, OsfClientError
from pytest_osfoundry.client._relay_client import RelayApiClient
from pytest_osfoundry.clock import Clock, ProcessGen, Wait
from pytest_osfoundry.engine._contract import Engine, StartedRun
from pytest_osfoundry.relay._bounded import bounded_completion
from pytest_osfoundry.relay._outbox import Outbox
from pytest_osfoundry.relay._records import History, RelayEvent, _ProjectShare

__all__ = ["CommandRunner"]

log = logging.getLogger("pytest_osfoundry.relay")


class CommandRunner:
    """Runs a relay's commands one at a time; the relay (a subclass) sets its state."""

    clock: Clock
    client: RelayApiClient
    engine: Engine
    outbox: Outbox | None
    control_poll: float
    online: bool
    executed: History[str]
    current: str | None
    current_run: StartedRun | None
    events: History[RelayEvent]
    _rng: random.Random
    _shares: dict[str, _ProjectShare]
    _listeners: list[Callable[[RelayEvent], None]]

    def _handle(self, project_id: str, command: Mapping[str, Any]) -> ProcessGen:
        is_mapping = isinstance(command, (dict, Mapping))  # dict first: no ABC check
        command_id = command.get("command_id") if is_mapping else None
        if not is_uuid(command_id):
            self._event("refused", detail=f"command id {command_id!r} is not a UUID (D15)")
            return
        assert isinstance(command_id, str)
        if self.outbox is not None and any(cid == command_id for cid, _ in self.outbox.items()):
            self._event("skipped", command_id, "its completion waits in the outbox")
            return
        execution_id = f"exec_{uuid4_hex(self._rng.getrandbits(128))}"
        if not self._still_shared(project_id, command):
            self._event("recheck-cancelled", command_id, NO_LONGER_SHARED)
            self._complete(
                command_id,
                bounded_completion(
                    execution_id=execution_id, status=CANCELLED, error=NO_LONGER_SHARED
                ),
            )
            return
        try:
            status = self.client.start(command_id, execution_id)
        except OsfClientError as err:
            self._event("start-failed", command_id, str(err))
            return
        if status != RUNNING:
            self._event("not-started", command_id, f"server answered {status!r}")
            return
        gsid = str(command.get("graph_session_id", ""))
        arguments = command.get("arguments")
        try:
            run = self.engine.start(
                gsid,
                dict(arguments) if isinstance(arguments, Mapping) else {},
                f"graph:external:{command_id}",
            )
        except (KeyError, TypeError, ValueError) as err:
            # The desktop could not start the Graph: report it instead of leaving the
            # run ``running`` on the server for ever.
            message = f"the desktop could not start the Graph: {err}"
            self._event("engine-refused", command_id, message)
            self._complete(
                command_id,
                bounded_completion(execution_id=execution_id, status=FAILED, error=message),
            )
            return
        self.executed.append(command_id)
        self.current = command_id
        self.current_run = run
        self._event("started", command_id, run.channel)
        cancelled = False
        poll = Wait(run.done, self.control_poll)  # immutable: one for every control poll
        try:
            while True:
                finished = yield poll
                if finished:
                    break
                if self._cancel_requested(command_id):
                    cancelled = True
                    run.cancel()
                    yield run.done
                    break
        finally:
            self.current = None
            self.current_run = None
        outcome = run.outcome
        assert outcome is not None
        body = bounded_completion(
            execution_id=execution_id,
            status=CANCELLED if cancelled else outcome.status,
            result=outcome.result if not cancelled and outcome.status == COMPLETED else None,
            total_tokens=outcome.total_tokens,
            reported_cost=outcome.reported_cost,
            error=outcome.error if not cancelled else None,
        )
        self._event("finished", command_id, body["status"])
        self._complete(command_id, body)

    def _still_shared(self, project_id: str, command: Mapping[str, Any]) -> bool:
        """D13: the project enabled, the session ticked, its slug unchanged."""
        share = self._shares.get(project_id)
        if share is None or not share.enabled:
            return False
        session = share.sessions.get(str(command.get("graph_session_id")))
        return session is not None and session["slug"] == command.get("slug")

    def _cancel_requested(self, command_id: str) -> bool:
        if not self.online:
            return False  # no control poll reaches the server while offline
        try:
            control = self.client.control(command_id)
        except OsfClientError as err:
            self._event("control-failed", command_id, str(err))
            return False
        return bool(control.get("cancel_requested"))

    def _complete(self, command_id: str, body: dict[str, Any]) -> None:
        if self.outbox is not None:
            self.outbox.put(command_id, body)
        self._post(command_id, body)

    def _flush_outbox(self) -> None:
        if self.outbox is None:
            return
        for command_id, body in self.outbox.items():
            self._post(command_id, body)

    def _post(self, command_id: str, body: dict[str, Any]) -> None:
        if not self.online:
            if self.outbox is None:
                self._event("complete-lost", command_id, "offline, and there is no outbox")
            else:
                self._event("complete-held", command_id, "offline: it waits in the outbox")
            return
        try:
            self.client.complete(command_id, body)
        except HttpStatusError as err:
            self._event("complete-refused", command_id, f"HTTP {err.status}")
            return
        except OsfClientError as err:
            self._event("complete-lost", command_id, str(err))
            return
        if self.outbox is not None:
            self.outbox.remove(command_id)
        self._event("delivered", command_id, body["status"])

    def _event(
        self,
        kind: str,
        command_id: str | None = None,
        detail: str = "",
        error: OsfClientError | None = None,
    ) -> None:
        event = RelayEvent(self.clock.now(), kind, command_id, detail, error)
        self.events.append(event)
        log.info("%s %s %s", kind, command_id or "-", detail)
        for listener in self._listeners:
            listener(event)

    def delivered_at(self, command_id: str) -> float | None:
        """When the completion of ``command_id`` was last delivered (a 2xx), if ever."""
        for event in reversed(self.events):
            if event.kind == "delivered" and event.command_id == command_id:
                return event.at
        return None
