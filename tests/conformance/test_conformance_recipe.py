"""A new server check is one function (and, for a new rule, its ``rules.toml`` entry).

``docs/architecture.md``'s recipe "Adding a server check" holds while nothing of the
suite's machinery keeps its own list of the rule book's checks -- a table a new check
would have to be added to (the request counts and list holders that
``_weights.py`` kept were such tables). What the machinery needs of a check, it reads
from the check's ``@check`` declaration. The README names no count of checks
(``tests/test_readme.py``); ``docs/rules.md`` is generated, and its test names the one
command that regenerates it (the recipe's second step).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from pytest_osfoundry.conformance.suite._registry import all_checks

ROOT = Path(__file__).resolve().parents[2]
MACHINERY = sorted((ROOT / "pytest_osfoundry").rglob("*.py"))
_ID_START = re.compile(r"[DR][0-9]{1,2}-")
"""How every rule-book check id starts (``D6-``, ``R11-``)."""

#: Where the kit's code may name a rule-book check id, and why: none of them lists
#: the checks (a new check adds nothing here).
NAMED_ON_PURPOSE = {
    ("pytest_osfoundry/conformance/reporting/_baseline.py", "D6-get-other-agent"): "an example id",
    ("pytest_osfoundry/conformance/rulesdoc.py", "D6-get-other-agent"): "an example id",
    ("pytest_osfoundry/conformance/rulesdoc.py", "D4-empty-before-share"): "the page's prose",
    ("pytest_osfoundry/conformance/rulesdoc.py", "R3-project-not-connected"): "the page's prose",
    ("pytest_osfoundry/conformance/rulesdoc.py", "R3-session-other-account"): "the page's prose",
    ("pytest_osfoundry/conformance/rulesdoc.py", "R13-other-owner-404"): "the page's prose",
    ("pytest_osfoundry/conformance/rulesdoc.py", "R12-other-owner-sync"): "the page's prose",
    ("pytest_osfoundry/conformance/suite/_checkids.py", "R14-relay-lost-start"): "a renamed check",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (a bare string statement)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _named_ids(path: Path, ids: set[str]) -> set[str]:
    """The rule-book check ids that ``path``'s code (not its docstrings) names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        if id(node) not in skip and _ID_START.search(node.value):  # (most strings: no id)
            found |= {check_id for check_id in ids if check_id in node.value}
    return found


def test_no_code_of_the_kit_lists_the_rule_books_checks() -> None:
    ids = {info.check_id for info in all_checks(include_relay=True)}
    assert len(ids) > 150
    named = {
        (path.relative_to(ROOT).as_posix(), check_id)
        for path in MACHINERY
        for check_id in _named_ids(path, ids)
    }
    assert named - set(NAMED_ON_PURPOSE) == set(), (
        "the kit's code names rule-book checks: read what it needs from their @check "
        "declarations instead of a table a new check must be added to"
    )
    assert set(NAMED_ON_PURPOSE) <= named, "drop the entries no code names any more"


def test_the_scan_sees_a_table_and_ignores_docstrings(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        '"""D1-run-only-queues in a docstring."""\n'
        'WEIGHTS = {"D8-cancel-running": 6}\n'
        'def f() -> None:\n    """R9-start-twice, said."""\n',
        encoding="utf-8",
    )
    ids = {"D1-run-only-queues", "D8-cancel-running", "R9-start-twice"}
    assert _named_ids(path, ids) == {"D8-cancel-running"}
