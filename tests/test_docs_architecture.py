"""docs/architecture.md is drawn from the real tree: one line for every module."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"


def _modules() -> set[str]:
    """Every module file of the package and the suite, as ``folder/name`` paths."""
    found = set()
    for top in ("pytest_osfoundry", "conformance"):
        for path in (ROOT / top).rglob("*.py"):
            found.add(path.relative_to(ROOT).as_posix())
    return found


def _listed() -> set[str]:
    """The module paths the doc's two trees name (indentation gives the folders)."""
    text = DOC.read_text(encoding="utf-8")
    listed = set()
    for block in re.findall(r"```\n(.*?)```", text, flags=re.S):
        folders: list[tuple[int, str]] = []
        for line in block.splitlines():
            match = re.match(r"( *)(\S+)", line)
            if match is None:
                continue
            indent, name = len(match.group(1)), match.group(2)
            folders = [(i, f) for i, f in folders if i < indent]
            if name.endswith("/"):
                folders.append((indent, name))
            elif name.endswith(".py"):
                listed.add("".join(f for _, f in folders) + name)
    return listed


def test_every_module_has_a_line_and_every_line_a_module() -> None:
    modules, listed = _modules(), _listed()
    assert modules - listed == set(), "add a line for these to docs/architecture.md"
    assert listed - modules == set(), "docs/architecture.md lists modules that do not exist"
