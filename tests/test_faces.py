"""Public faces respected: no module reaches into another package's private modules.

A package (a folder under ``pytest_osfoundry/``, the conformance package's rooms too)
shows the others its face, ``pytest_osfoundry.Y`` (its ``__init__`` and public modules),
and, for what the kit shares inside itself but users should not import, one face module,
``pytest_osfoundry.Y._internal``. A package's private modules are its own, its
subpackages' and its faces': the root's (``_vocabulary``, ``_ids``, ``_wirejson``, ...)
are the shared internals of every subpackage. Every import statement of every module is
read, deferred ones and ``TYPE_CHECKING`` ones too, and so is every string that names a
module of the package (a lazy import by name).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "pytest_osfoundry"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
FACE = "_internal"
_MODULE_NAME = re.compile(rf"{PACKAGE}(\.\w+)+")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _breach(module: tuple[str, ...], target: str) -> bool:
    """Whether ``module`` (its path's parts under the package, without ``.py``) may not
    reach ``target`` (a dotted name under the package, or a name imported from it).

    The first private part of ``target`` belongs to the package (or module) before it.
    A module may reach the private parts of its own package and of those containing it
    (the root's private modules are every subpackage's); a package's faces, its
    ``__init__`` and its ``_internal``, may gather names from anywhere inside it; any
    other module reaches a package only through its faces.
    """
    folder, name = module[:-1], module[-1]
    parts = tuple(target.split("."))[1:]
    for i, part in enumerate(parts):
        if _is_private(part):
            owner = parts[:i]
            if folder[: len(owner)] == owner:
                return False
            if name in ("__init__", FACE) and owner[: len(folder)] == folder:
                return False
            rest = parts[i + 1 :]
            return part != FACE or any(_is_private(p) for p in rest)
    return False


def _imports(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """``(line, dotted name)`` of every module and name an import statement, or a module
    name in a string, reaches (``from m import n`` reaches ``m.n``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _MODULE_NAME.fullmatch(node.value)
        ):
            yield node.lineno, node.value


def breaches(root: Path = ROOT) -> list[str]:
    """Every import that reaches into another subpackage's private module, as
    ``path:line imports name``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts

        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, name in _imports(tree):
            if name.split(".")[0] == PACKAGE and _breach(parts, name):
                found.append(f"{path.relative_to(root.parent).as_posix()}:{line} imports {name}")
    return sorted(set(found))


def test_no_module_imports_another_subpackages_private_module() -> None:
    found = breaches()
    assert found == [], (
        "import these through the subpackage's face, pytest_osfoundry.<sub> or "
        "pytest_osfoundry.<sub>._internal (adding the name there, with why):\n"
        + "\n".join(found)
    )


def test_the_scan_finds_each_kind_of_breach(tmp_path: Path) -> None:
    """The scan itself: each way of reaching in is found, each face is let through."""
    pkg = tmp_path / PACKAGE
    for sub in ("a", "b"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "_shared.py").write_text("")
    (pkg / "a" / "c").mkdir()
    (pkg / "top.py").write_text("from pytest_osfoundry.a._x import y\n")
    (pkg / "a" / "c" / "_k.py").write_text(
        "from pytest_osfoundry.a._x import y\n"
        "from pytest_osfoundry.b._n import y\n"
        "from pytest_osfoundry.a._internal import _y\n"
    )
    (pkg / "b" / "_m.py").write_text(
        "import pytest_osfoundry.a._x\n"
        "from pytest_osfoundry.a import _x\n"
        "def f():\n"
        "    from pytest_osfoundry.a._x import y\n"
        "LAZY = 'pytest_osfoundry.a._x'\n"
        "from pytest_osfoundry.a._internal import y\n"
        "from pytest_osfoundry.a import y\n"
        "from pytest_osfoundry.a.public import y\n"
        "from pytest_osfoundry._shared import y\n"
        "from pytest_osfoundry.b._n import y\n"
        "from pytest_osfoundry.a._internal import _y\n"
    )
    (pkg / "a" / "_internal.py").write_text("from pytest_osfoundry.a.c._k import y\n")
    (pkg / "a" / "__init__.py").write_text("from pytest_osfoundry.a.c._k import y\n")
    (pkg / "a" / "_p.py").write_text(
        "from pytest_osfoundry.a.c._k import y\n"
        "from pytest_osfoundry.a.c._internal import y\n"
        "from pytest_osfoundry.a._x import y\n"
    )
    assert set(breaches(pkg)) == {
        f"{PACKAGE}/a/_p.py:1 imports {PACKAGE}.a.c._k.y",
        f"{PACKAGE}/a/c/_k.py:2 imports {PACKAGE}.b._n.y",
        f"{PACKAGE}/b/_m.py:1 imports {PACKAGE}.a._x",
        f"{PACKAGE}/b/_m.py:2 imports {PACKAGE}.a._x",
        f"{PACKAGE}/b/_m.py:4 imports {PACKAGE}.a._x.y",
        f"{PACKAGE}/b/_m.py:5 imports {PACKAGE}.a._x",
        f"{PACKAGE}/b/_m.py:11 imports {PACKAGE}.a._internal._y",
        f"{PACKAGE}/top.py:1 imports {PACKAGE}.a._x.y",
    }
