"""One concept a room (issue 44 item 3): masking, the two kinds of fault and the bending
of the process's time each live in one module, and the others import them from there."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_osfoundry"
MASKING = {
    "MASK",
    "MIN_SECRET",
    "mask_headers",
    "mask_token",
    "mask_url",
    "mask_url_credentials",
    "secrets_in",
}


def _imports(path: Path) -> Iterator[tuple[str, set[str]]]:
    """``(module, names)`` of every import in ``path`` (lazy ones included)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, set()


def _package_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_masking_is_imported_from_its_own_module_only() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}: {module}"
        for path in _package_files()
        for module, names in _imports(path)
        if names & MASKING
        and module != "pytest_osfoundry._masking"
        and not (
            module == "pytest_osfoundry.client" and path.is_relative_to(PACKAGE / "conformance")
        )
    ]
    assert wrong == []


def test_transport_faults_know_no_relay_and_desktop_faults_no_transport() -> None:
    transport = {module for module, _ in _imports(PACKAGE / "faults" / "_transport.py")}
    desktop = {module for module, _ in _imports(PACKAGE / "faults" / "_desktop.py")}
    assert not {m for m in transport if m.startswith("pytest_osfoundry.relay")}
    assert not {m for m in desktop if m.startswith("pytest_osfoundry.client")}


def test_only_process_time_touches_freezegun() -> None:
    touching = {
        path.relative_to(ROOT).as_posix()
        for path in _package_files()
        for module, _ in _imports(path)
        if module.split(".")[0] == "freezegun"
    }
    assert touching == {"pytest_osfoundry/_process_time.py"}
