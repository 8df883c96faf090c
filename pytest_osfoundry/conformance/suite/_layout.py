"""Where the rule book is, and the names its check modules are imported under.

The repository keeps the checks in its top-level ``conformance/`` folder (the rule
book); ``pyproject.toml`` installs that folder as the package :data:`RULEBOOK_PACKAGE`,
so a wheel carries one top-level import name and no checkout needs a link. An
editable install maps the name to the checkout's folder, a wheel holds a real one:
this module asks the import system where the package is, so both read the same.

Nothing imports a check module by a static ``import``: the suite's plugin collects
them by path and imports each under :func:`check_module_name`, its one name (a
second name would give the checks a second registry entry), with
:func:`import_check_module`: through Python's own import system, not pytest's
assertion rewriting, so a run in a fresh environment compiles nothing the install did
not (pytest would rewrite and compile every check module again in each job with no
cache of its own). No check relies on the rewriting: each says what failed through
its ``expect``; the few bare ``assert`` lines only narrow types after one.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from importlib import resources
from pathlib import Path
from types import ModuleType

__all__ = [
    "AGENT_CHECKS",
    "RELAY_CHECKS",
    "RULEBOOK_PACKAGE",
    "SERVER_CHECKS",
    "check_module_name",
    "check_modules",
    "checks_dir",
    "import_check_module",
    "read_rulebook_file",
    "rulebook_dir",
    "where_installed",
]

RULEBOOK_PACKAGE = "pytest_osfoundry.conformance.rulebook"
"""The package the repository's ``conformance/`` folder installs as."""

SERVER_CHECKS = "checks"
"""The rule book's folder of server checks (``conformance/checks/`` in a checkout)."""

RELAY_CHECKS = "relay"
"""The rule book's folder of relay checks (``conformance/relay/``): ``--osf-relay-command``."""

AGENT_CHECKS = "agent"
"""The rule book's folder of agent checks (``conformance/agent/``): ``--osf-agent-command``."""


@functools.cache
def rulebook_dir() -> Path:
    """The folder of the installed rule book (a checkout's ``conformance/`` when editable).

    Found without importing the rule book's modules (only its parent package).

    Raises:
        ModuleNotFoundError: the kit is installed without its rule book (a broken
            install); the message says how to mend it.
    """
    spec = importlib.util.find_spec(RULEBOOK_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"{RULEBOOK_PACKAGE} is not installed: the kit was installed without its "
            "conformance checks; reinstall pytest-osfoundry"
        )
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def where_installed(reference: str) -> str:
    """A rule book file named the machine-independent way -- relative to the folder
    holding the package, ``pytest_osfoundry/conformance/rulebook/spec.md#d6`` (what
    the registry and ``docs/rules.md`` say) -- as the file of this install, which is
    what a report names: relative to the working folder when it lies inside it (a
    checkout's ``conformance/spec.md#d6``), else absolute (a wheel's, in
    ``site-packages``). Any other text (a project's own rule's reference) is returned
    as it is."""
    prefix = RULEBOOK_PACKAGE.replace(".", "/") + "/"
    if not reference.startswith(prefix):
        return reference
    name, hash_, anchor = reference[len(prefix) :].partition("#")
    path = rulebook_dir() / name
    try:
        shown = path.relative_to(Path.cwd().resolve())
    except ValueError:  # outside the working folder (or none): the whole path
        shown = path
    return f"{shown.as_posix()}{hash_}{anchor}"


def checks_dir(area: str = SERVER_CHECKS) -> Path:
    """The folder of one kind of checks inside the rule book (default: the server's)."""
    return rulebook_dir() / area


def check_module_name(path: Path) -> str | None:
    """The import name of the check module at ``path``, or None if it is not one.

    A check module is a ``test_*.py`` file in a folder of the rule book
    (``.../checks/test_access.py`` → ``pytest_osfoundry.conformance.rulebook.checks.test_access``).
    """
    try:
        relative = path.resolve().relative_to(rulebook_dir())
    except ValueError:
        return None
    if len(relative.parts) != 2 or not relative.name.startswith("test_"):
        return None
    if relative.suffix != ".py":
        return None
    return ".".join((RULEBOOK_PACKAGE, relative.parts[0], relative.stem))


def check_modules(area: str = SERVER_CHECKS) -> list[str]:
    """The import names of one area's check modules, sorted by file name."""
    return sorted(
        name
        for name in (check_module_name(p) for p in checks_dir(area).glob("test_*.py"))
        if name is not None
    )


_IMPORTING = threading.RLock()
"""Held while a check module is imported, so that two threads never run one twice."""


def import_check_module(name: str) -> ModuleType:
    """The check module ``name`` (a :func:`check_module_name`), imported once.

    Found and loaded by Python's own path finder, past the finders in front of it on
    ``sys.meta_path`` (pytest's assertion rewriting among them): Python's bytecode
    cache serves it, as it serves the kit's other modules.

    Raises:
        ModuleNotFoundError: no such module in the rule book.
        Exception: whatever the module raised while it ran.
    """
    with _IMPORTING:
        module = sys.modules.get(name)
        if module is not None:
            return module
        parent, _, child = name.rpartition(".")
        package = importlib.import_module(parent)
        spec = importlib.machinery.PathFinder.find_spec(name, package.__path__)
        if spec is None or spec.loader is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        setattr(package, child, module)
        return module


def read_rulebook_file(name: str) -> str:
    """The text of a data file of the rule book (``rules.toml``, ``spec.md``)."""
    return (resources.files(RULEBOOK_PACKAGE) / name).read_text("utf-8")
