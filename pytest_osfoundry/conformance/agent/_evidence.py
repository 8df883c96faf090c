"""What an agent check's report shows of the agent: its calls, exit code, report, output.

An agent check judges an agent by what the server saw and what it reported, so every
agent check's report carries its record, passed or failed: the JSON report's ``agent``
entry (``calls``: the last :data:`SHOWN` MCP requests, oldest first, each with the
seconds since the first, the JSON-RPC method, the tool, its arguments, the status and
what it was answered; ``total``; ``outcomes``: each start's exit code, report and last
lines of output; ``measures``: what the check measured, also as JUnit properties
``osf_measure_<name>``), and sections of pytest's failure report with the same. Every
text is masked with the run's secrets and the check's agent token. With
``--osf-agent-record=DIR`` every agent check leaves its whole record in
``DIR/<check id>.json``.

Like :mod:`~pytest_osfoundry.conformance.relay._evidence` it sits beside the report hook
and imports nothing heavy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_osfoundry.client import mask_token

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.agent._harness import AgentConformance

__all__ = [
    "AGENT_CONF",
    "SHOWN",
    "agent_evidence",
    "agent_lines",
    "measure_properties",
    "write_agent_record",
]

AGENT_CONF = pytest.StashKey["AgentConformance"]()
"""The agent check's context, on its item (set by its fixture or the concurrent runner)."""

SHOWN = 30
"""How many of the agent's last calls a check's report shows."""


def _masked(value: Any, mask: Callable[[str], str]) -> Any:
    masked: Any = json.loads(mask(json.dumps(value, ensure_ascii=False, default=str)))
    return masked


def agent_evidence(conf: AgentConformance, mask: Callable[[str], str]) -> dict[str, Any]:
    """The report's ``agent`` entry for ``conf`` (see the module), masked."""
    record = conf.record()
    calls = record["calls"]
    evidence = {
        "calls": calls[-SHOWN:],
        "total": len(calls),
        "outcomes": record["outcomes"],
        "measures": record["measures"],
    }
    return _masked(evidence, lambda text: mask(mask_token(text, [conf.token])))  # type: ignore[no-any-return]


def _call_line(call: dict[str, Any]) -> str:
    what = call["tool"] or call["rpc"] or call["method"]
    asked = json.dumps(call["arguments"])[:160] if call["arguments"] else ""
    answer = call["error"] or (json.dumps(call["result"])[:160] if call["result"] else "")
    return f"+{call['at']:7.3f}s {what} {asked} -> {call['status']} {answer}".rstrip()


def agent_lines(evidence: dict[str, Any]) -> str:
    """The evidence as text for pytest's failure report: a line per call, then each
    start's exit code, report and output tail."""
    lines = [_call_line(call) for call in evidence["calls"]]
    for index, outcome in enumerate(evidence["outcomes"], 1):
        report = outcome["report"]
        said = json.dumps(report)[:400] if report is not None else outcome["report_problem"]
        stopped = " (stopped at its deadline)" if outcome["stopped_at_deadline"] else ""
        lines.append(f"start {index}: exit {outcome['exit_code']}{stopped}, report {said}")
        if outcome["output_tail"]:
            tail = outcome["output_tail"].replace("\n", "\n  ")
            lines.append(f"  its last lines of output:\n  {tail}")
    if evidence["measures"]:
        lines.append("measures: " + json.dumps(evidence["measures"]))
    return "\n".join(lines)


def measure_properties(conf: AgentConformance) -> list[tuple[str, object]]:
    """The check's measures as JUnit properties (``osf_measure_<name>``)."""
    return [(f"osf_measure_{name}", value) for name, value in sorted(conf.measures.items())]


def write_agent_record(
    folder: str | Path,
    conf: AgentConformance,
    outcome: str,
    message: str | None,
    secrets: Iterable[str],
) -> Path:
    """Write the check's whole record to ``folder/<check id>.json``, masked; its path."""
    record = {"outcome": outcome, "message": message, **conf.record()}
    mask = [*secrets, conf.token]
    path = Path(folder) / f"{conf.check_id}.json"
    text = mask_token(json.dumps(record, indent=1, ensure_ascii=False, default=str), mask)
    path.write_text(text + "\n", encoding="utf-8")
    return path
