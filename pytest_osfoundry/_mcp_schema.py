"""MCP's own JSON Schema for each revision the kit speaks, compiled once, and what fails it.

The schemas are the official schema.json files of the MCP specification
repository, bundled in ``pytest_osfoundry/schemas/`` (licence and origin in the
README there). :func:`validator` compiles one definition of one revision on first use
and keeps it (``jsonschema`` and the file are only loaded then: nothing here costs an
import of the package). :func:`first_violation` validates a message against a
definition and names the one error that best explains the failure: where in the
message (a JSON pointer) and which part of the schema (a schema path).

Two validators, one authority. Every request the reference server takes and every
answer the conformance suite reads is validated here, so validation is on the path
users wait for, where ``jsonschema`` is slow on these schemas. :func:`fast_check`
compiles the same definition with ``jsonschema-rs`` (a Rust implementation of the
same drafts, far faster; ``python benchmarks/bench_schema.py`` measures both), and
a message it calls valid is done with. Anything else goes to ``jsonschema``, which
decides and writes the message: a message only ``jsonschema-rs`` refuses is valid,
so the error texts, pointers and schema paths are ``jsonschema``'s whatever the fast
path says. Without ``jsonschema-rs`` importable, or for a message it cannot convert,
``jsonschema`` does it all.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = [
    "REVISIONS",
    "SchemaViolation",
    "definition_names",
    "fast_check",
    "first_violation",
    "validator",
]

REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
"""The MCP revisions whose schema is bundled."""


@dataclass(frozen=True)
class SchemaViolation:
    """The error that best explains why a message does not match a definition."""

    revision: str
    definition: str
    pointer: str
    """Where in the message, as a JSON pointer (``""``: the message itself)."""
    schema_path: str
    """Which part of the schema failed, as a JSON pointer into the revision's schema.json."""
    message: str
    """jsonschema's sentence, cut to 300 characters."""

    def describe(self) -> str:
        """``at /result/serverInfo: 'version' is a required property (MCP 2025-11-25
        schema #/$defs/InitializeResult/...)``."""
        return (
            f"at {self.pointer or '/'}: {self.message} "
            f"(MCP {self.revision} schema #{self.schema_path})"
        )


@functools.cache
def _root(revision: str) -> dict[str, Any]:
    if revision not in REVISIONS:
        raise KeyError(f"no MCP schema for revision {revision!r} (have {', '.join(REVISIONS)})")
    text = resources.files("pytest_osfoundry").joinpath(f"schemas/mcp-{revision}.json")
    data: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return data


def _defs_key(root: dict[str, Any]) -> str:
    return "$defs" if "$defs" in root else "definitions"


def definition_names(revision: str) -> frozenset[str]:
    """The names of the definitions the schema of ``revision`` holds."""
    root = _root(revision)
    return frozenset(root[_defs_key(root)])


def _defined(revision: str, definition: str) -> tuple[dict[str, Any], str]:
    """``revision``'s schema and its definitions' key, ``definition`` being one of them.

    Raises:
        KeyError: no such revision or definition (the message names it).
    """
    root = _root(revision)
    key = _defs_key(root)
    if definition not in root[key]:
        raise KeyError(f"the MCP {revision} schema has no definition {definition!r}")
    return root, key


@functools.cache
def validator(revision: str, definition: str) -> Any:
    """A compiled ``jsonschema`` validator of ``definition`` in ``revision``'s schema.

    Raises:
        KeyError: no such revision or definition (the message names it).
    """
    from jsonschema import validators

    root, key = _defined(revision, definition)
    schema = {"$schema": root["$schema"], key: root[key], "$ref": f"#/{key}/{definition}"}
    # Not check_schema()d here (it costs more than the validation of a whole run):
    # tests/conformance/test_conformance_wire_schema.py checks every bundled
    # schema once.
    return validators.validator_for(schema)(schema)


@functools.cache
def _fast_registry(revision: str) -> Any:
    """``jsonschema-rs``'s registry of ``revision``'s whole schema (``None``: no
    ``jsonschema-rs``): parsed once, shared by every definition's fast check."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs.Registry([(_fast_uri(revision), _root(revision))])


def _fast_uri(revision: str) -> str:
    return f"urn:pytest-osfoundry:mcp-schema:{revision}"


@functools.cache
def fast_check(revision: str, definition: str) -> Callable[[Any], bool] | None:
    """A fast test of ``definition`` in ``revision``'s schema that says ``True`` only for
    a message it has validated (``jsonschema-rs``), or ``None`` without ``jsonschema-rs``.

    Formats are not asserted, as ``jsonschema`` without a format checker does not. A
    message it cannot take makes it say ``False`` (``jsonschema`` then decides).

    Raises:
        KeyError: no such revision or definition (the message names it).
    """
    root, key = _defined(revision, definition)
    registry = _fast_registry(revision)
    if registry is None:
        return None
    import jsonschema_rs

    compiled = jsonschema_rs.validator_for(
        {"$schema": root["$schema"], "$ref": f"{_fast_uri(revision)}#/{key}/{definition}"},
        registry=registry,
        validate_formats=False,
    )

    def check(message: Any) -> bool:
        try:
            return bool(compiled.is_valid(message))
        except (ValueError, TypeError, OverflowError, RecursionError):
            return False  # not a value it can convert: jsonschema decides

    return check


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def first_violation(revision: str, definition: str, message: Any) -> SchemaViolation | None:
    """``None`` when ``message`` matches ``definition``; else the error that best
    explains why (jsonschema's ``best_match``, so an ``anyOf`` names the branch that came
    closest). ``jsonschema`` decides; :func:`fast_check` only lets a valid message skip it."""
    fast = fast_check(revision, definition)
    if fast is not None and fast(message):
        return None
    from jsonschema.exceptions import best_match

    check = validator(revision, definition)
    error = best_match(check.iter_errors(message))
    if error is None:  # valid after all (the fast check refused or could not read it)
        return None
    error = _closest_branch(error)
    schema_path = [p for p in error.absolute_schema_path if p != "$ref"]
    text = error.message if len(error.message) <= 300 else error.message[:297] + "..."
    return SchemaViolation(
        revision,
        definition,
        _pointer(error.absolute_path),
        definition + _pointer(schema_path),
        text,
    )


def _closest_branch(error: Any) -> Any:
    """For an ``anyOf``/``oneOf`` no branch matched: the first error of the branch with
    the fewest errors (a ``TextContent`` lacking only ``type`` names ``type``), while
    that is a single error; else ``error`` itself."""
    while error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[Any, list[Any]] = {}
        for sub in error.context:
            branches.setdefault(sub.schema_path[0] if sub.schema_path else None, []).append(sub)
        fewest = min(branches.values(), key=len)
        if len(fewest) != 1:
            break
        error = fewest[0]
    return error
