"""The ``osf`` marker's help, drawn from :class:`~pytest_osfoundry.world.WorldConfig`.

Every pytest run registers the marker, and importing :mod:`pytest_osfoundry.world`
would import every component (a tenth of a second): the field names are read from
``world.py``'s source instead, with :mod:`ast`, so the help names exactly the
fields there are without importing them. Where no source is installed (a build
that ships only bytecode) the module is imported after all.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from dataclasses import fields, is_dataclass
from pathlib import Path

__all__ = ["WORLD_MODULE", "osf_marker_help", "world_config_fields"]

WORLD_MODULE = "pytest_osfoundry.world"
"""The module that defines ``WorldConfig``."""

_CLASS = "WorldConfig"


def _fields_from_source(source: str) -> tuple[str, ...] | None:
    """The annotated class-level names of ``WorldConfig`` in ``source``, in order."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == _CLASS:
            return tuple(
                item.target.id
                for item in node.body
                if isinstance(item, ast.AnnAssign)
                and isinstance(item.target, ast.Name)
                and not item.target.id.startswith("_")
            )
    return None


def world_config_fields() -> tuple[str, ...]:
    """``WorldConfig``'s field names, in definition order (read without importing it).

    Raises:
        RuntimeError: ``WorldConfig`` is neither in the module's source nor a dataclass
            of the module (a broken install).
    """
    spec = importlib.util.find_spec(WORLD_MODULE)
    origin = spec.origin if spec is not None else None
    if origin and origin.endswith(".py") and Path(origin).is_file():
        found = _fields_from_source(Path(origin).read_text(encoding="utf-8"))
        if found is not None:
            return found
    config = getattr(importlib.import_module(WORLD_MODULE), _CLASS, None)
    if not is_dataclass(config):
        raise RuntimeError(f"{WORLD_MODULE}.{_CLASS} is not a dataclass: a broken install")
    return tuple(f.name for f in fields(config))


def osf_marker_help() -> str:
    """The marker line: every ``WorldConfig`` field (the fixtures' own options are fields too)."""
    return (
        "osf(**options): configure the osf_ fixtures (any WorldConfig field: "
        + ", ".join(world_config_fields())
        + ")"
    )
