"""JavaScript's ``JSON.stringify`` for JSON-compatible Python values, and its length.

The desktop relay bounds what it posts by ``JSON.stringify(completion).length``
(SPEC D18): a count of UTF-16 code units of JavaScript's output, not of bytes and
not of Python characters. This module reproduces that output exactly so the bound
can be checked from Python.

What :func:`js_stringify` promises, for values built from ``dict`` (``str`` keys),
``list``/``tuple``, ``str``, ``int``, ``float``, ``bool`` and ``None``:

* Compact separators (``,`` and ``:``), no whitespace.
* Strings: ``"`` → ``\\"``, ``\\`` → ``\\\\``, and ``\\b \\f \\n \\r \\t``; every other
  C0 control (U+0000 to U+001F) as ``\\u00xx`` in lower-case hex; a *lone* surrogate as
  ``\\udxxx`` (ES2019 well-formed ``JSON.stringify``). Everything else is left as is:
  non-ASCII, ``/``, U+007F, U+2028 and U+2029 are not escaped. A Python string that
  holds a high surrogate followed by a low surrogate (two code points) is a valid
  pair in JavaScript, so both are left unescaped, as JavaScript leaves the pair.
* Numbers as ECMAScript ``Number::toString`` prints them: the shortest digits that
  round-trip, integers without ``.0`` (``1.0`` → ``1``, ``-0.0`` → ``0``), exponent
  form when the decimal exponent is >= 21 or <= -7 (``1e21`` → ``1e+21``,
  ``1.5e-7`` → ``1.5e-7``, ``1e-6`` → ``0.000001``); NaN and ±Infinity → ``null``.
  A Python ``int`` is first converted to a double as JavaScript would hold it
  (``2**53 + 1`` prints as ``9007199254740992``; an int too large for a double is
  Infinity, so ``null``).
* Objects keep JavaScript's property order: keys that are array indices (canonical
  decimal integers 0 .. 2**32 - 2, e.g. ``"0"``, ``"17"`` but not ``"017"``) come
  first in ascending numeric order, then the other keys in insertion order — the
  order ``JSON.stringify(JSON.parse(text))`` would print.
* Anything else (a non-``str`` key, a set, bytes, a custom object, a container that
  contains itself) raises :class:`TypeError` naming the path to the bad value, e.g.
  ``result.items[3]``.

``bool`` and ``int``/``float``/``str``/``dict``/``list`` subclasses are accepted and
treated as their base type (``True`` → ``true``; an ``IntEnum`` member prints as its
number).
"""

from __future__ import annotations

import math
import re
from typing import Any

from pytest_osfoundry._checks import is_number

__all__ = ["js_length", "js_number", "js_stringify", "js_stringify_length"]

# Characters JSON.stringify escapes: C0 controls, '"', '\\', and lone surrogates.
_NEEDS_ESCAPE = re.compile(
    '[\\x00-\\x1f"\\\\]|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]'
)
_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_MAX_SAFE = 2**53
_MAX_ARRAY_INDEX = 2**32 - 2
_INDEX_KEY = re.compile(r"0|[1-9][0-9]{0,9}")
_DIGITS = frozenset("0123456789")


def _escape_one(match: re.Match[str]) -> str:
    ch = match.group()
    short = _SHORT_ESCAPES.get(ch)
    if short is not None:
        return short
    return f"\\u{ord(ch):04x}"


def _plain(s: str) -> bool:
    """Printable ASCII without quote or backslash: JSON.stringify escapes nothing in it.

    A cheap test (in C) tried before the escape regex, which it agrees with.
    """
    return s.isascii() and s.isprintable() and '"' not in s and "\\" not in s


def _quote(s: str) -> str:
    if _plain(s) or _NEEDS_ESCAPE.search(s) is None:
        return f'"{s}"'
    return '"' + _NEEDS_ESCAPE.sub(_escape_one, s) + '"'


def js_number(value: float | int) -> str:
    """The text JavaScript's ``JSON.stringify`` gives for a number (``null`` if not finite).

    ``value`` is a Python ``int`` or ``float`` (not ``bool``); an ``int`` is rounded
    to the nearest double first, as JavaScript would store it.
    """
    if not is_number(value):
        raise TypeError(f"js_number needs an int or a float, got {type(value).__name__}")
    if isinstance(value, int):
        as_int = int(value)
        if -_MAX_SAFE <= as_int <= _MAX_SAFE:
            return str(as_int)
        try:
            number = float(as_int)
        except OverflowError:
            return "null"
    else:
        number = float(value)
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    if number.is_integer() and abs(number) <= _MAX_SAFE:
        return str(int(number))  # exact, and the shortest digits JS would pick
    return _format_double(number)


def _format_double(number: float) -> str:
    """ECMAScript Number::toString(number) for a finite, non-zero double."""
    sign = "-" if number < 0 else ""
    text = repr(abs(number))  # shortest round-trip digits (the same digits JS picks)
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    all_digits = whole + frac
    digits = all_digits.lstrip("0")
    # ECMAScript's n: value = 0.d1d2...dk * 10^n, i.e. digits * 10^(n - k). The point
    # sits after ``whole``; moved by the exponent and by each leading zero stripped.
    n = len(whole) + exponent - (len(all_digits) - len(digits))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exp = f"e{'+' if e >= 0 else '-'}{abs(e)}"
        body = digits + exp if k == 1 else digits[0] + "." + digits[1:] + exp
    return sign + body


def _key_order(keys: list[str]) -> list[str]:
    """JavaScript's own-property order: array indices ascending, then insertion order."""
    indices: list[tuple[int, str]] = []
    others: list[str] = []
    for key in keys:
        if (
            key[:1] in _DIGITS  # cheap test first: an index starts with a digit
            and _INDEX_KEY.fullmatch(key) is not None
            and int(key) <= _MAX_ARRAY_INDEX
        ):
            indices.append((int(key), key))
        else:
            others.append(key)
    if not indices:
        return others
    indices.sort()
    return [key for _, key in indices] + others


def _child_path(path: str, key: str) -> str:
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{_quote(key)}]"


def _walk(value: Any, path: str, out: list[str], stack: set[int]) -> None:
    # Order matters: bool before int, str before the containers.
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_quote(value))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out.append(js_number(value))
    elif isinstance(value, dict):
        ident = id(value)
        if ident in stack:
            raise TypeError(f"{path} contains itself: JSON.stringify cannot convert a cycle")
        keys = list(value)
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(
                    f"{path} has a key {key!r} of type {type(key).__name__}; "
                    "JSON object keys must be str"
                )
        stack.add(ident)
        out.append("{")
        first = True
        for key in _key_order(keys):
            if not first:
                out.append(",")
            first = False
            out.append(_quote(key))
            out.append(":")
            child = value[key]
            if type(child) is str:  # the common leaf: no path needed
                out.append(_quote(child))
            else:
                _walk(child, _child_path(path, key), out, stack)
        out.append("}")
        stack.discard(ident)
    elif isinstance(value, (list, tuple)):
        ident = id(value)
        if ident in stack:
            raise TypeError(f"{path} contains itself: JSON.stringify cannot convert a cycle")
        stack.add(ident)
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _walk(item, f"{path}[{index}]", out, stack)
        out.append("]")
        stack.discard(ident)
    else:
        raise TypeError(
            f"{path} is a {type(value).__name__} ({_short_repr(value)}), which is not "
            "JSON-compatible; use dict (str keys), list, tuple, str, int, float, bool or None"
        )


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str naming the value, got {name!r}")
    return name


def js_stringify(value: Any, *, name: str = "value") -> str:
    """Return exactly what JavaScript's ``JSON.stringify(value)`` returns.

    See the module docstring for the rules. ``name`` is how error messages refer to
    ``value`` itself (``result`` gives paths like ``result.items[3]``).

    Raises:
        TypeError: ``value`` (at the path named in the message) is not JSON-compatible.
    """
    _check_name(name)
    # Fast paths for the common scalar cases.
    if isinstance(value, str):
        return _quote(value)
    out: list[str] = []
    _walk(value, name, out, set())
    return "".join(out)


def js_length(s: str) -> int:
    """The JavaScript ``length`` of ``s``: its count of UTF-16 code units.

    A character outside the Basic Multilingual Plane (e.g. an emoji) counts 2; every
    other code point, a lone surrogate included, counts 1. Linear time, done in C.
    """
    if not isinstance(s, str):
        raise TypeError(f"js_length needs a str, got {type(s).__name__}")
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _str_length(s: str) -> int:
    """``js_length(js_stringify(s))`` without building the quoted copy when possible."""
    if _plain(s):
        return len(s) + 2
    if _NEEDS_ESCAPE.search(s) is None:
        return js_length(s) + 2
    return js_length(_quote(s))


def js_stringify_length(value: Any, *, name: str = "value") -> int:
    """``js_length(js_stringify(value))``: the ``.length`` of JavaScript's output.

    Measured without building the text: lengths are summed (key order does not
    change a length), strings measured without copying when nothing in them needs
    escaping. Anything unusual (another type, a cycle, very deep nesting) is
    measured on :func:`js_stringify`'s text instead, which also raises its
    :class:`TypeError` naming the path.
    """
    _check_name(name)
    if isinstance(value, str):
        return _str_length(value)
    try:
        return _length(value, 0)
    except _Unusual:
        return js_length(js_stringify(value, name=name))


class _Unusual(Exception):
    """:func:`_length` met something it leaves to :func:`js_stringify`."""


def _length(value: Any, depth: int) -> int:
    """JSON.stringify's length of plain JSON data; raises :class:`_Unusual` otherwise."""
    kind = type(value)
    if kind is str:
        return _str_length(value)
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if kind is int:
        return len(str(value)) if -_MAX_SAFE <= value <= _MAX_SAFE else len(js_number(value))
    if kind is float:
        return len(js_number(value))
    if depth > 64:  # deep, or a cycle: the careful path decides
        raise _Unusual
    if kind is dict:
        count = len(value)
        total = 2 + count + max(count - 1, 0)  # braces, a colon per key, commas between
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual
            total += _str_length(key) + _length(item, depth + 1)
        return total
    if kind is list or kind is tuple:
        total = 2 + max(len(value) - 1, 0)
        for item in value:
            total += _length(item, depth + 1)
        return total
    raise _Unusual
