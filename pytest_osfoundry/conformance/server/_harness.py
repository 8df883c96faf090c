"""The context one check works in: the suite's parts, made fresh for each check.

A check receives one :class:`Conformance` (the ``osf_conf`` fixture, ``c`` by
convention) and works through its parts, each with one job:

* ``c.roles`` -- credentials and one client per role
  (:class:`~pytest_osfoundry.conformance.server._roles.Roles`): ``c.roles.agent``,
  ``c.roles.other_agent``, ``c.roles.project_id``, ``c.roles.sessions`` ...
* ``c.agent`` -- the agents' tool calls
  (:class:`~pytest_osfoundry.conformance.server._agent.Agent`): ``c.agent.queue()``,
  ``c.agent.call(tool, args, by=...)``, ``c.agent.view(command_id)`` ...
* ``c.desktop`` -- the owner's desktop
  (:class:`~pytest_osfoundry.conformance.server._desktop.Desktop`): ``c.desktop.sync()``,
  ``start``, ``control``, ``complete``, and ``raw`` relay requests.
* ``c.runs`` -- the runs the check queued, ended on teardown whether the check
  passed or failed (:class:`~pytest_osfoundry.conformance.server._runs.Runs`).
* ``c.expect`` -- judging (:class:`~pytest_osfoundry.conformance.suite._expect.Expect`):
  ``c.expect(condition, message)``, ``c.expect.equal``, ``c.expect.error`` ...
* ``c.wire`` -- raw HTTP and the record of exchanges
  (:class:`~pytest_osfoundry.conformance.server._wire.Wire`): ``c.wire.http``,
  ``c.wire.rpc``, ``c.wire.decisive()`` ...
* ``c.alone()`` and ``c.after_the_rest()`` -- where a check declared
  ``waits_within`` waits for the others under ``--osf-concurrency``
  (:mod:`~pytest_osfoundry.conformance.scheduling._waits`).

The texts and figures checks assert are in
:mod:`~pytest_osfoundry.conformance.expected`; the sessions the suite shares in
:mod:`~pytest_osfoundry.conformance.server._sessions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager

from pytest_osfoundry.client import Exchange
from pytest_osfoundry.conformance.scheduling._internal import Schedule, Stage, no_stage
from pytest_osfoundry.conformance.server._agent import Agent
from pytest_osfoundry.conformance.server._desktop import Desktop
from pytest_osfoundry.conformance.server._roles import Roles
from pytest_osfoundry.conformance.server._runs import Runs
from pytest_osfoundry.conformance.server._target import Target
from pytest_osfoundry.conformance.server._wire import Wire
from pytest_osfoundry.conformance.suite._internal import CheckFailure, CheckInfo, Expect

__all__ = ["CheckFailure", "Conformance"]


class Conformance:
    """Everything one check needs; made fresh for each check by the ``osf_conf`` fixture.

    ``secrets`` are masked in failure messages, besides the target's credentials.
    """

    def __init__(self, target: Target, info: CheckInfo, secrets: Sequence[str] = ()) -> None:
        self.target = target
        """The server under test (URLs, credentials, its shared HTTP client)."""
        self.info = info
        """The check being run."""
        self.expect = Expect([*secrets, *target.creds.secrets()])
        self.wire = Wire(target, self.expect)
        self.roles = Roles(target, self.wire)
        self.runs = Runs(self.wire, self.roles)
        self.desktop = Desktop(target, self.wire, self.roles, self.runs, self.expect, info)
        self.agent = Agent(
            info.check_id, self.wire, self.roles, self.runs, self.desktop, self.expect
        )
        self.stage: Stage = no_stage()
        """The check's place in a concurrent batch (set by the runner; outside one, its
        waits return at once)."""

    def __repr__(self) -> str:
        return f"Conformance(check={self.info.check_id!r}, target={self.target.label!r})"

    def alone(self) -> AbstractContextManager[None]:
        """The part of a check declared ``schedule="alone-within"`` that needs the
        target to itself: under ``--osf-concurrency`` it begins once every other check
        has ended or waits too.

        Raises:
            TypeError: the check is not declared ``schedule="alone-within"``.
        """
        self._declared("alone-within", self.info.needs.alone, "with c.alone():")
        return self.stage.alone()

    def after_the_rest(self) -> None:
        """Where a check declared ``schedule="last-within"`` waits until every other
        check of its batch has ended, before judging what they received.

        Raises:
            TypeError: the check is not declared ``schedule="last-within"``.
        """
        self._declared("last-within", self.info.needs.last, "c.after_the_rest()")
        self.stage.after_the_rest()

    def _declared(self, schedule: Schedule, phase: bool, call: str) -> None:
        if not (phase and self.info.needs.waits_within):
            raise TypeError(
                f"check {self.info.check_id} calls {call} but is not declared "
                f"@check(..., schedule={schedule!r}): only such a check waits there"
            )

    @property
    def notes(self) -> list[str]:
        """What a passing check adds to its one-line message."""
        return self.expect.notes

    def exchanges(self) -> tuple[list[Exchange], Exchange | None]:
        """The check's recorded exchanges and the decisive one (the latest by default)."""
        return self.wire.exchanges()

    def close(self) -> None:
        """End every run the check queued and left open (errors ignored); the requests
        this sends are not counted in :attr:`Wire.requests`."""
        self.wire.stop_counting()
        self.runs.close()
