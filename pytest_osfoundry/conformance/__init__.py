"""The conformance suite: the rules of conformance/spec.md as named checks against any server.

``pytest --osf-target=URL`` (or ``--osf-target=embedded``) runs the rule book's checks
against a server and reports, rule by rule, where it differs from the documented and
reconstructed behaviour (``docs/rules.md`` lists every check id).

**The public API for checks** -- the rule book's and a project's own
(``docs/extra-checks.md``) -- is this package's names and its public modules
(:mod:`~pytest_osfoundry.conformance.expected`, :mod:`~pytest_osfoundry.conformance.relay`),
never its private modules (``tests/conformance/test_suite_imports.py`` holds the rule
book to that):

* declaring: :func:`check` (``X-NAME-<slug>`` ids for a project's rules, with their
  prose as an :class:`ExtraRule`), :class:`CheckInfo`, :data:`Level`;
* working and judging: :class:`Conformance` (the ``osf_conf`` context: roles, agent,
  desktop, wire and exchange capture, expectations), :class:`CheckFailure`,
  :class:`ToolReply`, :func:`short`, :func:`is_utc_timestamp`, :func:`is_uuid`,
  :func:`mann_whitney_z`;
* runs and sessions: :func:`started_run`, :func:`finished_run` (:class:`FinishedRun`),
  :func:`fixed_sessions`, :func:`extra_sessions`, :func:`overflow_sessions`,
  :func:`unshared_session_id`, :data:`RENAMED`, and the ``sharing`` names
  :data:`FIXED` and :data:`HUNDRED` of ``c.desktop.changing_list``;
* MCP revisions and raw replies: :func:`served_revisions` (:class:`Revisions`),
  :func:`need_revision`, :func:`need_legacy`, :data:`NOT_SERVED`,
  :func:`modern_headers`, :func:`modern_body`, :func:`legacy_headers`,
  :func:`rpc_body` (any JSON-RPC request, as the kit writes them),
  :func:`decode_reply`, :func:`answer_of`, :func:`ledger_of` (:class:`SchemaLedger`);
* authorization: :func:`fetch_metadata`, :func:`challenge_params`, :func:`origin_of`;
* D18 arithmetic: :func:`js_stringify_length`;
* the ini option ``osf_extra_checks`` and the hook ``pytest_osf_extra_checks``
  say where a project's check modules are.

The kit's pytest plugin imports :mod:`~pytest_osfoundry.conformance.suite._options` (the
``--osf-`` options) in every pytest run, which imports this package first: it stays
light, and imports the names above only when one is first used (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_osfoundry import SPEC_REVISION, __version__
from pytest_osfoundry._lazy import lazy_names

if TYPE_CHECKING:
    from pytest_osfoundry._ids import is_uuid
    from pytest_osfoundry._jslength import js_stringify_length
    from pytest_osfoundry.client import ToolReply
    from pytest_osfoundry.conformance.server._challenge import challenge_params
    from pytest_osfoundry.conformance.server._eras import (
        NOT_SERVED,
        Revisions,
        legacy_headers,
        modern_body,
        modern_headers,
        need_legacy,
        need_revision,
        rpc_body,
        served_revisions,
    )
    from pytest_osfoundry.conformance.server._harness import Conformance
    from pytest_osfoundry.conformance.server._lifecycle import (
        FinishedRun,
        finished_run,
        started_run,
    )
    from pytest_osfoundry.conformance.server._metadata import fetch_metadata
    from pytest_osfoundry.conformance.server._sessions import (
        FIXED,
        HUNDRED,
        RENAMED,
        extra_sessions,
        fixed_sessions,
        overflow_sessions,
        unshared_session_id,
    )
    from pytest_osfoundry.conformance.server._target import origin_of
    from pytest_osfoundry.conformance.server._wire import decode_reply
    from pytest_osfoundry.conformance.server._wire_schema import SchemaLedger, answer_of, ledger_of
    from pytest_osfoundry.conformance.suite._expect import CheckFailure, is_utc_timestamp, short
    from pytest_osfoundry.conformance.suite._extra import ExtraRule, Level
    from pytest_osfoundry.conformance.suite._registry import CheckInfo, check
    from pytest_osfoundry.conformance.suite._stats import mann_whitney_z

SUITE_VERSION = __version__
"""The suite's version (the package's)."""

_LAZY: dict[str, str] = {
    "CheckFailure": "pytest_osfoundry.conformance.suite._expect",
    "CheckInfo": "pytest_osfoundry.conformance.suite._registry",
    "Conformance": "pytest_osfoundry.conformance.server._harness",
    "ExtraRule": "pytest_osfoundry.conformance.suite._extra",
    "FIXED": "pytest_osfoundry.conformance.server._sessions",
    "FinishedRun": "pytest_osfoundry.conformance.server._lifecycle",
    "HUNDRED": "pytest_osfoundry.conformance.server._sessions",
    "Level": "pytest_osfoundry.conformance.suite._extra",
    "NOT_SERVED": "pytest_osfoundry.conformance.server._eras",
    "RENAMED": "pytest_osfoundry.conformance.server._sessions",
    "Revisions": "pytest_osfoundry.conformance.server._eras",
    "SchemaLedger": "pytest_osfoundry.conformance.server._wire_schema",
    "ToolReply": "pytest_osfoundry.client",
    "answer_of": "pytest_osfoundry.conformance.server._wire_schema",
    "challenge_params": "pytest_osfoundry.conformance.server._challenge",
    "check": "pytest_osfoundry.conformance.suite._registry",
    "decode_reply": "pytest_osfoundry.conformance.server._wire",
    "extra_sessions": "pytest_osfoundry.conformance.server._sessions",
    "fetch_metadata": "pytest_osfoundry.conformance.server._metadata",
    "finished_run": "pytest_osfoundry.conformance.server._lifecycle",
    "fixed_sessions": "pytest_osfoundry.conformance.server._sessions",
    "is_utc_timestamp": "pytest_osfoundry.conformance.suite._expect",
    "is_uuid": "pytest_osfoundry._ids",
    "js_stringify_length": "pytest_osfoundry._jslength",
    "ledger_of": "pytest_osfoundry.conformance.server._wire_schema",
    "legacy_headers": "pytest_osfoundry.conformance.server._eras",
    "mann_whitney_z": "pytest_osfoundry.conformance.suite._stats",
    "modern_body": "pytest_osfoundry.conformance.server._eras",
    "modern_headers": "pytest_osfoundry.conformance.server._eras",
    "need_legacy": "pytest_osfoundry.conformance.server._eras",
    "need_revision": "pytest_osfoundry.conformance.server._eras",
    "origin_of": "pytest_osfoundry.conformance.server._target",
    "overflow_sessions": "pytest_osfoundry.conformance.server._sessions",
    "rpc_body": "pytest_osfoundry.conformance.server._eras",
    "served_revisions": "pytest_osfoundry.conformance.server._eras",
    "short": "pytest_osfoundry.conformance.suite._expect",
    "started_run": "pytest_osfoundry.conformance.server._lifecycle",
    "unshared_session_id": "pytest_osfoundry.conformance.server._sessions",
}
"""Each public name and the module that defines it."""

__all__ = [
    "FIXED",
    "HUNDRED",
    "NOT_SERVED",
    "RENAMED",
    "SPEC_REVISION",
    "SUITE_VERSION",
    "CheckFailure",
    "CheckInfo",
    "Conformance",
    "ExtraRule",
    "FinishedRun",
    "Level",
    "Revisions",
    "SchemaLedger",
    "ToolReply",
    "answer_of",
    "challenge_params",
    "check",
    "decode_reply",
    "extra_sessions",
    "fetch_metadata",
    "finished_run",
    "fixed_sessions",
    "is_utc_timestamp",
    "is_uuid",
    "js_stringify_length",
    "ledger_of",
    "legacy_headers",
    "mann_whitney_z",
    "modern_body",
    "modern_headers",
    "need_legacy",
    "need_revision",
    "origin_of",
    "overflow_sessions",
    "rpc_body",
    "served_revisions",
    "short",
    "started_run",
    "unshared_session_id",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
