"""The docs and docstrings name only what exists: modules, objects and files.

Every backticked name that ``docs/*.md`` (outside code blocks), ``README.md`` and the
docstrings of the package and the rule book cite is resolved:

* a dotted name under ``pytest_osfoundry`` (``pytest_osfoundry.conformance.suite._layout``,
  ``pytest_osfoundry.http.Request``) is imported and its attributes looked up;
* a Sphinx role in a docstring (``:func:`check```, ``:class:`~pytest_osfoundry.x.Y```,
  ``:meth:`Results.summary```) is looked up from the docstring's module;
* a file or folder path (``docs/rules.md``, ``client/_transport.py``,
  ``tests/test_layout.py``) must exist in the repository, from its root, from the
  package's folder, or (for a module's docstring) from the module's own folder.

What a reader creates on their side (a report file, a CI workflow) is not a path of
this repository: :data:`NOT_OURS` lists those, each with why.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import itertools
import os
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_osfoundry"
RULEBOOK = ROOT / "conformance"

#: Paths the docs name that are not this repository's files (exact tokens), with why.
NOT_OURS: dict[str, str] = {
    "osf-report.json": "the JSON report a reader's run writes",
    "osf-results/": "the folder the GitHub Action uploads from the reader's run",
    "pytest_osfoundry/conformance/rulebook/spec.md": "an installed kit's conformance/spec.md",
}
_SKIPPED_DIRS = {".git", ".venv", ".peers", "node_modules", "__pycache__", ".mypy_cache"}

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_MD_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_RST_CODE = re.compile(r"``([^`\n]+)``")
_ROLE = re.compile(r":(mod|func|class|meth|attr|data|exc|obj):`~?([^`<>]+)`")
_DOTTED = re.compile(r"pytest_osfoundry(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PATH = re.compile(
    r"(?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*"
    r"|[A-Za-z0-9_-]+\.(?:py|md|toml|txt|json|yml|yaml|cfg|in)"
)
_PLACEHOLDER = re.compile(r"[<>*{}$]|\.\.\.|…|\bNAME\b|\bN\b")
_SUFFIXES = (".py", ".md", ".toml", ".txt", ".json", ".yml", ".yaml", ".cfg", ".in")


@dataclass(frozen=True)
class Citation:
    """One name cited somewhere: the text, where, and the module whose docstring it is in."""

    text: str
    where: str
    kind: str  # "dotted", "role" or "path"
    module: str | None = None
    scope: tuple[str, ...] = ()
    """The classes the docstring is in, outermost first (a role may name their members)."""


def _module_name(path: Path) -> str:
    if path.is_relative_to(RULEBOOK):
        rel = path.relative_to(RULEBOOK).with_suffix("")
        parts = ["pytest_osfoundry", "conformance", "rulebook", *rel.parts]
    else:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _docstrings(path: Path) -> Iterator[tuple[str, int, tuple[str, ...]]]:
    """Every docstring of the file: its text, line and the classes it is inside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def visit(node: ast.AST, scope: tuple[str, ...]) -> Iterator[tuple[str, int, tuple[str, ...]]]:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = (*scope, node.name) if isinstance(node, ast.ClassDef) else scope
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield doc, getattr(node, "lineno", 1), inner
            body = node.body
            for before, after in itertools.pairwise(body):  # attribute docstrings
                if (
                    isinstance(before, (ast.Assign, ast.AnnAssign))
                    and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                ):
                    yield after.value.value, after.lineno, inner
            for child in body:
                yield from visit(child, inner)
        elif isinstance(node, (ast.If, ast.Try)):
            for part in ast.iter_child_nodes(node):
                yield from visit(part, scope)

    yield from visit(tree, ())


def _tokens(
    text: str,
    where: str,
    module: str | None,
    code: re.Pattern[str],
    scope: tuple[str, ...] = (),
) -> Iterator[Citation]:
    for _role, target in _ROLE.findall(text):
        if module is not None:
            yield Citation(target.strip(), where, "role", module, scope)
    for match in code.finditer(text):
        token = match.group(1).strip()
        if " " in token or _PLACEHOLDER.search(token):
            continue
        if _DOTTED.fullmatch(token):
            yield Citation(token, where, "dotted", module)
        elif _PATH.fullmatch(token) and (token.endswith("/") or token.endswith(_SUFFIXES)):
            yield Citation(token, where, "path", module)


_COMMENT_PATH = re.compile(
    r"(?<![\w/.:-])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+\.(?:py|md|toml|txt|json|yml|yaml))\b"
)


def _comment_paths(path: Path) -> Iterator[Citation]:
    """File paths that the file's ``#`` comments name (``tests/client/test_hostile.py``)."""
    where = path.relative_to(ROOT).as_posix()
    with path.open("rb") as source:
        for token in tokenize.tokenize(source.readline):
            if token.type == tokenize.COMMENT:
                for match in _COMMENT_PATH.finditer(token.string):
                    if not _PLACEHOLDER.search(match.group(1)):
                        yield Citation(match.group(1), f"{where}:{token.start[0]}", "path")


def citations() -> list[Citation]:
    """Every citation of the docs, the README and the docstrings."""
    found: list[Citation] = []
    for page in sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]):
        text = _FENCE.sub("", page.read_text(encoding="utf-8"))
        found += _tokens(text, page.relative_to(ROOT).as_posix(), None, _MD_CODE)
    for path in sorted([*PACKAGE.rglob("*.py"), *RULEBOOK.rglob("*.py")]):
        module = _module_name(path)
        for doc, line, scope in _docstrings(path):
            where = f"{path.relative_to(ROOT).as_posix()}:{line}"
            found += _tokens(doc, where, module, _RST_CODE, scope)
        found += _comment_paths(path)
    return found


def _import_longest(dotted: str) -> tuple[ModuleType, list[str]]:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            return importlib.import_module(".".join(parts[:cut])), parts[cut:]
        except ModuleNotFoundError:
            continue
    raise ModuleNotFoundError(dotted)


def _instance_names(cls: type) -> set[str]:
    """The ``self.<name>`` attributes the class's own methods assign."""
    try:
        tree = ast.parse(inspect.getsource(cls).lstrip())
    except (OSError, TypeError, SyntaxError):
        return set()
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }


def _has(obj: object, name: str) -> bool:
    if hasattr(obj, name):
        return True
    if isinstance(obj, type):
        known = set(getattr(obj, "__annotations__", {}))
        for klass in obj.__mro__:
            known |= _instance_names(klass)
        return name in known
    return False


def _lookup(obj: object, rest: list[str]) -> bool:
    for index, name in enumerate(rest):
        if not _has(obj, name):
            return False
        if not hasattr(obj, name):  # an instance attribute: nothing below it to look up
            return index == len(rest) - 1
        obj = getattr(obj, name)
    return True


def _repository_file_names() -> set[str]:
    names: set[str] = set()
    for _folder, folders, files in os.walk(ROOT):
        folders[:] = [f for f in folders if f not in _SKIPPED_DIRS]
        names.update(folders)
        names.update(files)
    return names


_FILE_NAMES = _repository_file_names()


def _path_resolves(c: Citation) -> bool:
    token = c.text.rstrip("/")
    if "/" not in token:  # a bare file name: a file of that name in the repository
        return token in _FILE_NAMES
    bases = [ROOT, PACKAGE, (ROOT / c.where.split(":")[0]).parent]
    return any((base / token).exists() for base in bases)


def _role_resolves(c: Citation) -> bool:
    assert c.module is not None
    module = importlib.import_module(c.module)
    parts = c.text.lstrip(".").split(".")
    scopes: list[object] = [module, builtins]
    owner: object = module
    for name in c.scope:  # the enclosing classes, innermost tried first
        owner = getattr(owner, name, None)
        if owner is not None:
            scopes.insert(0, owner)
    if any(_lookup(scope, parts) for scope in scopes):
        return True
    try:  # a name from elsewhere: pytest.Config, dataclasses.field, ...
        other, rest = _import_longest(c.text)
    except (ModuleNotFoundError, ValueError):
        return False
    return _lookup(other, rest)


def resolves(c: Citation) -> bool:
    """Whether the citation names something that exists."""
    if c.kind == "path":
        return _path_resolves(c)
    if c.kind == "dotted" or c.text.startswith("pytest_osfoundry."):
        try:
            module, rest = _import_longest(c.text)
        except ModuleNotFoundError:
            return False
        return _lookup(module, rest)
    return _role_resolves(c)


CITATIONS = citations()


def test_the_scan_finds_citations_of_every_kind() -> None:
    kinds = {c.kind for c in CITATIONS}
    assert kinds == {"dotted", "role", "path"}
    assert len(CITATIONS) > 300


def test_every_cited_name_exists() -> None:
    missing = [
        f"{c.where}: {c.text} ({c.kind})"
        for c in CITATIONS
        if c.text not in NOT_OURS and not resolves(c)
    ]
    assert missing == [], "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("pytest_osfoundry.nothing_here", "dotted"),
        ("pytest_osfoundry.http.NoSuchThing", "dotted"),
        ("docs/jsonwire.md", "path"),
        ("jsonwire.py", "path"),
    ],
)
def test_a_name_that_is_gone_does_not_resolve(text: str, kind: str) -> None:
    assert not resolves(Citation(text, "docs/x.md", kind))


def test_roles_resolve_from_their_module_and_class() -> None:
    where = "pytest_osfoundry/relay/_desktop.py:1"
    module = "pytest_osfoundry.relay._desktop"
    assert resolves(Citation("FakeRelay.passes", where, "role", module))  # set in __init__
    assert resolves(Citation("passes", where, "role", module, ("FakeRelay",)))
    assert resolves(Citation("ValueError", where, "role", module))
    assert not resolves(Citation("passes", where, "role", module))
    assert not resolves(Citation("FakeRelay.gone", where, "role", module))


def test_comments_are_scanned_for_paths(tmp_path: Path) -> None:
    source = PACKAGE / "client" / "_http_transport.py"
    found = [c.text for c in _comment_paths(source)]
    assert "tests/hostile/test_hostile_client.py" in found
