"""The conformance suite: the rules of conformance/spec.md as named checks against any server.

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

from pytest_osfoundry import SPEC_REVISION, __version__

SUITE_VERSION = __version__
"""The suite's version (the package's)."""

__all__ = ["SPEC_REVISION", "SUITE_VERSION"]
