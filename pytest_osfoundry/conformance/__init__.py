"""The conformance suite: the rules of conformance/spec.md as named checks against any server.

``pytest --osf-target=URL`` (or ``--osf-target=embedded``) runs the rule book's checks
against a server and reports, rule by rule, where it differs from the documented and
reconstructed behaviour (``docs/rules.md`` lists every check id).

**The public API for a project's own checks** (``docs/extra-checks.md``) is this
package's names, never its private modules:

* :func:`check` -- the decorator declaring a check (``X-NAME-<slug>`` ids for a
  project's rules, with their prose as an :class:`ExtraRule`);
* :class:`Conformance` -- the ``osf_conf`` context a check works in (roles, agent,
  desktop, wire and exchange capture, expectations);
* :class:`CheckFailure` -- how a check fails; :class:`ToolReply` -- a decoded
  ``tools/call`` answer; :class:`CheckInfo` -- a check's id, rule, level, area, spec;
* the ini option ``osf_extra_checks`` and the hook ``pytest_osf_extra_checks``
  say where a project's check modules are.

The kit's pytest plugin imports :mod:`~pytest_osfoundry.conformance._options` (the
``--osf-`` options) in every pytest run, which imports this package first: it stays
light, and imports the names above only when one is first used (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_osfoundry import SPEC_REVISION, __version__

if TYPE_CHECKING:
    from pytest_osfoundry.client import ToolReply
    from pytest_osfoundry.conformance._expect import CheckFailure
    from pytest_osfoundry.conformance._extra import ExtraRule, Level
    from pytest_osfoundry.conformance._harness import Conformance
    from pytest_osfoundry.conformance._registry import CheckInfo, check

SUITE_VERSION = __version__
"""The suite's version (the package's)."""

_LAZY: dict[str, str] = {
    "CheckFailure": "pytest_osfoundry.conformance._expect",
    "CheckInfo": "pytest_osfoundry.conformance._registry",
    "Conformance": "pytest_osfoundry.conformance._harness",
    "ExtraRule": "pytest_osfoundry.conformance._extra",
    "Level": "pytest_osfoundry.conformance._extra",
    "ToolReply": "pytest_osfoundry.client",
    "check": "pytest_osfoundry.conformance._registry",
}

__all__ = [
    "SPEC_REVISION",
    "SUITE_VERSION",
    "CheckFailure",
    "CheckInfo",
    "Conformance",
    "ExtraRule",
    "Level",
    "ToolReply",
    "check",
]


def __getattr__(name: str) -> Any:
    """The public names above, taken from their modules (imported when first asked).

    Not cached here: the name is always the one its module holds now (a test run that
    re-imports the suite's modules, as pytester does, sees the same objects as its checks).
    """
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
