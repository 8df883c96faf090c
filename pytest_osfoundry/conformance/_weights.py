"""The order a batch's concurrent checks start in: the list's holders, then the longest.

Under ``--osf-concurrency`` the checks of a batch are handed to the pool in order of
these figures, most requests first (a stable sort, so equal ones keep the collection
order): a check sends its requests one after another, so against a far-away server a
long chain started last would keep the run waiting after everything else had ended
(the longest-first rule of scheduling many jobs on a few workers). A check not listed
here (a project's own) counts :data:`UNLISTED`. Only the order of the pre-run changes:
every check runs and reports as before.

Before all of them start the checks that hold the project's shared session list
(:data:`HOLDERS`, :mod:`~pytest_osfoundry.conformance._holds`): while one holds it,
every other check's sync waits, so the holds are best over while the other checks are
still at their first requests, and the holders of one list, started together, hold it
once instead of once each.

The figures are the ``requests`` of each check in the JSON report of a serial run
against ``--osf-target=embedded`` (MCP ``2026-07-28``);
``tests/conformance/test_conformance_weights.py`` fails, printing the table to put
here, when one is missing, stale or off.
"""

from __future__ import annotations

__all__ = ["HOLDERS", "REQUESTS", "UNLISTED", "order_key", "weight"]

UNLISTED = 3
"""What a check missing from :data:`REQUESTS` counts (the most common figure)."""

REQUESTS: dict[str, int] = {
    "D1-run-only-queues": 3,
    "D10-redelivered-until-started": 5,
    "D10-sync-commands": 2,
    "D10-sync-max-100": 4,
    "D10-sync-oldest-first": 3,
    "D10-sync-replaces": 4,
    "D13-project-disabled": 5,
    "D13-slug-changed": 7,
    "D13-unticked": 5,
    "D18-boundary-japanese": 4,
    "D18-boundary-served-whole": 4,
    "D18-truncated-no-partial": 7,
    "D3-cancel-graph-run": 1,
    "D3-exactly-four-tools": 1,
    "D3-four-tools-without-token": 1,
    "D3-get-graph-run": 1,
    "D3-list-graph-sessions": 1,
    "D3-run-graph-session": 1,
    "D3-same-tools-for-every-caller": 5,
    "D3-schemas-closed": 1,
    "D3-schemas-valid": 1,
    "D3-started-by-this-agent": 1,
    "D3-tools-list-without-token": 1,
    "D4-empty-before-share": 1,
    "D4-lists-last-sync": 2,
    "D5-unknown-run": 1,
    "D6-cancel-malformed-id": 4,
    "D6-cancel-other-account": 5,
    "D6-cancel-other-agent": 5,
    "D6-get-malformed-id": 4,
    "D6-get-other-account": 3,
    "D6-get-other-agent": 5,
    "D7-key-bounds": 2,
    "D7-key-required": 3,
    "D7-key-too-long": 3,
    "D7-key-too-short": 3,
    "D7-retry-same-key": 3,
    "D8-cancel-queued": 4,
    "D8-cancel-running": 6,
    "D9-command-id-uuid": 1,
    "R1-2025-06-18-initialize": 3,
    "R1-2025-11-25-initialize": 3,
    "R1-2026-07-28-caching-hints": 1,
    "R1-2026-07-28-discover": 1,
    "R1-2026-07-28-get-405": 1,
    "R1-2026-07-28-mcp-method-header": 2,
    "R1-2026-07-28-mcp-name-header": 2,
    "R1-2026-07-28-meta-required": 4,
    "R1-2026-07-28-result-type": 3,
    "R1-2026-07-28-unsupported-version": 1,
    "R1-bad-protocol-version": 3,
    "R1-eras-consistent": 0,
    "R1-initialize": 2,
    "R1-notification-202": 2,
    "R1-origin": 3,
    "R1-parse-error": 1,
    "R1-ping": 3,
    "R1-public-url": 2,
    "R1-session-bound-to-agent": 9,
    "R1-unknown-method": 1,
    "R1-unknown-tool": 1,
    "R1-wire-schema-discover": 1,
    "R1-wire-schema-error": 7,
    "R1-wire-schema-initialize": 4,
    "R1-wire-schema-tools-call": 7,
    "R1-wire-schema-tools-list": 7,
    "R10-control": 6,
    "R11-cancelled-after-agent-cancel": 6,
    "R11-complete-answer": 6,
    "R11-concurrent-same-completion": 11,
    "R11-conflict-409": 8,
    "R11-never-started-completed-refused": 3,
    "R11-never-started-failed-accepted": 3,
    "R11-oversized-413": 4,
    "R11-redelivery-200": 6,
    "R11-size-parsed-not-raw": 4,
    "R11-size-utf16-units": 7,
    "R12-agent-token-403": 7,
    "R12-no-token-401": 3,
    "R12-other-owner-sync": 2,
    "R12-unknown-token-401": 3,
    "R13-other-owner-404": 5,
    "R13-unknown-command-404": 3,
    "R2-desktop-token-refused": 3,
    "R2-desktop-token-status": 2,
    "R2-insufficient-scope-403": 3,
    "R2-query-token-refused": 3,
    "R2-read-token-cannot-cancel": 3,
    "R2-read-token-cannot-run": 3,
    "R2-read-token-reads": 3,
    "R2-resource-metadata": 2,
    "R2-unauthenticated-401": 4,
    "R2-unauthenticated-refused": 5,
    "R3-error-shape": 1,
    "R3-extra-property": 3,
    "R3-missing-property": 1,
    "R3-project-not-connected": 1,
    "R3-project-not-found": 1,
    "R3-session-not-found": 3,
    "R3-session-other-account": 3,
    "R3-success-shape": 2,
    "R3-types-cancel": 3,
    "R3-types-get": 1,
    "R3-types-list": 3,
    "R3-types-null": 11,
    "R3-types-run": 7,
    "R3-wrong-type": 3,
    "R4-replay-current-status": 3,
    "R4-ticket-fields": 1,
    "R5-concurrent-same-key": 10,
    "R5-different-arguments": 3,
    "R5-different-session": 3,
    "R5-key-per-agent": 3,
    "R6-cancelled-queued-view": 3,
    "R6-completed-view": 4,
    "R6-error-at-most-2000": 4,
    "R6-failed-view": 4,
    "R6-queued-view": 2,
    "R6-running-view": 3,
    "R7-cancel-queued-answer": 2,
    "R7-cancel-running-answer": 3,
    "R7-cancel-terminal-unchanged": 6,
    "R7-cancel-unknown": 2,
    "R8-default-limit": 3,
    "R8-limit": 3,
    "R8-session-fields": 2,
    "R9-start-cancelled": 4,
    "R9-start-running": 3,
    "R9-start-terminal-409": 8,
    "R9-start-twice": 3,
}
"""Requests each rule-book check sends (a serial run against the reference server)."""


HOLDERS = frozenset({"R8-default-limit", "D10-sync-replaces", "D10-sync-max-100"})
"""The rule book's checks that hold the shared session list (``c.desktop.changing_list``):
they start first. ``tests/conformance/test_conformance_concurrency.py`` fails when a
check holds the list and is missing here, or is here and holds nothing."""


def order_key(check_id: str) -> tuple[bool, int]:
    """Sorts a batch's concurrent checks: the :data:`HOLDERS` first, then by
    :func:`weight`, most first (ties keep their order in a stable sort)."""
    return (check_id not in HOLDERS, -weight(check_id))


def weight(check_id: str) -> int:
    """How many requests ``check_id`` is expected to send (:data:`UNLISTED` if unknown)."""
    return REQUESTS.get(check_id, UNLISTED)
