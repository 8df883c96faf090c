"""Running agent checks at once in one process (``--osf-agent-concurrency N``).

An agent check spends its time waiting for an agent process and the intervals of its
task, so when the first agent check of this process is about to run,
:class:`AgentConcurrentRunner` runs every agent check still to come in a thread pool,
each with its own context (account, token, project, fake desktop, process group),
and stores each outcome; each item's call then replays it in pytest's order, as the
relay suite's :class:`~pytest_osfoundry.conformance.relay._concurrent.RelayConcurrentRunner`
does (the same :class:`~pytest_osfoundry.conformance.scheduling._runner.PreRunner`, phases and
Ctrl-C handling). ``--osf-agent-concurrency 1`` turns this off.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from pytest_osfoundry.conformance.agent._evidence import AGENT_CONF
from pytest_osfoundry.conformance.agent._harness import AgentConformance
from pytest_osfoundry.conformance.scheduling._internal import Phases, PreRunner, Stage, upcoming
from pytest_osfoundry.conformance.suite._internal import check_info

__all__ = ["FIXTURE", "AgentConcurrentRunner", "AgentOutcomeStored"]

FIXTURE = "osf_agent_conf"


@dataclass
class AgentOutcomeStored:
    """What a pre-run agent check raised (``None``: it returned) and how long it took."""

    error: BaseException | None = None
    close_error: BaseException | None = None
    seconds: float = 0.0


def _runnable(item: pytest.Item) -> bool:
    if not isinstance(item, pytest.Function) or check_info(getattr(item, "obj", None)) is None:
        return False
    return tuple(item._fixtureinfo.argnames) == (FIXTURE,)


class AgentConcurrentRunner(PreRunner[AgentOutcomeStored]):
    """The pytest plugin that pre-runs this process's agent checks and replays them."""

    def __init__(
        self,
        workers: int,
        make_context: Callable[[pytest.Item], AgentConformance],
        on_interrupt: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(workers, on_interrupt)
        self._make_context = make_context

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """Replay the stored outcome of an agent check (pre-running them all first)."""
        if not _runnable(pyfuncitem):
            return None
        if pyfuncitem.nodeid not in self._outcomes:
            self._prerun(pyfuncitem)
        outcome = self._replay_or_skip(pyfuncitem)
        if outcome.error is not None:
            raise outcome.error
        return True

    def _prerun(self, first: pytest.Function) -> None:
        batch = [
            i for i in [first, *upcoming(first)] if _runnable(i) and i.nodeid not in self._outcomes
        ]
        phases = Phases()
        for item in batch:
            info = check_info(getattr(item, "obj", None))
            assert info is not None and isinstance(item, pytest.Function)  # _runnable
            phases.add(item, info.needs)

        def one(item: pytest.Function, _stage: Stage) -> None:
            outcome = AgentOutcomeStored()
            began = time.perf_counter()
            try:
                conf = self._make_context(item)
            except BaseException as err:
                outcome.error = err
            else:
                item.stash[AGENT_CONF] = conf  # the report shows what its agent did
                try:
                    item.obj(**{FIXTURE: conf})
                except BaseException as err:  # stored, re-raised by the item's call
                    outcome.error = err
                try:
                    conf.close()
                except BaseException as err:
                    outcome.close_error = err
            outcome.seconds = time.perf_counter() - began
            self._keep(item, outcome)

        self._run(phases, one, "osf-agent-check")
