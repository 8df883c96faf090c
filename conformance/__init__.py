"""The conformance suite: the rules of docs/spec.md as named checks against any server.

``pytest --osf-target=URL`` (or ``--osf-target=embedded``) runs the checks in
:mod:`pytest_osfoundry.conformance.checks` against a server and reports, rule by
rule, where it differs from the documented and reconstructed behaviour. Each check
is a function decorated with :func:`check`, working through a :class:`Conformance`
context; see ``docs/rules.md`` for every check id.
"""

if __name__ != "pytest_osfoundry.conformance":  # pragma: no cover - a checkout's top-level folder
    raise ImportError(
        "the conformance suite is the package pytest_osfoundry.conformance; "
        f"it cannot be imported as {__name__!r}"
    )

from pytest_osfoundry import SPEC_REVISION, __version__
from pytest_osfoundry.client._tool_result import ToolReply
from pytest_osfoundry.conformance._harness import CheckFailure, Conformance
from pytest_osfoundry.conformance._registry import AREAS, RULES, CheckInfo, all_checks, check

SUITE_VERSION = __version__
"""The suite's version (the package's)."""

__all__ = [
    "AREAS",
    "RULES",
    "SPEC_REVISION",
    "SUITE_VERSION",
    "CheckFailure",
    "CheckInfo",
    "Conformance",
    "ToolReply",
    "all_checks",
    "check",
]
