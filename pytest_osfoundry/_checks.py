"""Argument checks shared by every public constructor and function of the package.

Each helper returns the value (as a ``float`` or ``int``) when it is acceptable and
otherwise raises with a message that names the argument as the user typed it::

    seconds = check_seconds(interval, "interval", positive=True)

* :class:`ArgumentTypeError` when the value is not of the right kind (``True`` is
  never a number here, although Python counts it as one; a string never counts
  either). It is both a ``TypeError`` and a ``ValueError``: the kit's constructors
  used to raise one or the other for a wrong kind, and code catching either keeps
  working;
* ``ValueError`` when it is of the right kind but out of range (negative, NaN,
  infinite where a finite value is needed, more than 1 for a fraction, ...).
"""

from __future__ import annotations

import math
from typing import TypeGuard

__all__ = [
    "ArgumentTypeError",
    "check_count",
    "check_flag",
    "check_fraction",
    "check_http_error",
    "check_implements",
    "check_int",
    "check_number",
    "check_positive_int",
    "check_seconds",
    "is_number",
]


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong kind (a string for a number, ``True`` for a count)."""


def is_number(value: object) -> TypeGuard[float]:
    """True for an ``int`` or ``float`` that is not a ``bool``."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_float(value: float, name: str) -> float:
    """``value`` as a float; an integer too large for one is refused (ValueError), not an
    ``OverflowError`` from deep inside."""
    try:
        return float(value)
    except OverflowError:
        bits = int(value).bit_length()
        raise ValueError(
            f"{name} must be a finite number, got an integer of {bits} bits"
        ) from None


def check_flag(value: object, name: str) -> bool:
    """``value`` if it is ``True`` or ``False`` (not ``1``, ``"yes"`` or ``None``)."""
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be True or False, got {value!r}")
    return value


def check_number(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    finite: bool = True,
) -> float:
    """``value`` as a float: a number, not NaN, within ``[low, high]``, finite by default."""
    if not is_number(value):
        raise ArgumentTypeError(f"{name} must be a number, got {value!r}")
    number = _as_float(value, name)
    if math.isnan(number) or (finite and math.isinf(number)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if low is not None and number < low:
        raise ValueError(f"{name} must be at least {low:g}, got {value!r}")
    if high is not None and number > high:
        raise ValueError(f"{name} must be at most {high:g}, got {value!r}")
    return number


def check_seconds(
    value: object, name: str, *, positive: bool = False, finite: bool = True
) -> float:
    """A duration: a non-negative number of seconds (more than 0 with ``positive=True``).

    ``finite=False`` also accepts ``inf`` (for "no bound").
    """
    if not is_number(value):
        raise ArgumentTypeError(f"{name} must be a number of seconds, got {value!r}")
    seconds = _as_float(value, name)
    if positive:
        if not seconds > 0 or (finite and math.isinf(seconds)):
            raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    elif not seconds >= 0 or (finite and math.isinf(seconds)):
        raise ValueError(f"{name} must be a non-negative number of seconds, got {value!r}")
    return seconds


def check_fraction(value: object, name: str) -> float:
    """A probability or share: a number from 0 to 1 inclusive."""
    if not is_number(value):
        raise ArgumentTypeError(f"{name} must be a number from 0 to 1, got {value!r}")
    fraction = float(value)
    if not 0 <= fraction <= 1:
        raise ValueError(f"{name} must be a number from 0 to 1, got {value!r}")
    return fraction


def check_int(value: object, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """A whole number (a seed, say): an ``int`` that is not a ``bool``.

    With ``low`` and ``high`` it must also lie in ``[low, high]`` (a capped count, an
    HTTP status); the message then gives the range.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{name} must be an int, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            wanted = f"from {low} to {high}"
        elif low is not None:
            wanted = f"of at least {low}"
        else:
            wanted = f"of at most {high}"
        raise ValueError(f"{name} must be an int {wanted}, got {value!r}")
    return value


def check_count(value: object, name: str) -> int:
    """A count that may be zero: an ``int`` of at least 0."""
    count = check_int(value, name)
    if count < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return count


def check_positive_int(value: object, name: str) -> int:
    """A count of at least one: an ``int`` of at least 1."""
    count = check_int(value, name)
    if count < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return count


def check_http_error(value: object, name: str) -> int:
    """An HTTP error status to inject: an ``int`` from 400 to 599."""
    status = check_int(value, name)
    if not 400 <= status <= 599:
        raise ValueError(f"{name} must be an HTTP error status 400-599, got {value!r}")
    return status


def check_implements(value: object, name: str, protocol: type) -> None:
    """Raise ``TypeError`` unless ``value`` has every method ``protocol`` declares.

    Any object with those methods is accepted (the protocols are structural): a
    test double, or another implementation, works as well as the kit's own class.
    """
    missing = [
        method
        for method, member in vars(protocol).items()
        if callable(member)
        and not method.startswith("_")
        and not callable(getattr(value, method, None))
    ]
    if missing:
        wanted = ", ".join(f"{method}()" for method in missing)
        raise TypeError(
            f"{name} must provide the {protocol.__name__} methods (missing {wanted}), got {value!r}"
        )
