"""A package's public names imported when first used (PEP 562), for faces that stay light.

:func:`lazy_names` makes the module ``__getattr__`` and ``__dir__`` of a package whose
names live in heavier modules: the suite's face (:mod:`pytest_osfoundry.conformance`)
and the relay suite's (:mod:`pytest_osfoundry.conformance.relay`), which a run imports
whether or not it uses them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, names: Mapping[str, str], own: Mapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each of ``names`` (a public name
    and the module that defines it) is taken from its module when asked; ``own`` is the
    package's namespace (its ``globals()``), listed beside them.

    Not cached: the name is always the one its module holds now (a test run that
    re-imports the suite's modules, as pytester does, sees the same objects as its
    checks). Asking for another name raises :class:`AttributeError`, as a module does.
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted({*own, *names})

    return __getattr__, __dir__
