"""The rule book is imported by Python's own import system, not rewritten by pytest.

pytest rewrites the asserts of every module its ``python_files`` match (``test_*.py``,
as the check modules are named) and keeps the result in a cache of its own, which a
fresh environment (a CI job, ``PYTHONDONTWRITEBYTECODE=1``) never has: each such run
compiled the whole rule book again (``benchmarks/bench_cold_start.py``). The checks
need no rewriting (each says what failed through its ``expect``), so the suite
imports them past pytest's hook (``_layout.import_check_module``), and Python's own
bytecode cache, filled at install, serves them.
"""

from __future__ import annotations

import importlib.machinery

import pytest

from pytest_osfoundry.conformance.suite._layout import (
    RELAY_CHECKS,
    check_modules,
    import_check_module,
)

#: A plugin for the inner run: prints, for every module of the rule book it imported,
#: the name and the type of its loader.
LOADERS = """
import sys

def pytest_collection_finish(session):
    for name, module in sorted(sys.modules.items()):
        if name.startswith("pytest_osfoundry.conformance.rulebook."):
            print("LOADER", name, type(module.__loader__).__name__)
"""


@pytest.mark.parametrize("target", ["--osf-target=embedded", "--osf-relay-command=embedded"])
def test_a_run_imports_the_rule_book_without_pytests_rewriting(
    pytester: pytest.Pytester, target: str
) -> None:
    """A fresh process collecting the suite as a user's run does (assertion rewriting
    on, the default): every check module it imports was loaded by Python's own
    ``SourceFileLoader``, none by pytest's ``AssertionRewritingHook``."""
    pytester.makepyfile(osf_loaders=LOADERS)
    result = pytester.runpytest_subprocess(
        "-p", "osf_loaders", "-p", "no:cacheprovider", target, "--collect-only", "-q"
    )
    loaders = {}
    for line in result.stdout.lines:
        if line.startswith("LOADER "):
            _, name, loader = line.split()
            loaders[name] = loader
    checks = [n for n in loaders if n.rpartition(".")[2].startswith("test_")]
    assert len(checks) >= 8, result.stdout.str()[-2000:]
    assert set(loaders.values()) == {"SourceFileLoader"}, loaders


def test_import_check_module_imports_each_module_once() -> None:
    names = check_modules() + check_modules(RELAY_CHECKS)
    for name in names:
        module = import_check_module(name)
        assert isinstance(module.__loader__, importlib.machinery.SourceFileLoader), name
        assert import_check_module(name) is module


def test_import_check_module_names_what_it_cannot_find() -> None:
    with pytest.raises(ModuleNotFoundError, match="test_no_such_check"):
        import_check_module("pytest_osfoundry.conformance.rulebook.checks.test_no_such_check")
