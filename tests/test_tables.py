"""One writer of tables for every report (``_tables``)."""

from __future__ import annotations

import pytest

from pytest_osfoundry._tables import markdown_table, text_table


def test_a_markdown_table_aligns_its_columns_as_asked() -> None:
    assert markdown_table(["name", "n"], [["a", "1"], ["bb", "22"]], "lr") == [
        "| name | n |",
        "|---|---:|",
        "| a | 1 |",
        "| bb | 22 |",
    ]


def test_a_text_table_is_as_wide_as_its_widest_cells() -> None:
    assert text_table(["name", "n"], [["a", "1"], ["bb", "22"]], "lr") == [
        "  name    n",
        "  ----   --",
        "  a       1",
        "  bb     22",
    ]
    assert text_table(None, [("key", "value"), ("k", "")], gap="  ") == ["  key  value", "  k"]
    assert text_table(["x"], []) == ["  x", "  -"]


def test_an_alignment_it_cannot_follow_is_refused() -> None:
    with pytest.raises(ValueError, match="align"):
        markdown_table(["a"], [], "c")
    with pytest.raises(ValueError, match="align"):
        text_table(["a"], [], "lr")
