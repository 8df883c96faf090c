"""What a conformance check is: its id, rule, level, area, SPEC reference and sentence.

A check is a function taking the ``osf_conf`` fixture, decorated with :func:`check`::

    @check("D6-get-other-agent", "Another agent reading a real command id gets ...")
    def check_get_other_agent(osf_conf: Conformance) -> None: ...

The decorator attaches a :class:`CheckInfo` (``fn._osf_check``) and the level marker
(``documented`` or ``reconstructed``); the plugin collects each such function as one
test item whose name *is* the check id, so ``test_access.py::D6-get-other-agent`` is
its node id and ``-k D6`` selects the rule. :data:`RULES` says, once per SPEC rule,
where it comes from, its level, its report area and why the kit checks it; that
prose lives in the data file ``rules.toml`` beside this module, not in Python.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeVar

import pytest

from pytest_osfoundry.conformance.scheduling._internal import (
    DEFAULT,
    Needs,
    Schedule,
    needs_of,
    schedule_of_flags,
)
from pytest_osfoundry.conformance.suite._checkids import (
    BOOK_RULE_ID,
    CHECK_ID,
    is_extra_rule_id,
    rule_of,
)
from pytest_osfoundry.conformance.suite._extra import ExtraRule, Level, register_rule
from pytest_osfoundry.conformance.suite._layout import (
    AGENT_CHECKS,
    RELAY_CHECKS,
    check_modules,
    import_check_module,
    read_rulebook_file,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "AGENT_AREA",
    "AREAS",
    "OPT_INS",
    "RELAY_AREA",
    "RULES",
    "RULES_FILE",
    "SPEC_FILE",
    "SPEC_REFERENCE",
    "CheckInfo",
    "Level",
    "Rule",
    "RulesFileError",
    "all_checks",
    "check",
    "check_info",
    "find_check",
    "parse_rules",
    "rule_of",
]

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
    "relay",
    "agent",
)

RELAY_AREA = "relay"
"""The report area of the relay checks (``--osf-relay-command``)."""

AGENT_AREA = "agent"
"""The report area of the agent checks (``--osf-agent-command``), the last of :data:`AREAS`."""


@dataclass(frozen=True)
class Rule:
    """One rule of conformance/spec.md, as ``rules.toml`` describes it.

    ``rule_id``, ``title``, ``spec`` (the rule's anchor in conformance/spec.md),
    ``level`` (``D`` rules are documented, ``R`` and ``A`` rules reconstructed), ``area`` (the
    default report area), ``why`` (why the kit checks it), ``source`` (where the
    behaviour comes from) and ``how`` (what a reader of a failure needs to know, or ``None``).
    """

    rule_id: str
    title: str
    spec: str
    level: Level
    area: str
    why: str
    source: str
    how: str | None = None


RULES_FILE = "rules.toml"
"""The data file, shipped inside the suite's package, holding every rule's prose."""

SPEC_FILE = "spec.md"
"""The rule book (the repository's ``conformance/spec.md``), shipped in the rule book's package."""

SPEC_REFERENCE = "pytest_osfoundry/conformance/rulebook/" + SPEC_FILE
"""Where the rule book is in an installed kit, relative to the folder that holds the
``pytest_osfoundry`` package (``site-packages``); in a checkout the same file is
``conformance/spec.md``. A check's :attr:`CheckInfo.spec` is this path and the rule's
anchor, ``...spec.md#d6``."""

_REQUIRED = ("title", "spec", "area", "why")
_OPTIONAL = ("source", "how")


class RulesFileError(ValueError):
    """``rules.toml`` is not what the suite needs; the message names the rule and field."""


def parse_rules(text: str, where: str = RULES_FILE) -> dict[str, Rule]:
    """The rules described by ``text`` (the TOML of :data:`RULES_FILE`), by id.

    Raises:
        RulesFileError: the text is not TOML, or a rule has a bad id, a missing, empty
            or unknown field, or an unknown area; the message starts with ``where``.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise RulesFileError(f"{where}: not valid TOML: {err}") from None
    default_source = data.get("reconstructed_source")
    tables = data.get("rules")
    if not isinstance(default_source, str) or not default_source.strip():
        raise RulesFileError(f"{where}: reconstructed_source must be a non-empty string")
    if not isinstance(tables, dict) or not tables:
        raise RulesFileError(f"{where}: no [rules.<ID>] tables")
    rules: dict[str, Rule] = {}
    for rule_id, table in tables.items():
        if not BOOK_RULE_ID.fullmatch(rule_id) or not isinstance(table, dict):
            raise RulesFileError(f"{where}: [rules.{rule_id}] is not a rule id like D6 or R11")
        unknown = sorted(set(table) - set(_REQUIRED) - set(_OPTIONAL))
        if unknown:
            raise RulesFileError(f"{where}: [rules.{rule_id}] has unknown fields {unknown}")
        for name in (*_REQUIRED, *_OPTIONAL):
            value = table.get(name)
            if (name in _REQUIRED or value is not None) and (
                not isinstance(value, str) or not value.strip()
            ):
                raise RulesFileError(f"{where}: [rules.{rule_id}] needs a non-empty {name}")
        if table["area"] not in AREAS:
            raise RulesFileError(
                f"{where}: [rules.{rule_id}] area {table['area']!r} is not one of {AREAS}"
            )
        level: Level = "documented" if rule_id.startswith("D") else "reconstructed"
        rules[rule_id] = Rule(
            rule_id=rule_id,
            title=table["title"],
            spec=table["spec"],
            level=level,
            area=table["area"],
            why=table["why"],
            source=table.get("source", default_source),
            how=table.get("how"),
        )
    return rules


def _load_rules() -> dict[str, Rule]:
    return parse_rules(read_rulebook_file(RULES_FILE))


#: Every rule the suite checks, by id (conformance/spec.md), read from :data:`RULES_FILE`.
RULES: dict[str, Rule] = _load_rules()


@dataclass(frozen=True)
class CheckInfo:
    """One conformance check's metadata.

    ``check_id`` is ``<RULE>-<slug>``; ``spec`` is the rule's section in the installed
    rule book (``pytest_osfoundry/conformance/rulebook/spec.md#d6``, see :data:`SPEC_REFERENCE`);
    ``asserts`` is the one sentence saying what the check asserts; ``order`` is the
    definition order (for stable reports);
    ``schedule`` is what the check needs of a concurrent batch, in one value
    (:mod:`~pytest_osfoundry.conformance.scheduling._protocol`: ``"alongside"``,
    ``"alone"``, ``"last"``, ``"shares-list"``, ``"long-chain"``, ...), and ``needs`` what
    the runner reads of it; neither changes what the check does or its verdict, only
    when a batch runs it. The former flags (``exclusive``, ``last``, ``waits_within``,
    ``shared_evidence``, ``holds_list``, ``long_chain``) read ``needs``.
    """

    check_id: str
    rule: str
    level: Level
    area: str
    spec: str
    asserts: str
    order: int
    opt_in: str | None = None
    schedule: Schedule = DEFAULT
    needs: Needs = field(default=None)  # type: ignore[assignment]  # made from schedule

    def __post_init__(self) -> None:
        if self.needs is None:
            object.__setattr__(self, "needs", needs_of(self.schedule, self.check_id))

    @property
    def exclusive(self) -> bool:
        """The check runs alone (``schedule="alone"`` or ``"alone-within"``)."""
        return self.needs.alone

    @property
    def last(self) -> bool:
        """The check runs after the others (``schedule="last"`` or ``"last-within"``)."""
        return self.needs.last

    @property
    def waits_within(self) -> bool:
        """The check marks the part that waits (``"alone-within"``, ``"last-within"``)."""
        return self.needs.waits_within

    @property
    def shared_evidence(self) -> bool:
        """The check may send no request of its own (``"shared-evidence"``)."""
        return self.needs.shared_evidence

    @property
    def holds_list(self) -> bool:
        """The check holds the shared session list (``"shares-list"``)."""
        return self.needs.holds_list

    @property
    def long_chain(self) -> bool:
        """The check sends a long chain of requests (``"long-chain"``)."""
        return self.needs.long_chain

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


OPT_INS: tuple[str, ...] = ("--osf-timing", "--osf-relay-realtime", "--osf-agent-restart")
"""The options a check may be opt-in to (the suite's plugin deselects it without them)."""

_F = TypeVar("_F", bound=Callable[..., Any])
_counter = [0]


def check(
    check_id: str,
    asserts: str,
    *,
    level: Level | None = None,
    area: str | None = None,
    opt_in: str | None = None,
    schedule: Schedule | None = None,
    rule: ExtraRule | None = None,
    exclusive: bool = False,
    last: bool = False,
    waits_within: bool = False,
    shared_evidence: bool = False,
    holds_list: bool = False,
    long_chain: bool = False,
) -> Callable[[_F], _F]:
    """Declare a function as the conformance check ``check_id``.

    ``asserts`` is the sentence the reports and ``docs/rules.md`` print. ``level``
    and ``area`` default to the rule's (:data:`RULES`). ``opt_in`` names the option
    that enables a check that does not run by default (the check is deselected
    without it). ``schedule`` says what the check needs of a concurrent batch, in one
    value (default ``"alongside"``; see
    :mod:`~pytest_osfoundry.conformance.scheduling._protocol`, which says when to choose
    each): ``"alone"`` when its evidence is time (a latency, a deadline, a race),
    ``"alone-within"`` when only the part inside ``with c.alone():`` is,
    ``"last"``/``"last-within"`` when it judges what the whole run received,
    ``"shares-list"`` when it holds the session list (``c.desktop.changing_list()``),
    ``"long-chain"`` when it sends about six requests or more one after another,
    ``"shared-evidence"`` when it judges what the suite found once per process.
    The former keywords ``exclusive``, ``last``, ``waits_within``, ``shared_evidence``,
    ``holds_list`` and ``long_chain`` still work, with a :class:`DeprecationWarning`
    naming the value to write.

    A project's own check (``X-ACME-<slug>``, see
    :mod:`~pytest_osfoundry.conformance.suite._extra`) passes its rule's prose as ``rule``
    (an :class:`~pytest_osfoundry.conformance.suite._extra.ExtraRule` of the same rule id);
    its ``spec`` is the rule's, and its level and area default to the rule's.

    Raises:
        ValueError: the id is not ``<RULE>-<slug>`` of a known rule (or of ``rule``),
            the sentence is empty, the area is unknown, ``rule`` is given for a
            rule book id or missing for an ``X-`` one, the schedule is unknown, or
            ``schedule`` is given with a former keyword.
    """
    match = CHECK_ID.fullmatch(check_id)
    if match is None:
        raise ValueError(
            f"check id {check_id!r} must be '<RULE>-<slug>' of a known rule (D6-..., R11-..., "
            "or X-NAME-... for a project's own rule)"
        )
    if not asserts.strip():
        raise ValueError(f"check {check_id}: say in one sentence what it asserts")
    flags = {
        "exclusive": exclusive,
        "last": last,
        "waits_within": waits_within,
        "shared_evidence": shared_evidence,
        "holds_list": holds_list,
        "long_chain": long_chain,
    }
    if schedule is not None:
        if any(flags.values()):
            former = ", ".join(f"{name}=True" for name, given in flags.items() if given)
            raise ValueError(
                f"check {check_id}: schedule={schedule!r} says it all; drop {former}"
            )
        chosen, needs = schedule, needs_of(schedule, check_id)
    else:
        chosen, needs = schedule_of_flags(check_id, flags)
    if opt_in is not None and opt_in not in OPT_INS:
        raise ValueError(
            f"check {check_id}: opt_in {opt_in!r} is not an option the suite honours "
            f"({', '.join(OPT_INS)})"
        )
    if is_extra_rule_id(match["rule"]):
        if rule is None:
            raise ValueError(f"check {check_id}: an X- check needs rule=ExtraRule(...) prose")
        if rule.rule_id != match["rule"]:
            raise ValueError(
                f"check {check_id}: its rule is {match['rule']}, but rule= is {rule.rule_id}"
            )
        rule = register_rule(rule)
        rule_id, default_level, default_area = rule.rule_id, rule.level, rule.area
        spec = rule.spec
        chosen_area = area or default_area
        if not chosen_area.strip():
            raise ValueError(f"check {check_id}: the area must be a non-empty text")
    else:
        if rule is not None:
            raise ValueError(
                f"check {check_id}: rule= is for X- rules; the rule book's prose is in rules.toml"
            )
        if match["rule"] not in RULES:
            raise ValueError(f"check id {check_id!r} must be '<RULE>-<slug>' of a known rule")
        known = RULES[match["rule"]]
        rule_id, default_level, default_area = known.rule_id, known.level, known.area
        spec = f"{SPEC_REFERENCE}#{known.spec.partition('#')[2]}"
        chosen_area = area or default_area
        if chosen_area not in AREAS:
            raise ValueError(f"check {check_id}: unknown area {chosen_area!r}")
    _counter[0] += 1
    info = CheckInfo(
        check_id=check_id,
        rule=rule_id,
        level=level or default_level,
        area=chosen_area,
        spec=spec,
        asserts=" ".join(asserts.split()),
        order=_counter[0],
        opt_in=opt_in,
        schedule=chosen,
        needs=needs,
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


def _check_modules(include_relay: bool = False) -> list[ModuleType]:
    # The outside-command suites' checks: the relay's and the agent's.
    outside = check_modules(RELAY_CHECKS) + check_modules(AGENT_CHECKS) if include_relay else []
    names = check_modules() + outside
    return [import_check_module(name) for name in names]


def all_checks(*, include_relay: bool = False) -> list[CheckInfo]:
    """Every server check of the installed suite, in report order (area, then definition);
    with ``include_relay``, the relay and agent checks (``--osf-relay-command``,
    ``--osf-agent-command``) as well.

    Raises:
        ValueError: two checks share an id.
    """
    seen: dict[str, CheckInfo] = {}
    for module in _check_modules(include_relay):
        for value in vars(module).values():
            info = check_info(value)
            if info is None:
                continue
            if info.check_id in seen and seen[info.check_id] is not info:
                raise ValueError(f"two checks are named {info.check_id}")
            seen[info.check_id] = info
    return sorted(seen.values(), key=sort_key)


def find_check(check_id: str) -> Callable[..., None]:
    """The function of the installed check named ``check_id``, server or relay check
    (to call it outside pytest).

    Raises:
        KeyError: no check has that id (the message names it).
    """
    for module in _check_modules(include_relay=True):
        for value in vars(module).values():
            info = check_info(value)
            if info is not None and info.check_id == check_id:
                found: Callable[..., None] = value
                return found
    raise KeyError(f"no check is named {check_id!r}")


def sort_key(info: CheckInfo) -> tuple[int, str, int]:
    """Report order: by area (:data:`AREAS`, then extra checks' areas by name), then by
    definition order."""
    if info.area in AREAS:
        return (AREAS.index(info.area), "", info.order)
    return (len(AREAS), info.area, info.order)
