"""The rule book: the conformance suite's checks by area, their prose and the spec.

This folder is the repository's ``conformance/``; it installs as the package
:mod:`pytest_osfoundry.conformance.rulebook` (``pyproject.toml`` maps it there), so a
wheel carries one top-level import name and a checkout needs no link. It holds

* ``checks/`` — the server checks, one module per area (``test_<area>.py``),
* ``rules.toml`` — every rule's title, anchor, area and prose,
* ``spec.md`` — the rule book the checks' ``spec`` fields point at.

The machinery that runs the checks (options, harness, reports) is
:mod:`pytest_osfoundry.conformance`. Nothing imports a check module by a static
import: the suite's plugin collects them by path and imports them under this
package's name (:func:`pytest_osfoundry.conformance.suite._layout.check_module_name`).
"""

RULEBOOK_PACKAGE = "pytest_osfoundry.conformance.rulebook"
"""The one name this folder is imported under."""

if __name__ != RULEBOOK_PACKAGE:  # pragma: no cover - a checkout's top-level folder
    raise ImportError(
        f"the rule book is the package {RULEBOOK_PACKAGE}; it cannot be imported as "
        f"{__name__!r} (install the kit: pip install -e .)"
    )
