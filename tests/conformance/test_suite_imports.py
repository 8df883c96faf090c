"""The suite and the kit evolve apart: what the suite may import from the kit.

The suite (its machinery, ``pytest_osfoundry/conformance/``, and the rule book,
``conformance/``) asserts what ``conformance/spec.md`` says with its own copy of
every value (:mod:`pytest_osfoundry.conformance.expected`). If it took a revision
name, an error code, a path or a message from the kit, a wrong value in the kit
would make the suite agree with a wrong server. These tests read every import of
the suite and hold it to :data:`KIT_MODULES`: the kit modules it may use, for what.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE_FILES = sorted(
    [
        *(ROOT / "pytest_osfoundry" / "conformance").rglob("*.py"),
        *(ROOT / "conformance").rglob("*.py"),
    ]
)

#: The kit modules the suite may import, and why. Public ones first; the private
#: ones are helpers that hold no value the suite asserts.
KIT_MODULES: dict[str, str] = {
    "pytest_osfoundry": "the kit's version and spec revision, printed in the reports",
    "pytest_osfoundry.client": "the clients, transports, errors, answer decoding, masking",
    "pytest_osfoundry.http": "the Request / Response every transport speaks",
    "pytest_osfoundry.server": "the reference server behind --osf-target=embedded",
    "pytest_osfoundry.relay": "bounded_completion and its arithmetic (D18)",
    "pytest_osfoundry._mcp_schema": "MCP's own schema.json per revision, compiled (MCP's rules)",
    "pytest_osfoundry.clock": "the real clock the relay suite's reference server runs on",
    "pytest_osfoundry._lateness": "LatenessProbe: when the relay suite itself was kept from "
    "running (the cadence checks' upper bounds)",
    "pytest_osfoundry.engine": "make_sessions: Faker-made sessions the relay suite shares (inputs)",
    "pytest_osfoundry._ids": "RFC 3339 and UUID parsing (shapes, not values)",
    "pytest_osfoundry._jslength": "JSON.stringify's length in UTF-16 code units (D18 arithmetic)",
    "pytest_osfoundry._wirejson": "JSON on the wire: every body sent, and read as json does",
    "pytest_osfoundry.client._internal": "the one writer of a JSON-RPC request (request_body) "
    "and its Accept value, as McpClient sends them (sent, never asserted)",
    "pytest_osfoundry._origin": "origin_of: the origin of a URL (RFC 6454), one definition",
    "pytest_osfoundry._tables": "the one writer of tables: the Markdown report, the rules index",
    "pytest_osfoundry._lazy": "the suite's and the relay suite's faces, imported when first used",
    "pytest_osfoundry.server._internal": "event_stream: an answer as the reference server's "
    "own event stream (the agent suite's open-stream fault; sent, never asserted)",
}

#: Kit modules that are the kit's own values: never imported by the suite.
VALUE_MODULES = ("pytest_osfoundry._vocabulary", "pytest_osfoundry._mcp_vocabulary")

#: Names of values the suite may take from the kit (not asserted: reported or sent).
ALLOWED_VALUES = {
    ("pytest_osfoundry", "SPEC_REVISION"),
    ("pytest_osfoundry", "__version__"),
    ("pytest_osfoundry.client._internal", "ACCEPT"),  # what every MCP request asks for: sent
}

_VALUE_TYPES = (str, bytes, int, float, tuple, frozenset, dict, list, re.Pattern)


def _kit_imports(path: Path) -> Iterator[tuple[str, str | None, int]]:
    """``(module, name, line)`` of every import of a kit module outside the suite."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = node.module
            names: list[str | None] = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "pytest_osfoundry":
                    yield alias.name, None, node.lineno
            continue
        else:
            continue
        if module.split(".")[0] != "pytest_osfoundry":
            continue
        if module == "pytest_osfoundry.conformance" or module.startswith(
            "pytest_osfoundry.conformance."
        ):
            continue
        for name in names:
            yield module, name, node.lineno


IMPORTS = [(p, *found) for p in SUITE_FILES for found in _kit_imports(p)]


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT).as_posix()}:{line}"


def test_the_scan_sees_the_suites_imports() -> None:
    modules = {module for _, module, _, _ in IMPORTS}
    assert {"pytest_osfoundry.client", "pytest_osfoundry.http"} <= modules


def test_the_suite_imports_only_the_listed_kit_modules() -> None:
    wrong = [
        f"{_where(p, line)}: {module}"
        for p, module, _, line in IMPORTS
        if module not in KIT_MODULES
    ]
    assert wrong == [], "the suite imports kit modules it may not (KIT_MODULES):\n" + "\n".join(
        wrong
    )


def test_every_listed_module_is_used() -> None:
    used = {module for _, module, _, _ in IMPORTS}
    assert set(KIT_MODULES) - used == set(), "drop the unused entries of KIT_MODULES"


def test_the_suite_never_imports_the_kits_vocabulary() -> None:
    wrong = [
        f"{_where(p, line)}: {module}" for p, module, _, line in IMPORTS if module in VALUE_MODULES
    ]
    assert wrong == []


def test_the_suite_takes_no_value_from_the_kit() -> None:
    wrong = []
    for path, module, name, line in IMPORTS:
        if name is None or (module, name) in ALLOWED_VALUES:
            continue
        value = getattr(importlib.import_module(module), name)
        if isinstance(value, _VALUE_TYPES):
            wrong.append(f"{_where(path, line)}: {module}.{name} = {value!r}"[:200])
    assert wrong == [], "the suite's own copy is expected.py:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (
            "from pytest_osfoundry._vocabulary import RELAY_PREFIX\n",
            ("pytest_osfoundry._vocabulary", "RELAY_PREFIX"),
        ),
        (
            "import pytest_osfoundry.client._mcp_client\n",
            ("pytest_osfoundry.client._mcp_client", None),
        ),
        ("from pytest_osfoundry.conformance.expected import QUEUED\n", None),
        ("from . import sibling\n", None),
    ],
)
def test_the_scan_reads_each_form_of_import(
    tmp_path: Path, source: str, found: tuple[str, str | None] | None
) -> None:
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    assert [(m, n) for m, n, _ in _kit_imports(path)] == ([found] if found else [])


RULEBOOK_FILES = sorted((ROOT / "conformance").rglob("*.py"))


def _private_imports(path: Path) -> Iterator[tuple[str, int]]:
    """``(what, line)`` of every import in ``path`` of a private module of the kit (a
    part of its dotted name starting with ``_``, ``pytest_osfoundry.conformance.server._wire``)
    or of a private name of a kit module (``from pytest_osfoundry.conformance import
    _wire``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found = [(alias.name, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found = [(node.module, f"{node.module}.{alias.name}") for alias in node.names]
            found += [(f"{node.module}.{a.name}", f"{node.module}.{a.name}") for a in node.names]
        else:
            continue
        for module, what in found:
            parts = module.split(".")
            if parts[0] == "pytest_osfoundry" and any(p.startswith("_") for p in parts[1:]):
                yield what, node.lineno


def test_the_rule_book_imports_only_the_public_api() -> None:
    """The rule book's checks are written as a project's own are (docs/extra-checks.md):
    with :mod:`pytest_osfoundry.conformance`'s public names, its public modules
    (``expected``, ``relay``) and the kit's public ones, never a private module -- so
    the API the kit offers third parties is the one its own checks prove."""
    assert len(RULEBOOK_FILES) > 20
    wrong = [
        f"{_where(path, line)}: {what}"
        for path in RULEBOOK_FILES
        for what, line in sorted(set(_private_imports(path)))
    ]
    assert wrong == [], (
        "the rule book imports private modules; take the name from "
        "pytest_osfoundry.conformance (grow its public API, docs/extra-checks.md):\n"
        + "\n".join(wrong)
    )


@pytest.mark.parametrize(
    ("source", "private"),
    [
        ("from pytest_osfoundry.conformance.suite._registry import check\n", True),
        ("from pytest_osfoundry.conformance import _registry\n", True),
        ("import pytest_osfoundry.conformance.server._wire as wire\n", True),
        ("from pytest_osfoundry._jslength import js_stringify_length\n", True),
        ("from pytest_osfoundry.conformance.relay._driver import RunPlan\n", True),
        ("from pytest_osfoundry.conformance import check, Conformance\n", False),
        ("from pytest_osfoundry.conformance.expected import QUEUED\n", False),
        ("from pytest_osfoundry.conformance.relay import RunPlan\n", False),
        ("from pytest_osfoundry.client import McpClient\n", False),
        ("from collections.abc import Callable\n", False),
    ],
)
def test_the_rule_book_scan_tells_private_from_public(
    tmp_path: Path, source: str, private: bool
) -> None:
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    assert bool(list(_private_imports(path))) is private


_HEAVY_IN_A_SERVER_RUN = (
    "pytest_osfoundry.relay._desktop",  # the fake relay: the relay suite's
    "pytest_osfoundry.engine",  # the fake Graph engine it drives
)


def test_the_server_suite_loads_no_relay_or_engine() -> None:
    """Importing every server check module (what a server run collects) and the
    suite's plugin leaves the relay's desktop and the engine unloaded: a server run
    never needs them."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import pytest_osfoundry.conformance.plugin._setup\n"
        "import pytest_osfoundry.conformance.rulebook.checks as checks\n"
        "for found in pkgutil.iter_modules(checks.__path__, checks.__name__ + '.'):\n"
        "    importlib.import_module(found.name)\n"
        f"print([m for m in {_HEAVY_IN_A_SERVER_RUN!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
