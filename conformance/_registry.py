"""What a conformance check is: its id, rule, level, area, SPEC reference and sentence.

A check is a function taking the ``osf_conf`` fixture, decorated with :func:`check`::

    @check("D6-get-other-agent", "Another agent reading a real command id gets ...")
    def check_get_other_agent(osf_conf: Conformance) -> None: ...

The decorator attaches a :class:`CheckInfo` (``fn._osf_check``) and the level marker
(``documented`` or ``reconstructed``); the plugin collects each such function as one
test item whose name *is* the check id, so ``test_access.py::D6-get-other-agent`` is
its node id and ``-k D6`` selects the rule. :data:`RULES` says, once per SPEC rule,
where it comes from, its level, its report area and why the kit checks it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal, TypeVar

import pytest

__all__ = [
    "AREAS",
    "RULES",
    "CheckInfo",
    "Level",
    "Rule",
    "all_checks",
    "check",
    "check_info",
    "rule_of",
]

Level = Literal["documented", "reconstructed"]

#: Report areas, in the order the terminal summary and the Markdown table use.
AREAS: tuple[str, ...] = (
    "schema",
    "queue",
    "idempotency",
    "cancel",
    "access",
    "scopes",
    "re-check",
    "truncation",
    "relay API",
)

_CHECK_ID = re.compile(r"(?P<rule>[DR]\d{1,2})-[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class Rule:
    """One rule of docs/spec.md: its id, title, section, level, default area and rationale."""

    rule_id: str
    title: str
    spec: str
    level: Level
    area: str
    why: str
    source: str


_SOURCES = {
    "D1": "osFoundry's tool descriptions (run_graph_session queues; reading works anywhere)",
    "D3": "osFoundry's published tool listing",
    "D4": "a live response of osFoundry's server",
    "D5": "a live response of osFoundry's server",
    "D6": "osFoundry's tool descriptions ('started by this Connected agent') and the "
    "seed's simulation of another agent reading a run",
    "D7": "osFoundry's tool schema and its CLI guide",
    "D8": "osFoundry's tool description and the desktop relay's source",
    "D9": "the desktop relay's source (it refuses non-UUID command ids)",
    "D10": "the desktop relay's source (useConnectedGraphRelay.ts), as the seed describes it",
    "D13": "the desktop relay's source (useConnectedGraphRelay.ts)",
    "D18": "the desktop relay's source and the seed's truncation figures",
}


def _rule(rule_id: str, title: str, spec: str, area: str, why: str) -> Rule:
    level: Level = "documented" if rule_id.startswith("D") else "reconstructed"
    source = _SOURCES.get(
        rule_id,
        "the kit's reconstruction: osFoundry's server code is not public, so the kit "
        "fixes one reasonable behaviour where the seed is silent",
    )
    return Rule(rule_id, title, spec, level, area, why, source)


#: Every rule the suite checks, by id (docs/spec.md).
RULES: dict[str, Rule] = {
    r.rule_id: r
    for r in (
        _rule(
            "D1",
            "run_graph_session only queues",
            "docs/spec.md#d1",
            "queue",
            "The server never runs a Graph: the owner's desktop does. An agent that "
            "expects a result in the start call's answer is wired wrong; the ticket "
            "must say `queued` and the run must wait for the desktop.",
        ),
        _rule(
            "D3",
            "tools/list: the four documented tools",
            "docs/spec.md#d3",
            "schema",
            "Agents decide what to call from the tool listing alone. A renamed property, "
            "a looser key length or a wrong scope changes what every agent does.",
        ),
        _rule(
            "D4",
            "list_graph_sessions shows what the desktop shared",
            "docs/spec.md#d4",
            "queue",
            "The documented live answer for a connected project with nothing shared is "
            "`{project_id, sessions: []}`; after a sync the list is what the relay uploaded.",
        ),
        _rule(
            "D5",
            "Unknown run: `Graph run not found or access removed`",
            "docs/spec.md#d5",
            "access",
            "The documented live answer for an unknown command id; D6 builds on it.",
        ),
        _rule(
            "D6",
            "A run is visible only to the agent that started it",
            "docs/spec.md#d6",
            "access",
            "A leaked command id must confirm nothing: another agent's real id, a fresh "
            "UUID and a malformed id must get the same bytes back, and a cancel by anyone "
            "else must change nothing.",
        ),
        _rule(
            "D7",
            "idempotency_key: required, 8-128 characters, retries reuse it",
            "docs/spec.md#d7",
            "idempotency",
            "A retry after a lost reply must not start the Graph twice; the key's bounds "
            "are part of the documented schema.",
        ),
        _rule(
            "D8",
            "The two cancel cases",
            "docs/spec.md#d8",
            "cancel",
            "A queued run's cancel is final at once and the desktop must never see the "
            "command; a running run's cancel is a flag the desktop's control poll reads.",
        ),
        _rule(
            "D9",
            "Command ids are UUIDs",
            "docs/spec.md#d9",
            "queue",
            "The desktop relay refuses any command id that is not a UUID (D15), so a "
            "server that hands out other ids queues runs that never run.",
        ),
        _rule(
            "D10",
            "The relay's sync",
            "docs/spec.md#d10",
            "relay API",
            "The sync is how the desktop shares sessions and learns of queued work: it "
            "replaces the shared list and returns every queued command, oldest first, "
            "with the slug it was queued under.",
        ),
        _rule(
            "D13",
            "Re-check before run",
            "docs/spec.md#d13",
            "re-check",
            "Consent is re-checked on the desktop just before a run. The server must "
            "accept the relay's `cancelled` completion for a command it never started, "
            "show the agent the exact message, and keep the queued-time slug so that a "
            "rename is visible.",
        ),
        _rule(
            "D18",
            "Bounded results, all or nothing",
            "docs/spec.md#d18",
            "truncation",
            "The relay posts the whole result when JSON.stringify of the completion is at "
            "most 100,000 characters, else `result_truncated: true` alone. The server must "
            "serve what it stored: a result at the boundary whole, never a partial one.",
        ),
        _rule(
            "R1",
            "MCP Streamable HTTP transport",
            "docs/spec.md#r1",
            "schema",
            "Every MCP client relies on JSON-RPC 2.0 over Streamable HTTP behaving as the "
            "MCP specification says: negotiated versions, 202 for notifications, the "
            "standard error codes.",
        ),
        _rule(
            "R2",
            "OAuth 2 resource server",
            "docs/spec.md#r2",
            "scopes",
            "A caller without a token or without the tool's scope must be refused and "
            "change nothing (checked at every level: D3 documents the scopes); the exact "
            "401/403 and WWW-Authenticate shapes follow the MCP authorization spec.",
        ),
        _rule(
            "R3",
            "Result and error shapes",
            "docs/spec.md#r3",
            "schema",
            "Agents read `structuredContent`, or `content[0].text`; domain errors are "
            "`isError` results carrying the message alone; schema violations queue nothing.",
        ),
        _rule(
            "R4",
            "The run_graph_session ticket",
            "docs/spec.md#r4",
            "queue",
            "The ticket tells the agent what it started and when polling becomes useful; "
            "a replay returns the same run with its current status.",
        ),
        _rule(
            "R5",
            "Idempotency keys belong to one agent",
            "docs/spec.md#r5",
            "idempotency",
            "A key reused with other arguments is a bug in the caller and must be refused; "
            "two agents that pick the same key must not share, or learn of, each other's run.",
        ),
        _rule(
            "R6",
            "The get_graph_run view",
            "docs/spec.md#r6",
            "queue",
            "Agents poll this view: its fields, statuses and timestamps, and relay-reported "
            "fields exactly as reported, must be dependable.",
        ),
        _rule(
            "R7",
            "The cancel_graph_run answer",
            "docs/spec.md#r7",
            "cancel",
            "The cancel answer tells the agent which of the two cancel cases happened.",
        ),
        _rule(
            "R8",
            "The list_graph_sessions answer",
            "docs/spec.md#r8",
            "queue",
            "Sessions carry the six fields the desktop uploaded, at most `limit` of them "
            "(50 by default).",
        ),
        _rule(
            "R9",
            "Relay start",
            "docs/spec.md#r9",
            "relay API",
            "Starting tells the desktop whether to run the command at all: a command the "
            "agent cancelled meanwhile must not run, a finished one cannot restart.",
        ),
        _rule(
            "R10",
            "Relay control poll",
            "docs/spec.md#r10",
            "relay API",
            "The desktop's 3 s control poll is how a running cancel reaches the Graph.",
        ),
        _rule(
            "R11",
            "Relay completion",
            "docs/spec.md#r11",
            "relay API",
            "Completions are redelivered from the desktop's outbox, so the same body twice "
            "is harmless; a terminal run never changes; the 100,000-character bound is "
            "measured as JSON.stringify measures it.",
        ),
        _rule(
            "R12",
            "Relay authentication",
            "docs/spec.md#r12",
            "scopes",
            "Only the owner's desktop may act as the relay: no token is 401, an agent's "
            "token is 403, and a desktop token works only for its owner's projects.",
        ),
        _rule(
            "R13",
            "Relay paths leak nothing",
            "docs/spec.md#r13",
            "relay API",
            "An unknown command and another owner's command both answer 404, so the relay "
            "API confirms no more than the MCP tools do.",
        ),
    )
}


@dataclass(frozen=True)
class CheckInfo:
    """One conformance check's metadata.

    ``check_id`` is ``<RULE>-<slug>``; ``asserts`` is the one sentence saying what the
    check asserts; ``order`` is the definition order (for stable reports).
    """

    check_id: str
    rule: str
    level: Level
    area: str
    spec: str
    asserts: str
    order: int
    opt_in: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The metadata as plain JSON-ready values."""
        return {
            "id": self.check_id,
            "rule": self.rule,
            "level": self.level,
            "area": self.area,
            "spec": self.spec,
            "asserts": self.asserts,
        }


def rule_of(check_id: str) -> str:
    """The rule a check id belongs to: the part before the first ``-``."""
    return check_id.split("-", 1)[0]


_F = TypeVar("_F", bound=Callable[..., Any])
_counter = [0]


def check(
    check_id: str,
    asserts: str,
    *,
    level: Level | None = None,
    area: str | None = None,
    opt_in: str | None = None,
) -> Callable[[_F], _F]:
    """Declare a function as the conformance check ``check_id``.

    ``asserts`` is the sentence the reports and ``docs/rules.md`` print. ``level``
    and ``area`` default to the rule's (:data:`RULES`). ``opt_in`` names the option
    that enables a check that does not run by default (the check is deselected
    without it).

    Raises:
        ValueError: the id is not ``<RULE>-<slug>`` of a known rule, the sentence is
            empty, or the area is unknown.
    """
    match = _CHECK_ID.fullmatch(check_id)
    if match is None or match["rule"] not in RULES:
        raise ValueError(f"check id {check_id!r} must be '<RULE>-<slug>' of a known rule")
    if not asserts.strip():
        raise ValueError(f"check {check_id}: say in one sentence what it asserts")
    rule = RULES[match["rule"]]
    chosen_area = area or rule.area
    if chosen_area not in AREAS:
        raise ValueError(f"check {check_id}: unknown area {chosen_area!r}")
    _counter[0] += 1
    info = CheckInfo(
        check_id=check_id,
        rule=rule.rule_id,
        level=level or rule.level,
        area=chosen_area,
        spec=rule.spec,
        asserts=" ".join(asserts.split()),
        order=_counter[0],
        opt_in=opt_in,
    )

    def decorate(fn: _F) -> _F:
        fn._osf_check = info  # type: ignore[attr-defined]
        marker = pytest.mark.documented if info.level == "documented" else pytest.mark.reconstructed
        marked: _F = marker(fn)
        return marked

    return decorate


def check_info(obj: object) -> CheckInfo | None:
    """The :class:`CheckInfo` of a check function (or a test item's function), if any."""
    info = getattr(obj, "_osf_check", None)
    return info if isinstance(info, CheckInfo) else None


def _check_modules() -> list[ModuleType]:
    package = importlib.import_module("pytest_osfoundry.conformance.checks")
    names = sorted(
        m.name for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("test_")
    )
    return [importlib.import_module(f"{package.__name__}.{name}") for name in names]


def all_checks() -> list[CheckInfo]:
    """Every check of the installed suite, in report order (area, then definition).

    Raises:
        ValueError: two checks share an id.
    """
    seen: dict[str, CheckInfo] = {}
    for module in _check_modules():
        for value in vars(module).values():
            info = check_info(value)
            if info is None:
                continue
            if info.check_id in seen and seen[info.check_id] is not info:
                raise ValueError(f"two checks are named {info.check_id}")
            seen[info.check_id] = info
    return sorted(seen.values(), key=sort_key)


def sort_key(info: CheckInfo) -> tuple[int, int]:
    """Report order: by area (:data:`AREAS`), then by definition order."""
    return (AREAS.index(info.area), info.order)
