"""Decisions, not diaries: what was measured, and when, is ``benchmarks/RESULTS.md``'s.

The README, the reference docs (``docs/*.md``) and the docstrings and comments of the
package, the rule book and the benchmarks say what the kit promises and why it is
built so; a date there is a diary entry unless it names an MCP revision or the rule
book's revision. The README's Speed section says what a user waits for and the
command that measures it, in at most 20 lines, and points at RESULTS.md, which has a
section for every benchmark script.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from pytest_osfoundry._mcp_vocabulary import ALL_VERSIONS
from pytest_osfoundry._vocabulary import SPEC_REVISION

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
README = ROOT / "README.md"

_DATE = re.compile(r"(?<!\d)20\d\d-[01]\d-[0-3]\d(?!\d)")
#: Dates that are names, not diary entries.
NAMES = {*ALL_VERSIONS, SPEC_REVISION}
#: The README's Speed section, heading and blank lines included, at most.
SPEED_LINES = 20


def _prose(path: Path) -> str:
    """A Markdown file's text; a Python file's docstrings and comments."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return text
    parts = [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    ]
    parts += [  # every bare string statement: module, class, function, attribute docstrings
        node.value.value
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    return "\n".join(parts)


def _sources() -> list[Path]:
    return [
        README,
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "pytest_osfoundry").rglob("*.py")),
        *sorted((ROOT / "conformance").rglob("*.py")),
        *sorted((ROOT / "benchmarks").glob("*.py")),
    ]


def _speed_section() -> list[str]:
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Speed")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return lines[start:end]


def _diary_dates(path: Path) -> list[str]:
    """The dates in the file's prose that name nothing (parsed only if its text has one)."""
    if not set(_DATE.findall(path.read_text(encoding="utf-8"))) - NAMES:
        return []
    return [date for date in _DATE.findall(_prose(path)) if date not in NAMES]


def test_no_dated_figure_outside_the_results() -> None:
    dated = [
        f"{path.relative_to(ROOT).as_posix()}: {date}"
        for path in _sources()
        for date in _diary_dates(path)
    ]
    assert dated == [], "dated figures belong in benchmarks/RESULTS.md:\n" + "\n".join(dated)


def test_the_scan_sees_docstrings_and_comments_not_code(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Measured on 2026-12-03."""\n'
        "X = 1  # 2026-12-02\n"
        'Y = "2026-12-01T00:00:00Z"\n'
        '"""Y\'s doc, 2026-11-30."""\n',
        encoding="utf-8",
    )
    assert sorted(_diary_dates(module)) == ["2026-11-30", "2026-12-02", "2026-12-03"]
    module.write_text(f'"""MCP {SPEC_REVISION}, {ALL_VERSIONS[0]}."""\n', encoding="utf-8")
    assert _diary_dates(module) == []


def test_the_readme_speed_section_is_short_and_points_at_the_results() -> None:
    section = _speed_section()
    assert len(section) <= SPEED_LINES, f"{len(section)} lines"
    text = "\n".join(section)
    assert "benchmarks/RESULTS.md" in text
    for script in re.findall(r"benchmarks/(\w+\.py)", text):
        assert (ROOT / "benchmarks" / script).is_file(), script


def test_the_results_have_a_section_for_every_benchmark() -> None:
    headings = re.findall(r"^## `(\w+\.py)`", RESULTS.read_text(encoding="utf-8"), flags=re.M)
    scripts = {p.name for p in (ROOT / "benchmarks").glob("bench_*.py")}
    assert scripts <= set(headings), sorted(scripts - set(headings))
    assert set(headings) <= {p.name for p in (ROOT / "benchmarks").glob("*.py")}
