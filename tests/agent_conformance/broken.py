"""Broken agents: the kit's own agent (:class:`ContractAgent`) with one step changed.

Run one as the agent command: ``python -m tests.agent_conformance.broken NAME``. Each
breaks one piece of advice, and :data:`CAUGHT_BY` names the agent checks that must
fail it (and only those: tests/agent_conformance/test_broken_agents.py).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_osfoundry._vocabulary import TERMINAL_STATUSES
from pytest_osfoundry.agent import AgentRun, ScriptedAgent, Strategy, ToolClient, backoff, every
from pytest_osfoundry.agent._contract import RETRY_STATUSES, ContractAgent, SavedRuns, main
from pytest_osfoundry.client import HttpStatusError, HttpTransport, OsfClientError, ReplyLost
from pytest_osfoundry.http import Response


class NewKeyOnRetry(ContractAgent):
    """Asks again with a new key after a lost reply (a second run queued)."""

    def scripted(self) -> ScriptedAgent:
        agent = super().scripted()
        agent.retry = "new-key"
        return agent


class PollsFast(ContractAgent):
    """Polls every tenth of an interval from the start (an LLM harness with no sleep)."""

    def strategy(self) -> Strategy:
        return every(self.interval / 10)


class PollsAfterTerminal(ContractAgent):
    """Reads its run once more after it answered a terminal status."""

    def follow(self, run: AgentRun) -> None:
        super().follow(run)
        if run.command_id is not None:
            with contextlib.suppress(OsfClientError):
                self.client.get_graph_run(run.command_id)


class RetriesNotFound(ContractAgent):
    """Takes D5 for a passing fault and reads again every interval until its deadline."""

    def follow(self, run: AgentRun) -> None:
        super().follow(run)
        while run.command_id is not None and run.status not in TERMINAL_STATUSES:
            if time.monotonic() >= self.ends:
                return
            time.sleep(self.interval)
            try:
                run.view = self.client.get_graph_run(run.command_id)
            except OsfClientError:
                continue


class RequeuesWhileQueued(ContractAgent):
    """Takes a run still queued after three intervals for lost and queues it again."""

    def follow(self, run: AgentRun) -> None:
        patience = time.monotonic() + 3 * self.interval
        self.clock.run(
            until=lambda: run.done.is_set or time.monotonic() >= min(patience, self.ends)
        )
        if not run.done.is_set and run.status == "queued":
            run.keys.append(self.agent.new_key())
            with contextlib.suppress(OsfClientError):
                ticket = self.client.run_graph_session(
                    run.graph_session_id, run.keys[-1], self.task.get("arguments") or {}
                )
                run.command_id = str(ticket["command_id"])
        super().follow(run)


class FansOut(ContractAgent):
    """Queues every item at once and waits for them all."""

    def run_items(self, graph_session_id: str, items: Sequence[Any]) -> None:
        runs = [self.agent.start(graph_session_id, dict(item)) for item in items]
        self.clock.run(
            until=lambda: all(r.done.is_set for r in runs) or time.monotonic() >= self.ends
        )
        self.entries.extend(self.entry(run) for run in runs)


class CancelAndForget(ContractAgent):
    """Takes its cancel for the end: reports the run cancelled as soon as the cancel is
    answered, without waiting for the run to be terminal."""

    def follow(self, run: AgentRun) -> None:
        self.clock.run(
            until=lambda: run.done.is_set
            or run.cancel_result is not None
            or time.monotonic() >= self.ends
        )
        if not run.done.is_set and run.cancel_result is not None:
            run.view = {**run.cancel_result, "status": "cancelled"}
            return
        super().follow(run)


class GivesUpOnLostCancel(ContractAgent):
    """Takes a cancel whose reply was lost for a failed task: reports it and stops."""

    def follow(self, run: AgentRun) -> None:
        def cancel_lost() -> bool:
            return any(c.tool == "cancel_graph_run" and c.outcome == "lost" for c in run.calls)

        self.clock.run(
            until=lambda: run.done.is_set or cancel_lost() or time.monotonic() >= self.ends
        )
        if not run.done.is_set and cancel_lost():
            run.error = "the cancel's reply was lost"
            return
        super().follow(run)


class ShowsPartialResult(ContractAgent):
    """Ignores ``result_truncated``: a truncated run is reported completed with what
    result it has, as if complete."""

    def entry(self, run: AgentRun) -> dict[str, Any]:
        entry = super().entry(run)
        entry["result"] = (run.view or {}).get("result")
        entry["result_truncated"] = False
        return entry


class AsciiReport(ContractAgent):
    """Writes its report in an ASCII locale, dropping what it cannot encode."""

    def write_report(self) -> None:
        report: Any = (
            self.entries
            if self.task["kind"] == "run-items"
            else (self.entries[0] if self.entries else {})
        )
        with open(self.report_path, "w", encoding="ascii", errors="ignore") as file:
            json.dump(report, file, ensure_ascii=False)


class RequeuesCancelled(ContractAgent):
    """Takes a run that ended cancelled without its asking for lost and queues it again."""

    def run_one(self, graph_session_id: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        entry = super().run_one(graph_session_id, arguments)
        if entry["status"] == "cancelled" and self.task["kind"] != "run-and-cancel":
            self.saved.forget()  # a new intended run: a fresh key, not the saved one
            return super().run_one(graph_session_id, arguments)
        return entry


class ForgetsOnRestart(ContractAgent):
    """Keeps nothing in OSF_AGENT_STATE_DIR: restarted, it queues its run afresh."""

    def __init__(self, env: Mapping[str, str]) -> None:
        super().__init__(env)
        self.saved = SavedRuns(None, self.task)


class _NewKeyAfterStatus(ScriptedAgent):
    def retry_key(self, run: AgentRun, err: OsfClientError) -> str:
        if isinstance(err, HttpStatusError):
            return self.new_key()
        return super().retry_key(run, err)


class NewKeyAfter503(ContractAgent):
    """Asks again after a 503 with a new key (the same key after a dropped reply)."""

    def scripted(self) -> ScriptedAgent:
        agent = super().scripted()
        broken = _NewKeyAfterStatus(
            self.clock,
            agent.client,
            strategy=agent.strategy,
            retry_delay=agent.retry_delay,
            max_start_attempts=agent.max_start_attempts,
            retry_statuses=agent.retry_statuses,
        )
        return broken


class NoRequestTimeout(ContractAgent):
    """Waits for every answer as long as it takes (an hour): hangs on a held answer."""

    def make_transport(self) -> HttpTransport:
        return HttpTransport(timeout=3600.0)


class NoSessionRenewal(ContractAgent):
    """Gives up when the server ends its MCP session (a 404 taken as a refusal)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        super().__init__(env)
        self.client.renew_session = False


def _never_ends(body: bytes) -> Callable[[bytes], bool] | None:
    return lambda piece: False


class WaitsForStreamEnd(ContractAgent):
    """Reads an event-stream answer until the stream ends, not until its answer."""

    def make_transport(self) -> HttpTransport:
        transport = super().make_transport()
        transport.stream_end = _never_ends
        return transport


class _LostReadsFinal:
    """A tool client whose lost get_graph_run replies are refusals."""

    def __init__(self, inner: ToolClient) -> None:
        self.inner = inner

    def run_graph_session(
        self,
        graph_session_id: str,
        idempotency_key: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        return self.inner.run_graph_session(graph_session_id, idempotency_key, arguments)

    def get_graph_run(self, command_id: str) -> dict[str, Any]:
        try:
            return self.inner.get_graph_run(command_id)
        except ReplyLost as err:
            raise OsfClientError(f"gave up on the run: {err}") from None

    def cancel_graph_run(self, command_id: str) -> dict[str, Any]:
        return self.inner.cancel_graph_run(command_id)


class GivesUpOnLostRead(ContractAgent):
    """Takes a lost get_graph_run reply for the end of the run."""

    def scripted(self) -> ScriptedAgent:
        agent = super().scripted()
        agent.client = _LostReadsFinal(agent.client)
        return agent


class RetriesRefusals(ContractAgent):
    """Takes 401 and 403 for passing faults and asks again for ever."""

    def scripted(self) -> ScriptedAgent:
        agent = super().scripted()
        agent.retry_statuses = frozenset((*RETRY_STATUSES, 401, 403))
        agent.max_start_attempts = 10_000
        return agent


class _LeakyTransport(HttpTransport):
    """HTTP that sends the token again in an ``X-Api-Key`` header."""

    token = ""

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        return super().request(method, url, {**headers, "X-Api-Key": self.token}, body)


class LeaksToken(ContractAgent):
    """Sends its token also in an X-Api-Key header (as some SDK wrappers do)."""

    def make_transport(self) -> HttpTransport:
        transport = _LeakyTransport(timeout=super().make_transport().timeout)
        transport.token = self.token
        return transport


class BacksOff(ContractAgent):
    """Polls with exponential backoff from one interval, doubling up to 15 intervals."""

    def strategy(self) -> Strategy:
        return backoff(first=self.interval, cap=15 * self.interval)


BROKEN: dict[str, type[ContractAgent]] = {
    "new-key-on-retry": NewKeyOnRetry,
    "polls-fast": PollsFast,
    "polls-after-terminal": PollsAfterTerminal,
    "retries-not-found": RetriesNotFound,
    "fans-out": FansOut,
    "requeues-while-queued": RequeuesWhileQueued,
    "cancel-and-forget": CancelAndForget,
    "shows-partial-result": ShowsPartialResult,
    "ascii-report": AsciiReport,
    "requeues-cancelled": RequeuesCancelled,
    "forgets-on-restart": ForgetsOnRestart,
    "gives-up-on-lost-cancel": GivesUpOnLostCancel,
    "new-key-after-503": NewKeyAfter503,
    "no-request-timeout": NoRequestTimeout,
    "no-session-renewal": NoSessionRenewal,
    "waits-for-stream-end": WaitsForStreamEnd,
    "gives-up-on-lost-read": GivesUpOnLostRead,
    "retries-refusals": RetriesRefusals,
    "leaks-token": LeaksToken,
    "backs-off": BacksOff,
}

CAUGHT_BY: dict[str, set[str]] = {
    "new-key-on-retry": {"A5-same-key-after-lost-reply"},
    "polls-fast": {"A1-first-look", "A1-fixed-polling"},
    "polls-after-terminal": {"A2-stop-at-terminal"},
    "retries-not-found": {"A6-not-found-is-final"},
    "fans-out": {"A4-no-fan-out"},
    "requeues-while-queued": {"A3-patient-while-offline"},
    "cancel-and-forget": {"R7-agent-cancel-running", "D16-agent-cancel-raced"},
    "shows-partial-result": {"D18-agent-truncated-result"},
    "ascii-report": {"D18-agent-large-result"},
    "requeues-cancelled": {"A2-recheck-cancel-reported"},
    "forgets-on-restart": {"R5-agent-resumes-after-restart"},
    "gives-up-on-lost-cancel": {"R7-agent-cancel-lost-reply"},
    "new-key-after-503": {"A5-same-key-after-503"},
    "no-request-timeout": {"A5-same-key-after-held-answer"},
    "no-session-renewal": {"A5-same-key-new-session", "R1-agent-session-ended"},
    "waits-for-stream-end": {"R1-agent-stream-left-open"},
    "gives-up-on-lost-read": {"R6-agent-reads-again"},
    "retries-refusals": {"A6-read-only-token", "A6-revoked-token"},
    "leaks-token": {
        "A6-unknown-session",
        "A6-read-only-token",
        "A6-revoked-token",
        "R2-agent-token-in-header",
    },
    "backs-off": {"A1-fixed-polling", "A3-patient-while-offline"},
}


if __name__ == "__main__":
    sys.exit(main(agent_type=BROKEN[sys.argv[1]]))
