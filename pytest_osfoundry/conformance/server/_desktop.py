"""The owner's desktop, played by the suite: sync, start, control poll and completion.

The suite is the desktop relay here, with the desktop token, so a run can be put
in any status without waiting for anything. It only ever starts or completes
commands the check queued itself, so checks running in parallel never touch each
other's runs. :meth:`Desktop.raw` sends any relay request as it is and returns the
reply unjudged, for checks about the relay API itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal
from urllib.parse import quote

from pytest_osfoundry._wirejson import dumps
from pytest_osfoundry.client import OsfClientError, RelayClient
from pytest_osfoundry.conformance.expected import RELAY_PREFIX, RUNNING
from pytest_osfoundry.conformance.scheduling._internal import Scope
from pytest_osfoundry.conformance.server._roles import Roles
from pytest_osfoundry.conformance.server._runs import Runs, new_execution_id
from pytest_osfoundry.conformance.server._sessions import FIXED
from pytest_osfoundry.conformance.server._target import Target
from pytest_osfoundry.conformance.server._wire import Wire
from pytest_osfoundry.conformance.suite._internal import CheckInfo, Expect, short
from pytest_osfoundry.http import Response

__all__ = ["RELAY_ACTIONS", "Desktop"]

RELAY_ACTIONS = ("sync", "start", "control", "complete")
"""What :meth:`Desktop.raw` can send."""


class Desktop:
    """The desktop's actions for one check; each fails the check when refused."""

    def __init__(
        self,
        target: Target,
        wire: Wire,
        roles: Roles,
        runs: Runs,
        expect: Expect,
        info: CheckInfo,
    ) -> None:
        self._target = target
        self._info = info
        self._wire = wire
        self._roles = roles
        self._runs = runs
        self._expect = expect
        self.synced = False
        """Whether this check has shared the fixed sessions (a default :meth:`sync`)."""
        self.held = False
        """Whether this check has held the shared session list (:meth:`changing_list`)."""

    def sync(
        self, sessions: list[dict[str, Any]] | None = None, *, desktop: RelayClient | None = None
    ) -> list[dict[str, Any]]:
        """Sync the project as the desktop (the fixed sessions by default); the commands."""
        __tracebackhide__ = True
        shared = self._roles.sessions if sessions is None else sessions
        try:
            commands = (desktop or self._roles.desktop).sync(self._roles.project_id, shared)
        except OsfClientError as err:
            self._expect.fail(f"the desktop's sync failed: {err}")
        if sessions is None:
            self.synced = True
        return commands

    def changing_list(
        self, *, everything: bool = False, sharing: str | None = None
    ) -> AbstractContextManager[None]:
        """Hold the project's shared session list for a block: meanwhile no other check
        of this process syncs, and with ``everything`` none sends a request whose answer
        depends on the list
        (:mod:`~pytest_osfoundry.conformance.scheduling._shared_list`). For a check
        that shares a list of its own and reads what it shared; leave the fixed list
        shared again. Checks whose blocks sync one and the same list (and nothing else)
        name it in ``sharing`` and hold together. A block syncing the fixed sessions
        alone names :data:`~pytest_osfoundry.conformance.server._sessions.FIXED`: every other
        check syncs those too, so it keeps out only the holds of other lists.

        Only a check declared ``@check(..., schedule="shares-list")`` holds the list: a
        concurrent batch starts such checks first (see
        :class:`~pytest_osfoundry.conformance.suite._registry.CheckInfo`).

        Raises:
            TypeError: the check is not declared ``schedule="shares-list"``.
            ValueError: ``everything`` with ``sharing`` (a list that may unshare the
                fixed sessions is held alone).
        """
        if not self._info.needs.holds_list:
            raise TypeError(
                f"check {self._info.check_id} calls c.desktop.changing_list() but is not "
                'declared @check(..., schedule="shares-list"): only such a check holds the list'
            )
        if everything and sharing is not None:
            raise ValueError("a hold of everything is held alone: no sharing")
        self.held = True
        scope: Scope = "list" if everything else "holds" if sharing == FIXED else "syncs"
        return self._wire.hold(scope, sharing)

    def start(self, command_id: str) -> str:
        """Start one of the check's commands as the desktop; the status answered."""
        __tracebackhide__ = True
        execution_id = new_execution_id()
        try:
            status = self._roles.desktop.start(command_id, execution_id)
        except OsfClientError as err:
            self._expect.fail(f"the desktop could not start {command_id}: {err}")
        if status == RUNNING:
            self._runs.started(command_id, execution_id)
        return status

    def execution_id(self, command_id: str) -> str:
        """The execution id the check started ``command_id`` with (a fresh one if none)."""
        return self._runs.execution_id(command_id)

    def completion(self, command_id: str, status: str, **fields: Any) -> dict[str, Any]:
        """The completion body the relay posts for ``command_id``: the execution id it was
        started with, ``status``, then ``fields`` in the order given."""
        return {"execution_id": self.execution_id(command_id), "status": status, **fields}

    def control(self, command_id: str) -> dict[str, Any]:
        """The desktop's control poll of ``command_id`` (R10)."""
        __tracebackhide__ = True
        try:
            return self._roles.desktop.control(command_id)
        except OsfClientError as err:
            self._expect.fail(f"the desktop's control poll failed: {err}")

    def complete(self, command_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Post a completion as the desktop, failing the check unless it is accepted."""
        __tracebackhide__ = True
        try:
            answer = self._roles.desktop.complete(command_id, body)
        except OsfClientError as err:
            self._expect.fail(f"the desktop's completion of {command_id} was refused: {err}")
        self._runs.done(command_id)
        return answer

    def raw(
        self,
        action: str,
        command_id: str | None = None,
        body: Any = None,
        *,
        token: str | Literal["desktop"] | None = "desktop",
        raw_body: bytes | None = None,
    ) -> Response:
        """One relay request sent as it is; the reply is returned whatever its status.

        ``action`` is one of :data:`RELAY_ACTIONS`; ``command_id`` is needed for all
        but ``sync``. ``token`` defaults to the desktop's; ``None`` sends no
        Authorization header. ``raw_body`` replaces the JSON encoding of ``body``.

        Raises:
            ValueError: an unknown action, or no command id for one that needs it.
        """
        if action not in RELAY_ACTIONS or (action != "sync" and command_id is None):
            raise ValueError(f"relay action {action!r} for command {command_id!r}")
        root = self._target.relay_url.rstrip("/") + RELAY_PREFIX
        if action == "sync" or command_id is None:
            url, method = f"{root}/sync", "POST"
        else:
            url = f"{root}/commands/{quote(command_id, safe='')}/{action}"
            method = "GET" if action == "control" else "POST"
        headers = {"Accept": "application/json"}
        bearer = self._roles.need("desktop_token") if token == "desktop" else token
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        payload = b""
        if method == "POST":
            headers["Content-Type"] = "application/json"
            payload = raw_body if raw_body is not None else dumps({} if body is None else body)
        return self._wire.http(method, url, headers, payload)

    # ------------------------------------------------------------------ sync answers
    @staticmethod
    def command(commands: Sequence[Mapping[str, Any]], command_id: str) -> Mapping[str, Any] | None:
        """The command ``command_id`` in a sync answer, if there."""
        for c in commands:
            if c.get("command_id") == command_id:
                return c
        return None

    @staticmethod
    def commands_with(
        commands: Sequence[Mapping[str, Any]], arguments: Mapping[str, Any]
    ) -> list[Mapping[str, Any]]:
        """The commands of a sync answer whose ``arguments`` equal ``arguments``."""
        return [c for c in commands if c.get("arguments") == dict(arguments)]

    def expect_nothing_queued(self, arguments: Mapping[str, Any], what: str) -> None:
        """Fail if a sync shows a command with ``arguments`` (the refused call queued one);
        any such command is tracked, so that clean-up ends it."""
        __tracebackhide__ = True
        found = self.commands_with(self.sync(), arguments)
        for c in found:
            cid = c.get("command_id")
            if isinstance(cid, str):
                self._runs.track(self._roles.agent, cid)
        self._expect(not found, f"{what}, yet a run was queued: the sync delivers {short(found)}")
