"""The two bounds of SPEC D18, shared by the desktop relay and the server (R6, R11).

* :data:`RESULT_LIMIT` — a completion whose ``JSON.stringify`` is longer than this
  many characters (UTF-16 code units) carries ``result_truncated: true`` instead of
  its result; the server refuses a longer body with 413.
* :data:`ERROR_LIMIT` — errors are cut to this many UTF-16 code units
  (:func:`cut_error`), by the relay before posting and by the server before storing.
"""

from __future__ import annotations

from pytest_osfoundry._jslength import js_length

__all__ = ["ERROR_LIMIT", "RESULT_LIMIT", "cut_error"]

#: The most characters (``JSON.stringify(completion).length``) a completion may
#: take and still carry its result (D18, R11).
RESULT_LIMIT = 100_000
#: The most characters (UTF-16 code units) of an error (D18, R6).
ERROR_LIMIT = 2_000


def cut_error(error: str, limit: int = ERROR_LIMIT) -> str:
    """``error`` cut to at most ``limit`` UTF-16 code units, never splitting a pair.

    Returns ``error`` itself when it already fits. A character outside the BMP that
    would straddle the cut is dropped whole, so the result may be one unit shorter
    than ``limit``. (A Python string holding a high and a low surrogate as two code
    points is treated the same way: the pair is never split.)
    """
    if not isinstance(error, str):
        raise TypeError(f"error must be a str, got {type(error).__name__}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be a non-negative int, got {limit!r}")
    if len(error) <= limit and (error.isascii() or js_length(error) <= limit):
        return error
    # Each character is at least one code unit, so the cut lies within error[:limit].
    prefix = error[:limit]
    if js_length(prefix) <= limit:
        cut = prefix
    else:
        units = 0
        end = 0
        for ch in prefix:
            width = 2 if ch > "\uffff" else 1
            if units + width > limit:
                break
            units += width
            end += 1
        cut = prefix[:end]
    if (
        cut
        and "\ud800" <= cut[-1] <= "\udbff"
        and len(error) > len(cut)
        and "\udc00" <= error[len(cut)] <= "\udfff"
    ):
        cut = cut[:-1]
    return cut
