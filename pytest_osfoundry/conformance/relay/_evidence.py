"""What a relay check's report shows of the relay: its requests, as the server saw them,
and what it wrote to stderr about the check's commands.

A relay check judges a relay by what it sent (and what it asked its engine), so a
failed relay check's report carries that record: the JSON report's ``relay`` entry
(``requests``: the last :data:`SHOWN` of them, oldest first, each with the seconds since
the check's first request, method, action, command id, the status it was answered
and its body cut to :data:`BODY_CHARS` characters; ``total``; ``stderr_tail``: the
relay's last stderr lines; ``stderr_about_commands``: its stderr lines that name one of
the check's commands, :data:`WINDOW` lines around each, at most :data:`EXCERPT_LINES`)
and sections of pytest's failure report listing the same requests a line each and
those stderr lines. Every text is masked with the run's secrets. The report's
``requests`` count of a relay check is the number of requests its relay sent.

With ``--osf-relay-record=DIR`` every relay check, passed or failed, leaves its whole
record in ``DIR/<check id>.json`` (:func:`relay_record`): each request with its whole
body and that body's length as ``JSON.stringify`` counts it, what the server answered,
the driver's runs and cancels, and the same stderr lines.

It sits beside the report hook, outside the ``relay`` package (whose ``__init__`` loads the
relay machinery), and imports nothing heavy: the hook loads it in every suite run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_osfoundry._jslength import js_stringify_length
from pytest_osfoundry.client import mask_token

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.relay._harness import RelayConformance
    from pytest_osfoundry.conformance.relay._instrumented import RelayRequest

__all__ = [
    "BODY_CHARS",
    "EXCERPT_LINES",
    "RELAY_CONF",
    "SHOWN",
    "WINDOW",
    "relay_evidence",
    "relay_lines",
    "relay_record",
    "stderr_about",
    "stderr_lines",
    "write_relay_record",
]

RELAY_CONF = pytest.StashKey["RelayConformance"]()
"""The relay check's context, on its item (set by its fixture or the concurrent runner)."""

SHOWN = 20
"""How many of the relay's last requests a failed check's report shows."""

BODY_CHARS = 200
"""Where a shown request's body is cut."""

WINDOW = 2
"""Lines shown before and after each stderr line that names one of the check's commands."""

EXCERPT_LINES = 60
"""The most stderr lines about the commands a report shows (the first third and the last
two thirds of them when there are more)."""

LINE_CHARS = 300
"""Where a shown stderr line is cut."""


def _printable(text: str) -> str:
    """``text`` with any lone surrogate (half an emoji, JSON's ``\\ud83d``) written as its
    escape, so that the report can be written as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _body(request: RelayRequest) -> str:
    if request.body is None:
        text = request.raw.decode("utf-8", "replace")
    else:
        text = json.dumps(request.body, ensure_ascii=False, separators=(",", ":"))
    text = text if len(text) <= BODY_CHARS else text[: BODY_CHARS - 3] + "..."
    return _printable(text)


def stderr_about(texts: Sequence[str], command_ids: Sequence[str]) -> str:
    """The lines of ``texts`` (what each start of a relay wrote to stderr) that name one of
    ``command_ids`` in full, each with :data:`WINDOW` lines around it, gaps marked
    ``...``, each start headed when there were several; at most :data:`EXCERPT_LINES`
    lines, each cut to :data:`LINE_CHARS` characters. '' when no line names one."""
    ids = [c for c in dict.fromkeys(command_ids) if c]
    if not ids:
        return ""
    named = re.compile("|".join(re.escape(c) for c in ids))
    out: list[str] = []
    for number, text in enumerate(texts, start=1):
        lines = text.splitlines()
        hits = [i for i, line in enumerate(lines) if named.search(line)]
        if not hits:
            continue
        if len(texts) > 1:
            out.append(f"[relay start {number} of {len(texts)}]")
        kept = sorted({j for i in hits for j in range(i - WINDOW, i + WINDOW + 1)})
        kept = [j for j in kept if 0 <= j < len(lines)]
        previous = -1
        for j in kept:
            if previous >= 0 and j > previous + 1:
                out.append("...")
            line = lines[j]
            out.append(line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 3] + "...")
            previous = j
    if len(out) > EXCERPT_LINES:
        head = EXCERPT_LINES // 3
        tail = EXCERPT_LINES - head
        left = len(out) - head - tail
        out = [*out[:head], f"... ({left} lines left out) ...", *out[-tail:]]
    return _printable("\n".join(out))


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
    """The JSON report's ``relay`` entry for a failed relay check (texts ``mask``ed, and the
    check's own desktop token)."""

    def masked(text: str) -> str:
        return mask(mask_token(text, [conf.token]))

    requests = conf.requests()
    return {
        "requests": _entries(requests, masked),
        "total": len(requests),
        "stderr_tail": masked(conf.stderr_tail()),
        "stderr_about_commands": masked(stderr_about(conf.stderr_texts(), conf.command_ids)),
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


def stderr_lines(evidence: dict[str, Any]) -> str:
    """The relay's stderr of :func:`relay_evidence` for pytest's failure report: the lines
    about the check's commands, or its last lines when none names one."""
    about = evidence["stderr_about_commands"]
    if about:
        return f"lines naming the check's commands, {WINDOW} around each:\n{about}"
    tail = evidence["stderr_tail"]
    if tail:
        return f"no line names the check's commands; its last lines:\n{tail}"
    return "the relay wrote nothing to stderr"


def _full_entry(request: RelayRequest, start: float) -> dict[str, Any]:
    body: Any = request.body
    return {
        "at": round(request.at - start, 3),
        "method": request.method,
        "action": request.action,
        "command_id": request.command_id,
        "status": request.status,
        "bytes": len(request.raw),
        "units": js_stringify_length(body) if body is not None else None,
        "body": body if body is not None else request.raw.decode("utf-8", "replace"),
        "answer": request.answer,
    }


def relay_record(conf: RelayConformance, outcome: str, message: str | None) -> dict[str, Any]:
    """Everything a relay check judged, for ``--osf-relay-record``: every request whole
    (``units``: its body's length as ``JSON.stringify`` counts it, ``bytes``: as sent),
    the driver's runs and cancels, the check's commands, what it noted it measured, and
    the relay's stderr about the commands and its last lines; ``message`` is why it
    failed (``None`` when it did not)."""
    requests = conf.requests()
    start = requests[0].at if requests else 0.0
    return {
        "check": conf.check_id,
        "outcome": outcome,
        "message": message,
        "commands": list(dict.fromkeys(conf.command_ids)),
        "notes": list(conf.notes),
        "requests": [_full_entry(r, start) for r in requests],
        "driver": {
            "runs": [
                {
                    "at": round(r.at - start, 3),
                    "command_id": r.command_id,
                    "channel": r.channel,
                    "graph_session_id": r.graph_session_id,
                    "arguments": r.arguments,
                }
                for r in conf.runs
            ],
            "cancels": [
                {"at": round(c.at - start, 3), "command_id": c.command_id} for c in conf.cancels
            ],
        },
        "stderr_about_commands": stderr_about(conf.stderr_texts(), conf.command_ids),
        "stderr_tail": conf.stderr_tail(),
    }


def write_relay_record(folder: str | Path, record: dict[str, Any], secrets: Iterable[str]) -> Path:
    """Write ``record`` to ``folder/<check id>.json`` (ASCII JSON, ``secrets`` masked); the
    file's path."""
    path = Path(folder) / f"{record['check']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(mask_token(json.dumps(record, indent=1), secrets) + "\n", encoding="ascii")
    return path
