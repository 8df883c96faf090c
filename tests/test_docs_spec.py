"""conformance/spec.md is the project's rule book: every rule has a stable anchor, every
check's ``spec`` reference resolves to one in the copy installed with the suite, and
nothing points at a document users never get."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.suite._layout import RULEBOOK_PACKAGE
from pytest_osfoundry.conformance.suite._registry import (
    RULES,
    SPEC_FILE,
    SPEC_REFERENCE,
    all_checks,
)

ROOT = Path(__file__).resolve().parents[1]
SPEC = (ROOT / "conformance" / "spec.md").read_text(encoding="utf-8")
ANCHORS = set(re.findall(r'<a id="([a-z0-9-]+)"></a>', SPEC))
EVERY_RULE = sorted(RULES)  # rules.toml's; a new rule needs no line here


@pytest.mark.parametrize("rule", EVERY_RULE)
def test_every_rule_has_an_anchor_heading_and_origin(rule: str) -> None:
    assert re.fullmatch(r"[DRA][1-9][0-9]?", rule)
    kind = "documented" if rule.startswith("D") else "reconstructed"
    heading = re.search(
        rf'<a id="{rule.lower()}"></a>\n### {rule} — [^\n]+\({kind}[^\n]*\)\n\n\S', SPEC
    )
    assert heading is not None, f"conformance/spec.md lacks the section of {rule}"


def test_every_check_points_at_an_anchor_of_its_rule() -> None:
    for info in all_checks(include_relay=True):
        path, _, anchor = info.spec.partition("#")
        assert path == SPEC_REFERENCE and anchor == info.rule.lower(), info.spec
        assert anchor in ANCHORS
    for rule in RULES:
        assert rule.lower() in ANCHORS
        assert RULES[rule].spec == f"conformance/spec.md#{rule.lower()}"  # for docs/rules.md


def test_the_rule_book_travels_with_the_suite() -> None:
    """A check's ``spec`` resolves where the package is installed: the file is the
    package data ``pytest_osfoundry/conformance/rulebook/spec.md``, the same text as
    conformance/spec.md (a wheel's copy at that path: tests/test_layout.py)."""
    from importlib import resources

    installed = resources.files(RULEBOOK_PACKAGE) / SPEC_FILE
    assert installed.read_text(encoding="utf-8") == SPEC
    assert RULEBOOK_PACKAGE.replace(".", "/") + "/" + SPEC_FILE == SPEC_REFERENCE
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    data = re.search(r'"pytest_osfoundry\.conformance\.rulebook" = \[([^\]]*)\]', pyproject)
    assert data is not None and f'"{SPEC_FILE}"' in data[1], "spec.md is not package data"


def test_no_file_points_at_the_private_spec() -> None:
    name = "SPEC" + ".md"
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    found = []
    for rel in listed:
        path = ROOT / rel
        if not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if name in text:
            found.append(rel)
    assert found == [], f"these files mention {name}: {found}"
