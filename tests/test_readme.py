"""The README and docs/fixtures.md tell the truth: their Python examples run, and CI
runs the README's test command."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FIXTURES_DOC = (ROOT / "docs" / "fixtures.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README + FIXTURES_DOC, flags=re.S)
TEST_BLOCKS = [b for b in BLOCKS if "def test_" in b]


def test_the_readme_has_runnable_examples() -> None:
    assert len(TEST_BLOCKS) >= 11


def test_readme_examples_run() -> None:
    """Every example, each a test module of its own, in one pytest process of their own
    (as a user's project would hold them): each of its tests passes."""
    with tempfile.TemporaryDirectory(prefix="osf-readme-") as folder:
        path = Path(folder)
        for helper in ("polling_agent.py", "sdk_agent.py"):
            shutil.copy(ROOT / "examples" / helper, path / helper)
        for index, block in enumerate(TEST_BLOCKS):
            (path / f"test_readme_{index}.py").write_text(block, encoding="utf-8")
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA"],
            cwd=path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    for index, block in enumerate(TEST_BLOCKS):
        want = block.count("def test_")
        got = len(re.findall(rf"^PASSED test_readme_{index}\.py::", run.stdout, flags=re.M))
        assert got == want, f"example {index}: {got} of {want} passed\n{run.stdout[-4000:]}"
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = re.findall(r"^python3 -m venv .*$", README, flags=re.M)
    assert len(commands) == 2, "the README holds the two set-up commands"
    test_command = commands[1].split(" && ", 2)[2]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip("\n").splitlines()[-1] == test_command, ".ci/run ends with it, verbatim"


def test_the_readme_says_what_ci_does_besides_its_test_command() -> None:
    """.ci/run installs Node peers first; the README's test command alone does not, and
    the tests that need them skip: its comment says so (it once said "what .ci/run
    does" while 13 tests skipped)."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    folders = re.findall(r"npm install --prefix (\S+)", ci)
    comment = README.split("# Install and run the tests", 1)[1].split("\npython3 -m venv", 1)[0]
    assert "what .ci/run does" in comment
    for folder in folders:
        assert f"{folder}/" in comment and "skip" in comment, comment


def test_the_d6_failure_demo_runs_as_written() -> None:
    """The README's "what a D6 failure looks like" is plain ``pytest`` from a checkout's
    root; it once worked only as ``python -m pytest`` (which puts the current folder on
    sys.path): the factory's module could not be imported."""
    demo = re.search(r"from a checkout,\s*`(pytest --osf-target=embedded:[^`]+)`", README)
    assert demo is not None
    pytest_command = Path(sys.executable).with_name("pytest")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSF_", "PYTHONPATH"))}
    # The command as written; the environment only keeps the checkout clean and the
    # run to the check the demo is about.
    env["PYTEST_ADDOPTS"] = "-p no:cacheprovider -k D6-get-other-agent"
    run = subprocess.run(
        [str(pytest_command), *shlex.split(demo.group(1))[1:]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    shown = run.stdout[-2000:] + run.stderr
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, shown
    assert re.search(r"^FAILED \S+::D6-get-other-agent\b", run.stdout, flags=re.M), shown


def test_ci_compiles_the_project_once_between_install_and_tests() -> None:
    """Issue 23: with PYTHONDONTWRITEBYTECODE set (common in CI), every test process
    would compile the kit anew; ``compileall`` writes the bytecode whatever it says."""
    commands = re.findall(r"^python3 -m venv .*$", README, flags=re.M)
    steps = commands[1].split(" && ")
    compile_steps = [i for i, s in enumerate(steps) if s.startswith("python -m compileall -q ")]
    assert len(compile_steps) == 1, "compiled exactly once"
    at = compile_steps[0]
    install = steps.index("pip install -e '.[test]'")
    tests = next(i for i, s in enumerate(steps) if s.startswith("python -m pytest"))
    assert install < at < tests
    compiled = steps[at].split()[4:]
    assert set(compiled) == {"pytest_osfoundry", "conformance", "tests", "examples"}
    assert all((ROOT / folder).is_dir() for folder in compiled)


def test_ci_writes_pytests_rewrite_cache_once_before_the_tests() -> None:
    """Issue 23: pytest rewrites the asserts of every installed plugin's package (Faker,
    Hypothesis, anyio, respx) and of the rule book in each process, and caches the
    result only when bytecode may be written: one collection with writing on primes
    that cache (compileall's bytecode is not it), so no later process rewrites them."""
    commands = re.findall(r"^python3 -m venv .*$", README, flags=re.M)
    steps = commands[1].split(" && ")
    primes = [i for i, s in enumerate(steps) if s.startswith("PYTHONDONTWRITEBYTECODE= ")]
    assert len(primes) == 1
    prime = steps[primes[0]]
    assert "python -m pytest --collect-only" in prime and "--osf-target=embedded" in prime
    compiled = next(i for i, s in enumerate(steps) if s.startswith("python -m compileall"))
    tests = next(i for i, s in enumerate(steps) if s.startswith("python -m pytest"))
    assert compiled < primes[0] < tests


def test_the_readme_says_what_runs_by_default_without_counting_the_checks() -> None:
    """A new check changes no line of the README: it names no count of checks (which
    the next check would make wrong), and what it says of them stays true."""
    from pytest_osfoundry.conformance.suite._registry import all_checks

    checks = all_checks()
    assert "every check runs by default but the opt-in timing\ncheck" in README
    assert {c.opt_in for c in checks if c.opt_in is not None} == {"--osf-timing"}
    assert len([c for c in checks if c.opt_in is not None]) == 1
    counted = re.findall(r"\(\d+ (?:named )?checks\b", README)  # (outputs' counts are examples)
    assert counted == [], f"the README counts checks: {counted}"
    assert "100-odd" not in README


def test_the_readme_tables_list_every_fixture_and_option() -> None:
    from dataclasses import fields

    from pytest_osfoundry import _fixtures
    from pytest_osfoundry.world import WorldConfig

    name = r"`(osf_[a-z0-9_]+)`"
    fixture_rows = re.findall(rf"^\| {name}(?:, {name})? \|", README, flags=re.M)
    listed = {name for row in fixture_rows for name in row if name}
    assert listed == set(_fixtures.__all__)
    option_rows = re.findall(r"^\| `([a-z_]+)`(?: / `([a-z_]+)`)? \| ", README, flags=re.M)
    options = {name for row in option_rows for name in row if name}
    assert {f.name for f in fields(WorldConfig)} | {"patch_sleep"} <= options


def test_the_readme_options_table_names_every_suite_option() -> None:
    """Each ``--osf-...`` flag of the suite is in a row of the Options table."""
    from pytest_osfoundry.conformance.suite._options import OPTIONS

    rows = "\n".join(re.findall(r"^\| `--osf-.*$", README, flags=re.M))
    named = set(re.findall(r"`(--osf-[a-z0-9-]+)", rows))
    assert {spec.flag for spec in OPTIONS} - named == set()


def test_the_readme_links_its_docs_and_installs_from_the_repository() -> None:
    for doc in ("docs/fixtures.md", "conformance/spec.md", "docs/rules.md", "action.yml"):
        assert f"]({doc}" in README, doc
        assert (ROOT / doc).exists()
    assert "pip install pytest-osfoundry" not in README


def test_the_exports_table_lists_exactly_what_each_module_exports() -> None:
    import importlib

    rows = re.findall(r"^\| `(pytest_osfoundry\.[a-z_.]+)` \| (.*) \|$", README, flags=re.M)
    assert {module for module, _ in rows} >= {"pytest_osfoundry.http", "pytest_osfoundry.faults"}
    for module, names in rows:
        listed = set(re.findall(r"`(\w+)`", names))
        assert listed == set(importlib.import_module(module).__all__), module
