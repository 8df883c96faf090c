"""The grammar of rule ids and check ids, for the rule book's checks and extra ones.

A check id is ``<RULE>-<slug>``. The rule book's rules are ``D<n>`` (documented)
and ``R<n>`` (reconstructed): ``D6-get-other-agent``. A project's own rules (extra
checks, :class:`~pytest_osfoundry.conformance.suite._extra.ExtraRule`) live in the
namespace ``X-<NAME>``, upper case, so that ``-k X-ACME`` selects them and no id of
theirs can ever collide with one of the rule book: ``X-ACME-rate-limit-header``.
The registry, the baseline reader and the reports read ids through this module only.

A check id never changes meaning; when a check moves to another rule its old id is
kept in :data:`RENAMED_CHECKS`, so a team's baseline and ``-k`` still name it.
"""

from __future__ import annotations

import re

__all__ = [
    "BOOK_RULE_ID",
    "CHECK_ID",
    "EXTRA_RULE_ID",
    "RENAMED_CHECKS",
    "current_check_id",
    "former_check_ids",
    "is_check_id",
    "is_extra_rule_id",
    "rule_of",
]

BOOK_RULE_ID = re.compile(r"[DRA]\d{1,2}")
"""A rule of the rule book (``conformance/rules.toml``): ``D6``, ``R11``, and the agent
rules ``A1``-``A6`` (the seed's advice made checkable, reconstructed)."""

EXTRA_RULE_ID = re.compile(r"X-[A-Z][A-Z0-9]{0,19}")
"""A project's own rule: ``X-`` and an upper-case name of up to 20 characters."""

_SLUG = r"[a-z0-9]+(?:-[a-z0-9]+)*"
CHECK_ID = re.compile(
    rf"(?P<rule>{BOOK_RULE_ID.pattern}|{EXTRA_RULE_ID.pattern})-(?P<slug>{_SLUG})"
)
"""A check id: its rule (``rule`` group) and a lower-case slug."""


RENAMED_CHECKS: dict[str, str] = {
    # 0.1.0: the lost-start check proves the relay rule R14, not the server's R9.
    "R9-relay-lost-start": "R14-relay-lost-start",
}
"""Old check id -> the id the check has now. A baseline entry with an old id counts as
the new one (:func:`current_check_id`); ``-k OLD`` selects the check
(:func:`former_check_ids`, its item's extra keywords)."""


def current_check_id(check_id: str) -> str:
    """The id a check has now: ``check_id`` itself unless it was renamed."""
    return RENAMED_CHECKS.get(check_id, check_id)


def former_check_ids(check_id: str) -> tuple[str, ...]:
    """The ids the check ``check_id`` had before (none for most checks)."""
    return tuple(old for old, new in RENAMED_CHECKS.items() if new == check_id)


def is_check_id(text: str) -> bool:
    """Whether ``text`` is a well-formed check id (of the rule book or an extra rule)."""
    return CHECK_ID.fullmatch(text) is not None


def is_extra_rule_id(rule_id: str) -> bool:
    """Whether ``rule_id`` names a project's own rule (``X-ACME``), not the rule book's."""
    return EXTRA_RULE_ID.fullmatch(rule_id) is not None


def rule_of(check_id: str) -> str:
    """The rule a check id belongs to: ``D6`` of ``D6-get-other-agent``, ``X-ACME`` of
    ``X-ACME-rate-limit-header``; for a malformed id, the part before the first ``-``."""
    match = CHECK_ID.fullmatch(check_id)
    if match is not None:
        return match["rule"]
    return check_id.split("-", 1)[0]
