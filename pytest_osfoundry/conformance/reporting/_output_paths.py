"""Output paths checked before the run: a report that cannot be written fails at once.

Without this, ``--osf-report`` naming a folder (or a path under a file) raised
``IsADirectoryError``/``FileExistsError`` only after every check had run.
:func:`writable_path_problem` says what is wrong with a path without creating
anything; :func:`check_output_paths` turns the first problem into a usage error that
names the option.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.suite._internal import Settings

__all__ = ["check_output_paths", "writable_path_problem"]

_OUTPUTS = (
    ("--osf-report", "osf_report"),
    ("--osf-markdown", "osf_markdown"),
    ("--osf-write-baseline", "osf_write_baseline"),
)


def writable_path_problem(path: str | Path) -> str | None:
    """Why a file cannot be written at ``path`` (``None``: it can, as far as we can tell).

    Missing parent folders are fine (the writers create them); an existing folder at
    ``path``, a file where a parent folder should be, or a read-only parent are not.
    """
    target = Path(path)
    if target.is_dir():
        return f"{path} is a folder; name a file in it"
    parent = target.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        return f"{parent} is a file, so nothing can be written under it"
    if parent.is_dir() and not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write in {parent} (permission denied)"
    if target.exists() and not os.access(target, os.W_OK):
        return f"cannot overwrite {path} (permission denied)"
    return None


def check_output_paths(settings: Settings) -> None:
    """Fail before the run if a report or baseline file cannot be written.

    Raises:
        pytest.UsageError: naming the option and what is wrong with its path.
    """
    for flag, dest in _OUTPUTS:
        value = getattr(settings, dest)
        if value:
            problem = writable_path_problem(value)
            if problem is not None:
                raise pytest.UsageError(f"{flag}: {problem}")
