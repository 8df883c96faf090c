"""Extra checks: a project's own rules, run inside the suite beside the rule book's.

A server team with rules of its own (its tools, its rate limits) writes checks with
the public decorator :func:`pytest_osfoundry.conformance.check`, giving each rule's
prose as an :class:`ExtraRule` (the rule book's rules take theirs from
``rules.toml``), and tells the suite where the check modules are, in either way:

* the ini option :data:`INI_OPTION` (``osf_extra_checks``) of the project's pytest
  configuration: files or folders, relative to the configuration file's folder;
* the hook :func:`pytest_osf_extra_checks` in a ``conftest.py`` or a plugin,
  returning paths.

A run with no test paths (``pytest --osf-target=...``) then collects those modules
after the rule book; the checks in them get the same ``osf_conf`` context (roles,
exchange capture), ids, levels, reports and baseline as the rule book's. A run given
test paths runs what it is given, extra check modules included.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Literal

import pytest

from pytest_osfoundry.conformance.suite._checkids import is_extra_rule_id

__all__ = [
    "INI_OPTION",
    "ExtraRule",
    "ExtraRuleError",
    "add_ini_option",
    "extra_check_paths",
    "pytest_osf_extra_checks",
    "register_rule",
]

Level = Literal["documented", "reconstructed"]

INI_OPTION = "osf_extra_checks"
"""The ini option listing a project's extra check modules (files or folders)."""


class ExtraRuleError(ValueError):
    """An extra rule or its check modules are not what the suite needs; the message
    names the rule, field or path."""


@dataclass(frozen=True)
class ExtraRule:
    """A project's own rule: the prose the rule book keeps in ``rules.toml``.

    ``rule_id`` is ``X-`` and an upper-case name (``X-ACME``); the rule's checks are
    ``X-ACME-<slug>``. ``title`` names the rule, ``why`` says why it is checked,
    ``spec`` is where it is written down (a URL or a document and anchor: it is what
    the reports print as the check's ``spec``), ``level`` is ``documented`` (the
    project documents the behaviour) or ``reconstructed``, ``area`` is the report
    group (default ``extra``; the rule book's areas come first in reports).

    Raises:
        ExtraRuleError: a field is missing, empty, or not of its form.
    """

    rule_id: str
    title: str
    why: str
    spec: str
    level: Level = "documented"
    area: str = "extra"

    def __post_init__(self) -> None:
        if not isinstance(self.rule_id, str) or not is_extra_rule_id(self.rule_id):
            raise ExtraRuleError(
                f"extra rule id {self.rule_id!r} must be 'X-' and an upper-case name "
                "(like X-ACME); D and R ids are the rule book's"
            )
        for name in ("title", "why", "spec", "area"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ExtraRuleError(f"extra rule {self.rule_id}: {name} must be a non-empty text")
        if self.level not in ("documented", "reconstructed"):
            raise ExtraRuleError(
                f"extra rule {self.rule_id}: level {self.level!r} is not "
                "'documented' or 'reconstructed'"
            )


_RULES: dict[str, ExtraRule] = {}


def register_rule(rule: ExtraRule) -> ExtraRule:
    """Note ``rule`` as the one meaning of its id in this process; return it.

    The same rule given again (equal prose, e.g. a module imported anew) is fine.

    Raises:
        ExtraRuleError: another rule with the same id but different prose is known.
    """
    known = _RULES.setdefault(rule.rule_id, rule)
    if known != rule:
        raise ExtraRuleError(
            f"two extra rules are named {rule.rule_id} with different prose "
            f"({known.title!r} and {rule.title!r}): give each rule one ExtraRule"
        )
    return known


def pytest_osf_extra_checks(config: pytest.Config) -> Iterable[str | PathLike[str]] | None:
    """Hook (implement it in a ``conftest.py`` or a plugin): paths of extra check
    modules (files or folders) to run after the rule book in a run with no test paths.

    Relative paths are taken from the run's root folder (``config.rootpath``). This
    function is the hook's specification (the kit registers it in every run); the
    suite calls the implementations, never this.
    """


def add_ini_option(parser: pytest.Parser) -> None:
    """Register :data:`INI_OPTION` (called from the kit's ``pytest_addoption``)."""
    parser.addini(
        INI_OPTION,
        "osfoundry: files or folders of extra conformance checks (relative to the "
        "configuration file's folder), run after the rule book when no test paths are given",
        type="paths",
        default=[],
    )


def extra_check_paths(config: pytest.Config) -> list[Path]:
    """The extra check modules' paths the ini option and the hook name, in that order,
    each once.

    Raises:
        pytest.UsageError: a named path does not exist, or a hook returned something
            that is not a path (the message names it and where it came from).
    """
    found: list[tuple[Path, str]] = [(Path(p), INI_OPTION) for p in config.getini(INI_OPTION)]
    for answer in config.hook.pytest_osf_extra_checks(config=config):
        if answer is None:
            continue
        if isinstance(answer, (str, PathLike)):
            answer = [answer]
        for value in answer:
            if not isinstance(value, (str, PathLike)):
                raise pytest.UsageError(
                    f"pytest_osf_extra_checks returned {value!r}: give paths (str or Path)"
                )
            path = Path(value)
            found.append((path if path.is_absolute() else config.rootpath / path, "the hook"))
    paths: list[Path] = []
    for path, source in found:
        if not path.exists():
            raise pytest.UsageError(
                f"{INI_OPTION}: {path} (from {source}) does not exist"
                if source == INI_OPTION
                else f"pytest_osf_extra_checks: {path} does not exist"
            )
        resolved = path.resolve()
        if resolved not in paths:
            paths.append(resolved)
    return paths
