"""The README and docs/fixtures.md tell the truth: their Python examples run, and CI
runs the README's test command."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FIXTURES_DOC = (ROOT / "docs" / "fixtures.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README + FIXTURES_DOC, flags=re.S)
TEST_BLOCKS = [b for b in BLOCKS if "def test_" in b]


def test_the_readme_has_runnable_examples() -> None:
    assert len(TEST_BLOCKS) >= 11


@pytest.mark.parametrize("index", range(len(TEST_BLOCKS)))
def test_readme_example_runs(pytester: pytest.Pytester, index: int) -> None:
    shutil.copy(ROOT / "examples" / "polling_agent.py", pytester.path / "polling_agent.py")
    pytester.makepyfile(**{f"test_readme_{index}": TEST_BLOCKS[index]})
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=TEST_BLOCKS[index].count("def test_"))


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = re.findall(r"^python3 -m venv .*$", README, flags=re.M)
    assert len(commands) == 2, "the README holds the two set-up commands"
    test_command = commands[1].split(" && ", 2)[2]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci.splitlines()
