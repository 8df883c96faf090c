"""docs/rules.md's level and source lines agree for every rule (issue 43).

A documented rule (``D``) states what osFoundry itself says, so its source names that
(its tool listing, a live response, the desktop relay's source); a reconstructed rule
(``R``) is the kit's, and its source says so. A documented rule left without a
``source`` in conformance/rules.toml used to inherit the reconstructed one, so
docs/rules.md printed "Level: documented. Source: the kit's reconstruction" for
D11, D12 and D14-D17.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.rulesdoc import (
    RECONSTRUCTION,
    level_source_problems,
    render_rules_doc,
)
from pytest_osfoundry.conformance.suite._registry import RULES

DOCS = Path(__file__).resolve().parents[2] / "docs"
_LINE = re.compile(r"^\*\*[^\n]*\*\* Level: \*\*(\w+)\*\*\. Source: ([^\n]*)$", re.M)


def test_every_rule_s_level_and_source_agree() -> None:
    assert level_source_problems(RULES.values()) == []


def test_the_committed_reference_prints_agreeing_lines() -> None:
    """Read from the page a reader sees: each rule's one line of level and source."""
    lines = _LINE.findall((DOCS / "rules.md").read_text(encoding="utf-8"))
    assert len(lines) == len(RULES)
    for level, source in lines:
        assert (level == "reconstructed") == source.startswith(RECONSTRUCTION), (level, source)


@pytest.mark.parametrize(
    ("rule_id", "source", "says"),
    [
        ("D11", RECONSTRUCTION + ": made up", "D11 is documented but its source is"),
        ("R9", "osFoundry's published tool listing", "R9 is reconstructed but its source"),
    ],
)
def test_a_disagreeing_rule_is_named_and_the_reference_is_not_rendered(
    rule_id: str, source: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = dataclasses.replace(RULES[rule_id], source=source)
    problems = level_source_problems([wrong])
    assert len(problems) == 1 and problems[0].startswith(says)
    monkeypatch.setitem(RULES, rule_id, wrong)
    with pytest.raises(ValueError, match=f"conformance/rules.toml: {rule_id} is"):
        render_rules_doc()
