"""What a relay check's report shows of the relay: its requests, as the server saw them.

A relay check judges a relay by what it sent (and what it asked its engine), so a
failed relay check's report carries that record: the JSON report's ``relay`` entry
(``requests``: the last :data:`SHOWN` of them, oldest first, each with the seconds since
the check's first request, method, action, command id, the status it was answered
and its body cut to :data:`BODY_CHARS` characters; ``total``; ``stderr_tail``: the
relay's last stderr lines) and a section of pytest's failure report listing the same
requests a line each. Every text is masked with the run's secrets. The report's
``requests`` count of a relay check is the number of requests its relay sent.

It sits beside the report hook, outside the ``relay`` package (whose ``__init__`` loads the
relay machinery), and imports nothing heavy: the hook loads it in every suite run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.relay._harness import RelayConformance
    from pytest_osfoundry.conformance.relay._instrumented import RelayRequest

__all__ = ["BODY_CHARS", "RELAY_CONF", "SHOWN", "relay_evidence", "relay_lines"]

RELAY_CONF = pytest.StashKey["RelayConformance"]()
"""The relay check's context, on its item (set by its fixture or the concurrent runner)."""

SHOWN = 20
"""How many of the relay's last requests a failed check's report shows."""

BODY_CHARS = 200
"""Where a shown request's body is cut."""


def _body(request: RelayRequest) -> str:
    if request.body is None:
        text = request.raw.decode("utf-8", "replace")
    else:
        text = json.dumps(request.body, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= BODY_CHARS else text[: BODY_CHARS - 3] + "..."


def _entries(requests: Sequence[RelayRequest], mask: Callable[[str], str]) -> list[dict[str, Any]]:
    start = requests[0].at if requests else 0.0
    return [
        {
            "at": round(r.at - start, 3),
            "method": r.method,
            "action": r.action,
            "command_id": r.command_id,
            "status": r.status,
            "body": mask(_body(r)),
        }
        for r in requests[-SHOWN:]
    ]


def relay_evidence(conf: RelayConformance, mask: Callable[[str], str]) -> dict[str, Any]:
    """The JSON report's ``relay`` entry for a failed relay check (texts ``mask``ed)."""
    requests = conf.requests()
    return {
        "requests": _entries(requests, mask),
        "total": len(requests),
        "stderr_tail": mask(conf.stderr_tail()),
    }


def relay_lines(evidence: dict[str, Any]) -> str:
    """The requests of :func:`relay_evidence` a line each, for pytest's failure report."""
    entries = evidence["requests"]
    if not entries:
        return "the relay sent no request"
    total = evidence["total"]
    head = f"the last {len(entries)} of {total}" if total > len(entries) else f"all {total}"
    lines = [f"{head} (seconds since the first, what the server answered):"]
    for e in entries:
        answered = "no answer (connection dropped)" if e["status"] == 0 else f"HTTP {e['status']}"
        command = f" {e['command_id']}" if e["command_id"] else ""
        lines.append(f"  {e['at']:8.3f} s  {e['method']} {e['action']}{command} -> {answered}")
        lines.append(f"             {e['body']}")
    return "\n".join(lines)
