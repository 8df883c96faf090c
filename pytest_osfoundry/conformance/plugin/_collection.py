"""Collecting the rule book: its modules under their one name, each check one item.

* :class:`CheckModule` imports a check module by the name
  :func:`~pytest_osfoundry.conformance.suite._layout.check_module_name` gives (never by
  path; with :func:`~pytest_osfoundry.conformance.suite._layout.import_check_module`, not
  rewritten by pytest), and the rule book's folders are plain folders, not packages.
* :class:`CheckItem` is one check named by its check id; a failed check prints its
  line and message, no traceback (:class:`CheckFailureRepr`).
* :func:`pytest_collection_modifyitems` tags every check, deselects what
  ``--osf-level`` and the opt-ins leave out, and marks baseline entries non-strict
  ``xfail``.
"""

from __future__ import annotations

import contextlib
import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.conformance.plugin._stash import BASELINE, COLLECTED, run_settings
from pytest_osfoundry.conformance.suite._internal import (
    CheckFailure,
    check_info,
    check_module_name,
    former_check_ids,
    import_check_module,
    rulebook_dir,
    where_installed,
)

__all__ = [
    "CheckFailureRepr",
    "CheckItem",
    "CheckModule",
    "pytest_collect_directory",
    "pytest_collect_file",
    "pytest_collection_modifyitems",
    "pytest_pycollect_makeitem",
    "pytest_pycollect_makemodule",
]


class CheckModule(pytest.Module):
    """A module of the rule book, imported under its one name (never by its path).

    pytest would name ``conformance/checks/test_access.py`` of a checkout after the
    folders above it (``conformance.checks.test_access``), a second copy of the
    module; :func:`~pytest_osfoundry.conformance.suite._layout.check_module_name` gives
    the name the registry knows it by.
    """

    def _getobj(self) -> Any:
        name = check_module_name(self.path)
        if name is None:  # pragma: no cover - only built for rule book paths
            raise self.CollectError(f"{self.path} is not a module of the rule book")
        try:
            return import_check_module(name)
        except Exception as err:  # a broken check module: pytest reports it, no traceback
            raise self.CollectError(
                f"the check module {name} ({self.path}) cannot be imported: "
                f"{type(err).__name__}: {err}"
            ) from err


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collect the suite's modules even when ``python_files`` would not match them."""
    if check_module_name(file_path) is None:
        return None
    patterns = parent.config.getini("python_files")
    if any(fnmatch.fnmatch(file_path.name, p) for p in patterns):
        return None  # the python plugin collects it (through the hook below)
    return CheckModule.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Dir | None:
    """Collect the rule book's folders as plain folders, not packages.

    A :class:`pytest.Package` imports its ``__init__.py`` by path, under the name the
    folders above it give (``conformance``), which the rule book refuses.
    """
    if not _in_rulebook(path):
        return None
    return pytest.Dir.from_parent(parent, path=path)


def _in_rulebook(path: Path) -> bool:
    book = rulebook_dir()
    resolved = path.resolve()
    return resolved == book or book in resolved.parents


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(
    module_path: Path, parent: pytest.Collector
) -> pytest.Module | None:
    """Make the rule book's modules :class:`CheckModule` (their one import name)."""
    if check_module_name(module_path) is None:
        return None
    return CheckModule.from_parent(parent, path=module_path)


class CheckItem(pytest.Function):
    """A conformance check: one test item named by its check id.

    A :class:`~pytest_osfoundry.conformance.server._harness.CheckFailure` is shown with short
    tracebacks (unless ``--tb`` says otherwise): the check's line and its message.
    """

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> Any:
        if isinstance(excinfo.value, CheckFailure) and self.config.getoption("tbstyle") == "auto":
            entries = [e for e in excinfo.traceback if not _hidden(e, excinfo)]
            message = str(excinfo.value)
            lines = []
            path, lineno = str(self.path), 0
            if entries:
                entry = entries[-1]
                path, lineno = str(entry.path), entry.lineno + 1
                lines.append(f"{Path(entry.path).name}:{lineno}: in {entry.name}")
                with contextlib.suppress(IndexError, OSError):  # no source: no line
                    lines.append("    " + str(entry.statement).strip().splitlines()[0])
            lines += [f"E   {line}" for line in message.splitlines() or [""]]
            first = message.splitlines()[0] if message else "check failed"
            return CheckFailureRepr(lines, _Crash(path, lineno, first))
        return super().repr_failure(excinfo)


@dataclass(frozen=True)
class _Crash:
    path: str
    lineno: int
    message: str


class CheckFailureRepr:
    """How a failed check is printed: where, the line, and the message (no traceback).

    ``reprcrash.message`` (the message's first line) is what pytest's short summary
    and JUnit XML show.
    """

    def __init__(self, lines: list[str], crash: _Crash) -> None:
        self.lines = lines
        self.reprcrash = crash

    def toterminal(self, tw: Any) -> None:
        """Write the lines, messages in red."""
        for line in self.lines:
            tw.line(line, red=line.startswith("E "), bold=line.startswith("E "))

    def __str__(self) -> str:
        return "\n".join(self.lines)


def _hidden(entry: Any, excinfo: pytest.ExceptionInfo[BaseException]) -> bool:
    try:
        return bool(entry.ishidden(excinfo))
    except TypeError:  # pytest < 8: ishidden() takes no argument
        return bool(entry.ishidden())


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> list[pytest.Function] | None:
    """Collect each check as one item named by its check id (``-k`` also matches the
    ids it had before, :data:`~pytest_osfoundry.conformance.suite._checkids.RENAMED_CHECKS`)."""
    info = check_info(obj)
    if info is None or not callable(obj):
        return None
    item: pytest.Function = CheckItem.from_parent(collector, name=info.check_id, callobj=obj)
    item.extra_keyword_matches.update(former_check_ids(info.check_id))
    return [item]


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Tag checks, apply ``--osf-level`` and opt-ins, and mark baseline entries."""
    settings = run_settings(config)
    baseline = config.stash.get(BASELINE, None)
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        info = check_info(getattr(item, "obj", None))
        if info is None:
            keep.append(item)
            continue
        config.stash.setdefault(COLLECTED, set()).add(info.check_id)
        if settings.osf_level == "documented" and info.level != "documented":
            dropped.append(item)
            continue
        if info.opt_in == "--osf-timing" and not settings.osf_timing:
            dropped.append(item)
            continue
        item.user_properties.extend(
            [
                ("osf_check", info.check_id),
                ("osf_rule", info.rule),
                ("osf_level", info.level),
                ("osf_spec", where_installed(info.spec)),
            ]
        )
        if baseline is not None and info.check_id in baseline:
            item.add_marker(
                pytest.mark.xfail(reason=f"listed in the baseline {baseline.path}", strict=False)
            )
        keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
