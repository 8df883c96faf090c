"""What a check declares it needs of the scheduler, in one value: ``@check(..., schedule=...)``.

A check author says what the check needs, not how the runner works; the concurrent
runner of every suite (:mod:`~pytest_osfoundry.conformance.scheduling._runner`) reads
the :class:`Needs` each value stands for. The values only decide when a concurrent
batch runs the check; serially (``--osf-concurrency 1``, ``--osf-relay-concurrency 1``)
every value runs it as it is.

The values are :data:`SCHEDULES` (what the runner reads of each) and :data:`WHEN`
(when to choose each, one line; ``docs/extra-checks.md``'s table says the same to a
check author): ``"alongside"`` (the default), ``"alone"`` (its evidence is time:
"tools/list answers within 2 s" is such a check), ``"alone-within"``, ``"last"``,
``"last-within"``, ``"shares-list"``, ``"long-chain"``, ``"shared-evidence"``.

A check that declares ``"alone-within"``, ``"last-within"`` or ``"shares-list"`` and
returns without waiting there (or holding the list) fails, naming the declaration; one
that waits there without the declaration gets a :class:`TypeError` naming the value.

What the runner says back is as plain: a check a stopped batch never ran is reported
with :data:`NOT_RUN_PREFIX` and the reason (:data:`INTERRUPTED` for Ctrl-C), the words
the end of the run uses for every check it never reached
(:mod:`~pytest_osfoundry.conformance.reporting._outcome`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT",
    "INTERRUPTED",
    "NOT_RUN_PREFIX",
    "SCHEDULES",
    "WHEN",
    "Needs",
    "Schedule",
    "needs_of",
    "schedule_of_flags",
]

Schedule = Literal[
    "alongside",
    "alone",
    "alone-within",
    "last",
    "last-within",
    "shares-list",
    "long-chain",
    "shared-evidence",
]
"""What a check needs of the scheduler (see the module)."""

DEFAULT: Schedule = "alongside"
"""The schedule of a check that declares none."""

NOT_RUN_PREFIX = "not run: "
"""How the reason of every check a stopped run never reached starts."""

INTERRUPTED = "interrupted (Ctrl-C / KeyboardInterrupt)"
"""Why a run that Ctrl-C stopped did not go on (the report's ``stopped``)."""


@dataclass(frozen=True)
class Needs:
    """What the runner reads of one check's schedule.

    ``alone``: it runs with the target to itself; ``last``: after every other check;
    ``waits_within``: (with either) the check marks the part that needs it and the rest
    runs from the start of the batch; ``holds_list``: it holds the shared session list
    and starts first; ``long_chain``: it starts before the short ones;
    ``shared_evidence``: it may send no request of its own.
    """

    alone: bool = False
    last: bool = False
    waits_within: bool = False
    holds_list: bool = False
    long_chain: bool = False
    shared_evidence: bool = False


SCHEDULES: dict[Schedule, Needs] = {
    "alongside": Needs(),
    "alone": Needs(alone=True),
    "alone-within": Needs(alone=True, waits_within=True),
    "last": Needs(last=True),
    "last-within": Needs(last=True, waits_within=True),
    "shares-list": Needs(holds_list=True),
    "long-chain": Needs(long_chain=True),
    "shared-evidence": Needs(shared_evidence=True),
}
"""Each value and what the runner reads of it."""

WHEN: dict[Schedule, str] = {
    "alongside": "a few requests, judging only its own runs (the default)",
    "alone": "its evidence is time: a latency, a deadline, a race",
    "alone-within": "as alone, for the part inside `with c.alone():` only",
    "last": "it judges what the whole run received",
    "last-within": "as last, waiting at `c.after_the_rest()` only",
    "shares-list": "it shares another session list (`with c.desktop.changing_list():`)",
    "long-chain": "a chain of about six requests or more, one after another",
    "shared-evidence": "it judges what the suite found once per process; no request of its own",
}
"""When to choose each value: one line each (the recipe's table, the error's hint)."""


def needs_of(schedule: str, check_id: str) -> Needs:
    """What ``schedule`` stands for.

    Raises:
        ValueError: ``schedule`` is not one of :data:`SCHEDULES` (the message names the
            check and lists them with when to choose each).
    """
    try:
        return SCHEDULES[schedule]  # type: ignore[index]
    except (KeyError, TypeError):
        choices = "; ".join(f"{name!r}: {WHEN[name]}" for name in SCHEDULES)
        raise ValueError(
            f"check {check_id}: schedule {schedule!r} is not one of: {choices}"
        ) from None


_FLAGS = ("exclusive", "last", "waits_within", "shared_evidence", "holds_list", "long_chain")
"""The keywords ``@check`` took before ``schedule`` (deprecated, still honoured)."""


def schedule_of_flags(check_id: str, flags: dict[str, bool]) -> tuple[Schedule, Needs]:
    """The schedule and needs of a check declared with the former keywords (``flags``:
    those given true), with a :class:`DeprecationWarning` naming the value to write.

    The needs are exactly the flags given (any combination they allowed still runs as
    it did); the schedule is the value that names the check's main need.

    Raises:
        ValueError: ``exclusive`` with ``last``, or ``waits_within`` without either (as
            before).
    """
    given = {name for name in _FLAGS if flags.get(name)}
    if {"exclusive", "last"} <= given:
        raise ValueError(
            f"check {check_id}: exclusive (runs alone) and last (runs alongside the other "
            "last checks) contradict each other; choose one"
        )
    if "waits_within" in given and not given & {"exclusive", "last"}:
        raise ValueError(
            f"check {check_id}: waits_within says where an exclusive or last check waits; "
            "declare exclusive=True or last=True with it"
        )
    needs = Needs(
        alone="exclusive" in given,
        last="last" in given,
        waits_within="waits_within" in given,
        holds_list="holds_list" in given,
        long_chain="long_chain" in given,
        shared_evidence="shared_evidence" in given,
    )
    schedule = _closest(needs)
    if given:
        spelled = ", ".join(f"{name}=True" for name in _FLAGS if name in given)
        warnings.warn(
            f"@check({check_id!r}, ..., {spelled}) is deprecated: write "
            f"schedule={schedule!r} (what the check needs, in one value)",
            DeprecationWarning,
            stacklevel=3,
        )
    return schedule, needs


def _closest(needs: Needs) -> Schedule:
    """The value that names ``needs``' main need (the needs themselves if one matches)."""
    for name, value in SCHEDULES.items():
        if value == needs:
            return name
    if needs.alone:
        return "alone-within" if needs.waits_within else "alone"
    if needs.last:
        return "last-within" if needs.waits_within else "last"
    return "shares-list" if needs.holds_list else "long-chain"
