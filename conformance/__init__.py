"""The conformance suite: the rules of docs/spec.md as named checks against any server.

``pytest --osf-target=URL`` (or ``--osf-target=embedded``) runs the checks in
:mod:`pytest_osfoundry.conformance.checks` against a server and reports, rule by
rule, where it differs from the documented and reconstructed behaviour. Each check
is a function decorated with :func:`~pytest_osfoundry.conformance._registry.check`,
working through a :class:`~pytest_osfoundry.conformance._harness.Conformance` context;
see ``docs/rules.md`` for every check id.

The kit's pytest plugin imports :mod:`~pytest_osfoundry.conformance._options` (the
``--osf-`` options) in every pytest run, which imports this package first: it stays
light, and names nothing heavier than the versions.
"""

if __name__ != "pytest_osfoundry.conformance":  # pragma: no cover - a checkout's top-level folder
    raise ImportError(
        "the conformance suite is the package pytest_osfoundry.conformance; "
        f"it cannot be imported as {__name__!r}"
    )

from pytest_osfoundry import SPEC_REVISION, __version__

SUITE_VERSION = __version__
"""The suite's version (the package's)."""

__all__ = ["SPEC_REVISION", "SUITE_VERSION"]
