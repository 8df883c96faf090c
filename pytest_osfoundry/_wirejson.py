"""JSON on the wire, fast and exact: orjson where it gives the stdlib's answer, else the stdlib.

Every JSON body the kit's hot paths write or read — the reference server's answers
and the clients' requests and replies — goes through :func:`dumps` and :func:`loads`.
orjson does the work (several times faster than :mod:`json`); the standard library
takes over wherever orjson would answer differently, so the kit reads exactly what
:mod:`json` would read, and writes the same JSON values it would write, but for the
two cases below where :mod:`json` writes text that is not valid UTF-8 JSON:

* :func:`dumps` writes compact UTF-8 JSON (no spaces, non-ASCII as is). What orjson
  refuses goes to the standard library: integers beyond 64 bits (written exactly),
  and strings holding a lone surrogate, which cannot be UTF-8 — that text is written
  with non-ASCII escaped (``"\\ud800"``, as JavaScript's ``JSON.stringify`` writes a
  lone surrogate). Floats are written shortest-round-trip, in orjson's notation
  (``0.00001`` where :mod:`json` wrote ``1e-05``: the same number). A non-finite float
  (only a number such as ``1e400`` in a request can make one) is written ``null``, as
  ``JSON.stringify`` writes it; :mod:`json` would write ``Infinity``, which is not JSON.
* :func:`loads` returns orjson's parse when orjson accepts the text and the text
  holds no run of 19 or more digits; otherwise it returns what the caller's
  ``fallback`` (the standard-library parser it always used, strict or lenient) says
  — its value or its error. orjson reads an integer literal beyond 64 bits as a
  float (:mod:`json` keeps it exact), and such a literal is at least 19 digits long
  (2**63 has 19). A long run of digits elsewhere (in a string, or a long fraction)
  only sends the text to the standard library, which reads it the same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

__all__ = ["dumps", "loads"]

T = TypeVar("T")

#: orjson options: a dataclass or datetime is refused (handed to the fallback, which
#: refuses it too), as :mod:`json` would.
_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_orjson_dumps = orjson.dumps
_orjson_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError
#: Every digit byte becomes "0", every other byte " ": a run of 19 zeros in the
#: result is a run of 19 digits in the text (see the module doc). ``bytes.translate``
#: and ``in`` are C loops: on the sim's bodies this costs less than the parse, where
#: a regular expression cost more (benchmarks/RESULTS.md).
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_DIGIT_RUN = b"0" * 19
_utf8 = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_ascii = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


def dumps(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON bytes (see the module doc for the exact rules).

    Raises ``TypeError`` for a value :mod:`json` cannot encode either.
    """
    try:
        return _orjson_dumps(value, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _stdlib_dumps(value)


def _stdlib_dumps(value: Any) -> bytes:
    clean = _finite(value)
    try:
        return _utf8(clean).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escape it, and all non-ASCII
        return _ascii(clean).encode("ascii")


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None`` (a copy only if needed)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def loads(data: bytes | str, fallback: Callable[[bytes | str], T]) -> Any | T:
    """Parse ``data``; where orjson might differ from ``fallback``, return ``fallback(data)``.

    ``fallback`` is the caller's standard-library parser (strict for request bodies,
    lenient for a client reading a target's replies); its errors propagate unchanged.
    """
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    if _LONG_DIGIT_RUN in raw.translate(_DIGITS_AS_ZEROS):
        return fallback(data)
    try:
        return _orjson_loads(data)
    except _JSONDecodeError:  # includes 1e400, which json reads as inf
        return fallback(data)
