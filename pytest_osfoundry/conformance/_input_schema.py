"""A tool's ``inputSchema`` judged: ``jsonschema-rs`` first, ``jsonschema`` the authority.

The D3 checks ask two things of a target's ``inputSchema``: is it a valid JSON Schema,
and does it accept or refuse an instance SPEC D3 allows or forbids. ``jsonschema``
answers both and writes every message. ``jsonschema-rs`` (a Rust implementation of the
same drafts, already the fast path of :mod:`pytest_osfoundry._mcp_schema`) answers the
same questions about 50x faster, and a run in which nothing fails then never imports
``jsonschema`` in the suite's process (about 30 ms of a run against ``embedded``,
whose server runs in a child process of its own).

One rule keeps ``jsonschema`` the authority: **an answer that would fail a check is
always ``jsonschema``'s.** ``jsonschema-rs``'s answer stands only when it is the one the
check expects (the schema is valid; the allowed instance is accepted; the forbidden
one refused), and only for a schema both read alike. ``jsonschema`` answers everything
wherever they might not:

* ``jsonschema-rs`` is not importable, or cannot compile the schema (a remote
  ``$ref``: it never fetches one);
* the schema names another ``$schema`` than 2020-12;
* the schema holds a regular expression (``pattern``, ``patternProperties``): the two
  read them in different dialects (ECMA-262 against Python's ``re``), and
  ``jsonschema`` checks that each compiles (``"[" is not a 'regex'``), which
  ``jsonschema-rs``'s meta-schema check does not;
* it holds a URI the meta-schema gives a format to (``$id``, ``$ref``,
  ``$dynamicRef``, ``$vocabulary``) or an anchor (whose meta-schema pattern is a
  regular expression too): ``jsonschema`` checks those formats where the packages it
  needs for them are installed.

Instances' formats are not asserted, as ``jsonschema`` without a format checker does
not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["InputSchema", "schema_problem"]

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


_NOT_ALIKE = frozenset(
    {
        "pattern",
        "patternProperties",
        "$id",
        "$ref",
        "$dynamicRef",
        "$vocabulary",
        "$anchor",
        "$dynamicAnchor",
    }
)
"""Keywords whose values the two implementations may read differently (a key of that
name anywhere in the schema sends it to ``jsonschema``: a property so named too, which
only costs the fast path)."""


def _read_alike(schema: Any) -> bool:
    """Whether ``jsonschema-rs`` reads ``schema`` as ``jsonschema`` does: JSON Schema
    2020-12 and none of :data:`_NOT_ALIKE` at any depth."""
    if not _is_2020_12(schema):
        return False
    pending = [schema]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            if not _NOT_ALIKE.isdisjoint(value):
                return False
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return True


def _is_2020_12(schema: Any) -> bool:
    """Whether ``schema`` is read as JSON Schema 2020-12 (no ``$schema``, or that one)."""
    if not isinstance(schema, dict):
        return schema is True or schema is False  # the two boolean schemas
    stated = schema.get("$schema", _DRAFT_2020_12)
    return isinstance(stated, str) and stated.rstrip("#") == _DRAFT_2020_12


@functools.cache
def _rs() -> Any:
    """The ``jsonschema_rs`` module, or ``None`` when it cannot be imported."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs


def schema_problem(schema: Any, *, as_2020_12: bool = False) -> str | None:
    """``None`` when ``schema`` is a valid JSON Schema of the draft its ``$schema`` names
    (2020-12 if none), or of 2020-12 whatever it names with ``as_2020_12``; else
    ``jsonschema``'s message saying why it is not."""
    rs = _rs() if _read_alike(schema) else None
    if rs is not None:
        try:
            if rs.meta.is_valid(schema):
                return None
        except Exception:  # anything it cannot take, jsonschema judges
            pass
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    cls = Draft202012Validator if as_2020_12 else validator_for(schema, Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as err:
        return str(err.message)
    return None


def _fast(schema: Any) -> Callable[[Any], bool] | None:
    """``jsonschema-rs``'s test of instances against ``schema``, or ``None``."""
    rs = _rs() if _read_alike(schema) else None
    if rs is None:
        return None
    try:
        compiled = rs.validator_for(schema, validate_formats=False, offline=True)
    except Exception:  # a schema it cannot compile: jsonschema judges
        return None

    def accepts(instance: Any) -> bool:
        return bool(compiled.is_valid(instance))

    return accepts


class InputSchema:
    """A valid ``inputSchema`` (see :func:`schema_problem`), ready to judge instances."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self._fast = _fast(schema)
        self._authority: Any = None

    def accepts(self, instance: Any, *, expected: bool) -> bool:
        """Whether the schema accepts ``instance``: ``jsonschema-rs``'s verdict when it
        is ``expected``, else ``jsonschema``'s (the one that may fail a check)."""
        if self._fast is not None:
            try:
                if self._fast(instance) is expected:
                    return expected
            except Exception:  # a value it cannot convert: jsonschema judges
                pass
        return bool(self._jsonschema().is_valid(instance))

    def _jsonschema(self) -> Any:
        if self._authority is None:
            from jsonschema import Draft202012Validator
            from jsonschema.validators import validator_for

            self._authority = validator_for(self.schema, default=Draft202012Validator)(self.schema)
        return self._authority
