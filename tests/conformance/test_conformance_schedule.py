"""What a check needs of the scheduler, in one value (``@check(..., schedule=...)``).

The value set (:mod:`pytest_osfoundry.conformance.scheduling._protocol`) and the
former keywords, which keep working with a DeprecationWarning naming the value to write.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import get_args

import pytest

from pytest_osfoundry.conformance import check
from pytest_osfoundry.conformance.scheduling._protocol import SCHEDULES, WHEN, Needs, Schedule
from pytest_osfoundry.conformance.suite._registry import check_info

ROOT = Path(__file__).resolve().parents[2]


def _body(osf_conf: object) -> None:
    """A check body (never run)."""


def _declared(**declaration: object) -> Needs:
    info = check_info(check("R1-probe", "Says something.", **declaration)(_body))  # type: ignore[arg-type]
    assert info is not None
    return info.needs


def test_every_value_has_its_needs_and_a_line_saying_when() -> None:
    assert list(SCHEDULES) == list(WHEN) == list(get_args(Schedule))


@pytest.mark.parametrize("schedule", list(SCHEDULES))
def test_a_value_declares_its_needs_without_a_warning(schedule: Schedule) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        info = check_info(check("R1-probe", "Says something.", schedule=schedule)(_body))
    assert info is not None and info.schedule == schedule and info.needs == SCHEDULES[schedule]


def test_no_value_runs_a_check_alongside_the_others() -> None:
    info = check_info(check("R1-probe", "Says something.")(_body))
    assert info is not None and info.schedule == "alongside" and info.needs == Needs()


@pytest.mark.parametrize(
    ("former", "schedule"),
    [
        ({"exclusive": True}, "alone"),
        ({"exclusive": True, "waits_within": True}, "alone-within"),
        ({"last": True}, "last"),
        ({"last": True, "waits_within": True}, "last-within"),
        ({"holds_list": True}, "shares-list"),
        ({"long_chain": True}, "long-chain"),
        ({"shared_evidence": True}, "shared-evidence"),
    ],
)
def test_the_former_keywords_still_work_and_name_the_value_to_write(
    former: dict[str, bool], schedule: Schedule
) -> None:
    with pytest.warns(DeprecationWarning, match=f"write schedule={schedule!r}") as caught:
        needs = _declared(**former)
    assert needs == SCHEDULES[schedule]
    assert caught[0].filename == __file__  # it points at the declaration, not the kit


def test_a_former_combination_keeps_every_need_it_declared() -> None:
    with pytest.warns(DeprecationWarning, match="write schedule='shares-list'"):
        needs = _declared(holds_list=True, long_chain=True)
    assert needs == Needs(holds_list=True, long_chain=True)


def test_a_value_with_a_former_keyword_is_refused() -> None:
    with pytest.raises(ValueError, match=r"R1-probe: schedule='alone' says it all; drop last=True"):
        _declared(schedule="alone", last=True)


def test_an_unknown_value_is_refused_naming_the_values_and_when_to_choose_them() -> None:
    with pytest.raises(ValueError, match=r"R1-probe: schedule 'exclusive' is not one of") as err:
        _declared(schedule="exclusive")
    for name, when in WHEN.items():
        assert f"{name!r}: {when}" in str(err.value)


def test_the_rule_book_declares_no_former_keyword() -> None:
    former = re.compile(r"\b(exclusive|last|waits_within|shared_evidence|holds_list|long_chain)=")
    for folder in ("conformance", "examples"):
        for path in (ROOT / folder).rglob("*.py"):
            assert former.search(path.read_text(encoding="utf-8")) is None, path


def test_the_guides_table_names_every_value_once() -> None:
    guide = (ROOT / "docs" / "extra-checks.md").read_text(encoding="utf-8")
    rows = re.findall(r'^\| .+? \| (?:nothing \()?`"([a-z-]+)"`\)? \|$', guide, flags=re.M)
    assert sorted(rows) == sorted(SCHEDULES)
