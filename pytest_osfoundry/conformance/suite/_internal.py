"""What the conformance package's other rooms use of the suite's core: @check's
internals, the options, the layout, the judge (each name imported on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry.conformance.suite._checkids import (
        current_check_id,
        former_check_ids,
        is_check_id,
    )
    from pytest_osfoundry.conformance.suite._expect import CheckFailure, Expect, short
    from pytest_osfoundry.conformance.suite._extra import extra_check_paths
    from pytest_osfoundry.conformance.suite._layout import (
        AGENT_CHECKS,
        RELAY_CHECKS,
        check_module_name,
        checks_dir,
        import_check_module,
        rulebook_dir,
        where_installed,
    )
    from pytest_osfoundry.conformance.suite._options import CREDENTIAL_VARIABLES, Settings
    from pytest_osfoundry.conformance.suite._registry import (
        AGENT_AREA,
        AREAS,
        RELAY_AREA,
        RULES,
        CheckInfo,
        Rule,
        all_checks,
        check_info,
    )

_LAZY: dict[str, str] = {
    "AGENT_AREA": "pytest_osfoundry.conformance.suite._registry",
    "AGENT_CHECKS": "pytest_osfoundry.conformance.suite._layout",
    "AREAS": "pytest_osfoundry.conformance.suite._registry",
    "CheckFailure": "pytest_osfoundry.conformance.suite._expect",
    "CheckInfo": "pytest_osfoundry.conformance.suite._registry",
    "Expect": "pytest_osfoundry.conformance.suite._expect",
    "RELAY_AREA": "pytest_osfoundry.conformance.suite._registry",
    "RELAY_CHECKS": "pytest_osfoundry.conformance.suite._layout",
    "RULES": "pytest_osfoundry.conformance.suite._registry",
    "Rule": "pytest_osfoundry.conformance.suite._registry",
    "CREDENTIAL_VARIABLES": "pytest_osfoundry.conformance.suite._options",
    "Settings": "pytest_osfoundry.conformance.suite._options",
    "all_checks": "pytest_osfoundry.conformance.suite._registry",
    "check_info": "pytest_osfoundry.conformance.suite._registry",
    "check_module_name": "pytest_osfoundry.conformance.suite._layout",
    "checks_dir": "pytest_osfoundry.conformance.suite._layout",
    "current_check_id": "pytest_osfoundry.conformance.suite._checkids",
    "extra_check_paths": "pytest_osfoundry.conformance.suite._extra",
    "former_check_ids": "pytest_osfoundry.conformance.suite._checkids",
    "import_check_module": "pytest_osfoundry.conformance.suite._layout",
    "is_check_id": "pytest_osfoundry.conformance.suite._checkids",
    "rulebook_dir": "pytest_osfoundry.conformance.suite._layout",
    "short": "pytest_osfoundry.conformance.suite._expect",
    "where_installed": "pytest_osfoundry.conformance.suite._layout",
}
"""Each shared name and the module that defines it."""

__all__ = [
    "AGENT_AREA",
    "AGENT_CHECKS",
    "AREAS",
    "CREDENTIAL_VARIABLES",
    "RELAY_AREA",
    "RELAY_CHECKS",
    "RULES",
    "CheckFailure",
    "CheckInfo",
    "Expect",
    "Rule",
    "Settings",
    "all_checks",
    "check_info",
    "check_module_name",
    "checks_dir",
    "current_check_id",
    "extra_check_paths",
    "former_check_ids",
    "import_check_module",
    "is_check_id",
    "rulebook_dir",
    "short",
    "where_installed",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
