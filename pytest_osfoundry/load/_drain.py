"""The drain: after the load, read every run the load knows of until it is terminal.

Through the public tools alone (``get_graph_run`` with the token of the agent that
queued the run), so it works against any server. The runs it reads: every command id
an agent was answered whose last view was not terminal yet, and every command a
desktop started that no agent's ledger names (a duplicate whose reply was lost: the
run's arguments name its agent). It reads them in rounds, a round every ``period``
seconds, until all are terminal or ``limit`` seconds have passed; the desktops keep
running meanwhile. ``stop`` ends it at once (a second interrupt): the reads not yet
made are not made, and each such run keeps its last known view.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pytest_osfoundry._vocabulary import TERMINAL_STATUSES
from pytest_osfoundry.agent import ToolClient
from pytest_osfoundry.client import OsfClientError, ReplyLost, ToolError
from pytest_osfoundry.load._ledger import Ledger

__all__ = ["Final", "drain"]

Mapper = Callable[[Callable[[str], "Final"], Iterable[str]], Iterator["Final"]]


@dataclass(frozen=True)
class Final:
    """A run's last known view after the drain, and where it came from.

    ``view`` is ``None`` when no view could be read; ``detail`` then says why (the
    server's error, or that no agent is known for the run).
    """

    command_id: str
    agent: str | None
    view: dict[str, Any] | None
    detail: str = ""

    @property
    def terminal(self) -> bool:
        """Whether the run reached a terminal status."""
        return self.view is not None and self.view.get("status") in TERMINAL_STATUSES


def known_runs(ledger: Ledger) -> dict[str, Final]:
    """Every command id the ledger knows, with its agent and the last view read."""
    runs: dict[str, Final] = {}
    for record in ledger.runs:
        for command_id in record.command_ids:
            seen = runs.get(command_id)
            view = record.view if record.view and record.view.get("command_id") in (
                None, command_id
            ) else None
            if seen is None or (seen.view is None and view is not None):
                runs[command_id] = Final(command_id, record.agent, view)
    for command_id, start in ledger.starts.items():
        if command_id not in runs:
            detail = "" if start.agent else "its arguments name no agent of the load"
            runs[command_id] = Final(command_id, start.agent, None, detail)
    return runs


def drain(
    ledger: Ledger,
    client_for: Callable[[str], ToolClient],
    *,
    limit: float,
    period: float,
    mapper: Mapper | None = None,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], float] = time.monotonic,
    stop: Callable[[], bool] = lambda: False,
) -> dict[str, Final]:
    """Read every run of ``ledger`` until terminal or ``limit`` seconds passed.

    ``client_for(agent)`` is the tool client of an agent label; ``mapper`` runs a
    round's reads (``map`` by default; a pool's ``imap_unordered`` reads them at once).
    Returns the final view of every known run, by command id. ``stop()`` true ends the
    drain before its next read.
    """
    runs = known_runs(ledger)
    clients: dict[str, ToolClient] = {}

    def read(command_id: str) -> Final:
        known = runs[command_id]
        if known.agent is None or stop():
            return known
        client = clients.get(known.agent)
        if client is None:
            client = clients[known.agent] = client_for(known.agent)
        try:
            view = client.get_graph_run(command_id)
        except ToolError as err:
            return Final(command_id, known.agent, None, err.message)
        except ReplyLost as err:
            return Final(command_id, known.agent, known.view, f"no reply: {err}")
        except OsfClientError as err:
            return Final(command_id, known.agent, known.view, str(err))
        return Final(command_id, known.agent, view)

    run_map: Mapper = mapper if mapper is not None else map
    deadline = now() + limit
    while True:
        pending = [c for c, f in runs.items() if not f.terminal and f.agent is not None]
        if not pending:
            break
        for final in run_map(read, pending):
            runs[final.command_id] = final
        if now() >= deadline or stop() or all(runs[c].terminal for c in pending):
            break
        sleep(min(period, max(0.0, deadline - now())))
    return runs
