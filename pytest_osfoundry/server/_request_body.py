"""Request bodies as strict JSON: shared by the MCP and relay doors.

:func:`parse_body` accepts exactly RFC 8259 JSON (no ``NaN``/``Infinity``, which
Python's :mod:`json` would otherwise let in and later echo back as invalid JSON) and
at most :data:`MAX_DEPTH` levels of nesting, so that nothing a caller sends can make
the server recurse too deep (a ``RecursionError`` would be a 500). Parsing goes
through :mod:`pytest_osfoundry._wirejson` (orjson where it gives the standard
library's answer), which also writes every answer.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_osfoundry import _wirejson as jsonwire

__all__ = ["MAX_DEPTH", "BadJson", "parse_body"]

#: Deepest nesting of arrays and objects a request body may have (serde_json's default).
MAX_DEPTH = 128


class BadJson(ValueError):
    """The body is not strict JSON, or is nested too deep."""


def _no_constant(name: str) -> Any:
    raise BadJson(f"{name} is not JSON")


_decode = json.JSONDecoder(parse_constant=_no_constant).decode


def parse_body(body: bytes) -> Any:
    """Parse a request body; raise :class:`BadJson` with a short reason when it is not JSON."""
    value = jsonwire.loads(body, _strict)
    # Only a body with many brackets can be deep: more than 2 * MAX_DEPTH bytes (each
    # bracket opened is closed), then more than MAX_DEPTH openings; only then walk.
    if (
        len(body) > 2 * MAX_DEPTH
        and body.count(b"[") + body.count(b"{") > MAX_DEPTH
        and _depth(value) > MAX_DEPTH
    ):
        raise BadJson(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _strict(body: bytes | str) -> Any:
    """The standard library's strict parse (the reference for :func:`parse_body`)."""
    assert isinstance(body, bytes)
    try:
        # What json.loads does with bytes: UTF-8 (BOM tolerated), UTF-16 or UTF-32.
        text = body.decode(json.detect_encoding(body), "surrogatepass")
        value = _decode(text)
    except RecursionError:
        raise BadJson(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except BadJson:
        raise
    except ValueError:  # UnicodeDecodeError and JSONDecodeError included
        raise BadJson("the body is not JSON") from None
    return value


def _depth(value: Any) -> int:
    """The nesting depth of a parsed JSON value (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        level += 1
        if level > deepest:
            deepest = level
            if deepest > MAX_DEPTH:
                return deepest
        stack.extend((child, level) for child in children)
    return deepest
