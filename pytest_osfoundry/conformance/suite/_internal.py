"""What the conformance package's other rooms use of what every suite shares.

Not for users, nor for checks (they use :mod:`pytest_osfoundry.conformance`): the one face
through which another room reaches this one's private modules (``tests/test_faces.py``).
Each name is imported from its module when first asked for, so no import gets dearer.

* ``AGENT_AREA`` -- The report area of the agent checks (``--osf-agent-command``), the
  last of :data:`AREAS`. For the reports.
* ``AGENT_CHECKS`` -- The rule book's folder of agent checks (``conformance/agent/``):
  ``--osf-agent-command``. For the agent suite.
* ``all_checks`` -- Every server check of the installed suite, in report order (area,
  then definition). For rulesdoc, the pytest plugin, the reports.
* ``AREAS`` -- Report areas, in the order the terminal summary and the Markdown table
  use. For rulesdoc, the reports.
* ``check_info`` -- The :class:`CheckInfo` of a check function (or a test item's
  function), if any. For the agent suite, the pytest plugin, the relay suite, the
  reports, the server suite.
* ``check_module_name`` -- The import name of the check module at ``path``, or None if
  it is not one. For the pytest plugin.
* ``CheckFailure`` -- A check found the target differing from conformance/spec.md; the
  message says how. For the agent suite, the pytest plugin, the relay suite, the server
  suite.
* ``CheckInfo`` -- One conformance check's metadata. For rulesdoc, the reports, the
  server suite.
* ``checks_dir`` -- The folder of one kind of checks inside the rule book (default: the
  server's). For the agent suite, the pytest plugin.
* ``current_check_id`` -- The id a check has now: ``check_id`` itself unless it was
  renamed. For the reports.
* ``Expect`` -- A check's judge: ``c.expect(condition, message)`` and the named
  comparisons. For the server suite.
* ``extra_check_paths`` -- The extra check modules' paths the ini option and the hook
  name, in that order, each once. For the pytest plugin.
* ``former_check_ids`` -- The ids the check ``check_id`` had before (none for most
  checks). For the pytest plugin.
* ``import_check_module`` -- The check module ``name`` (a :func:`check_module_name`),
  imported once. For the pytest plugin.
* ``is_check_id`` -- Whether ``text`` is a well-formed check id (of the rule book or an
  extra rule). For the reports.
* ``RELAY_AREA`` -- The report area of the relay checks (``--osf-relay-command``). For
  the reports.
* ``RELAY_CHECKS`` -- The rule book's folder of relay checks (``conformance/relay/``):
  ``--osf-relay-command``. For the pytest plugin.
* ``Rule`` -- One rule of conformance/spec.md, as ``rules.toml`` describes it. For
  rulesdoc.
* ``rulebook_dir`` -- The folder of the installed rule book (a checkout's
  ``conformance/`` when editable). For the pytest plugin.
* ``RULES`` -- Every rule the suite checks, by id (conformance/spec.md), read from
  ``RULES_FILE``. For rulesdoc.
* ``Settings`` -- The suite's options as given (command line first, then environment),
  validated. For the agent suite, the pytest plugin, the reports, the server suite.
* ``short`` -- ``repr(value)`` cut to ``limit`` characters, for failure messages. For
  the server suite.
* ``where_installed`` -- A rule book file named the machine-independent way -- relative
  to the folder holding the package. For the pytest plugin, the reports.
"""

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
    from pytest_osfoundry.conformance.suite._options import Settings
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
