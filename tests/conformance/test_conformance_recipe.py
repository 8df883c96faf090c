"""A new server check is one function (and, for a new rule, its ``rules.toml`` entry).

``docs/architecture.md``'s recipe "Adding a server check" holds while nothing of the
suite's machinery keeps its own list of the rule book's checks -- a table a new check
would have to be added to (the request counts and list holders that
``_weights.py`` kept were such tables). What the machinery needs of a check, it reads
from the check's ``@check`` declaration. The README names no count of checks
(``tests/test_readme.py``); ``docs/rules.md`` is generated, and its test names the one
command that regenerates it (the recipe's third step).

The recipe's worked example is run: its rule and its check, taken from the recipe's
text alone, are added to a copy of the rule book (``rules.toml`` and the check's
module, nothing else) and the suite runs it; the schedule it declares is the one the
guide's table (``docs/extra-checks.md``) gives a check that measures time.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from pytest_osfoundry.conformance.suite._layout import RULEBOOK_PACKAGE, rulebook_dir
from pytest_osfoundry.conformance.suite._registry import all_checks

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "docs" / "architecture.md"
GUIDE = ROOT / "docs" / "extra-checks.md"
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


def _example() -> tuple[str, str]:
    """The recipe's worked example: its ``rules.toml`` block and its Python block."""
    text = RECIPE.read_text(encoding="utf-8")
    section = text.split("### Adding a server check", 1)[1].split("\n### ", 1)[0]
    blocks = dict(
        (kind, textwrap.dedent(body))
        for kind, body in re.findall(r"```(toml|python)\n(.*?\n) *```", section, flags=re.S)
    )
    assert set(blocks) == {"toml", "python"}, "the recipe's worked example is gone"
    return blocks["toml"], blocks["python"]


def _table() -> list[tuple[str, str]]:
    """The guide's schedule table: (what the check does, the value), in order."""
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(r'^\| (.+?) \| (?:nothing \()?`"([a-z-]+)"`\)? \|$', text, flags=re.M)


def test_the_recipes_example_declares_the_schedule_the_guide_gives_a_timing_check() -> None:
    rows = _table()
    timing = next(value for does, value in rows if does.startswith("measures time"))
    declared = re.search(r'schedule="([a-z-]+)"', _example()[1])
    assert declared is not None and declared.group(1) == timing == "alone"


def test_the_recipes_example_check_runs_from_the_rule_book(tmp_path: Path) -> None:
    """The rule and the check of the recipe, added to a copy of the rule book as the
    recipe says (``rules.toml`` and the area's module only), run and pass."""
    rule, code = _example()
    book = tmp_path / "rulebook"
    shutil.copytree(rulebook_dir(), book, ignore=shutil.ignore_patterns("__pycache__"))
    rules = book / "rules.toml"
    rules.write_text(rules.read_text(encoding="utf-8") + "\n" + rule, encoding="utf-8")
    module = book / "checks" / "test_schema.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n\n" + code, encoding="utf-8")
    check_id = re.search(r'@check\("([^"]+)"', code)
    assert check_id is not None
    # The copy is imported under the rule book's one name before pytest starts.
    bootstrap = (
        "import importlib.util, sys\n"
        "import pytest_osfoundry.conformance\n"
        f"spec = importlib.util.spec_from_file_location({RULEBOOK_PACKAGE!r}, "
        f"{str(book / '__init__.py')!r}, submodule_search_locations=[{str(book)!r}])\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules[spec.name] = module\n"
        "spec.loader.exec_module(module)\n"
        "import pytest\n"
        "sys.exit(pytest.main(sys.argv[1:]))\n"
    )
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OSF_")}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            bootstrap,
            "-p",
            "no:cacheprovider",
            "--osf-target=embedded",
            "-k",
            check_id.group(1),
            f"--osf-report={report}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    ran = json.loads(report.read_text(encoding="utf-8"))["checks"]
    assert [(c["id"], c["outcome"]) for c in ran] == [(check_id.group(1), "passed")]
