"""Tables of text, written once for every report: the conformance suite's, the load's
and the simulator's.

* :func:`markdown_table` writes a GitHub-flavoured Markdown table (``| a | b |``,
  then ``|---|---:|``), one line per row. Cells are written as given: a caller whose
  text may hold ``|`` or a line break makes it a cell first (the suite's reports do).
* :func:`text_table` writes columns for a terminal: each as wide as its widest cell,
  left- or right-aligned, a rule of dashes under the headers, no trailing blanks.

``align`` gives one letter a column, ``l`` (the default for a column not named) or
``r`` (numbers).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["markdown_table", "text_table"]


def _aligns(align: str, columns: int) -> str:
    if set(align) - {"l", "r"} or len(align) > columns:
        raise ValueError(f"align takes 'l' or 'r' per column ({columns}), got {align!r}")
    return align.ljust(columns, "l")


def markdown_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], align: str = ""
) -> list[str]:
    """The lines of a Markdown table of ``rows`` under ``headers``."""
    aligns = _aligns(align, len(headers))
    rule = "|" + "|".join("---:" if a == "r" else "---" for a in aligns) + "|"
    return [_markdown_row(headers), rule, *(_markdown_row(row) for row in rows)]


def _markdown_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def text_table(
    headers: Sequence[str] | None,
    rows: Sequence[Sequence[str]],
    align: str = "",
    *,
    indent: str = "  ",
    gap: str = "   ",
) -> list[str]:
    """The lines of ``rows`` in columns (``headers`` ``None``: no header, no rule),
    each line starting with ``indent``, columns ``gap`` apart."""
    head = [] if headers is None else [list(headers)]
    table = head + [list(row) for row in rows]
    if not table:
        return []
    columns = len(table[0])
    aligns = _aligns(align, columns)
    widths = [max(len(row[i]) for row in table) for i in range(columns)]

    def line(cells: Sequence[str]) -> str:
        written = (
            c.rjust(w) if a == "r" else c.ljust(w)
            for c, w, a in zip(cells, widths, aligns, strict=True)
        )
        return (indent + gap.join(written)).rstrip()

    lines = [line(row) for row in table]
    if headers is not None:
        lines.insert(1, line(["-" * w for w in widths]))
    return lines
