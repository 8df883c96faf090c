"""The shared argument checks: what they accept, and messages naming the argument."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Protocol

import pytest

from pytest_osfoundry._checks import (
    ArgumentTypeError,
    check_count,
    check_fraction,
    check_http_error,
    check_implements,
    check_int,
    check_number,
    check_positive_int,
    check_seconds,
    is_number,
)


def test_is_number_refuses_bools_and_strings() -> None:
    assert is_number(1) and is_number(1.5) and is_number(math.inf)
    assert not is_number(True) and not is_number("1") and not is_number(None)


@pytest.mark.parametrize("value", [0, 2.5, 10**6])
def test_seconds_accepts_non_negative_numbers_as_floats(value: float) -> None:
    out = check_seconds(value, "interval")
    assert out == value and type(out) is float


@pytest.mark.parametrize(
    ("value", "kwargs", "error", "message"),
    [
        ("20", {}, ArgumentTypeError, "interval must be a number of seconds, got '20'"),
        (True, {}, ArgumentTypeError, "interval must be a number of seconds, got True"),
        (None, {}, ArgumentTypeError, "interval must be a number of seconds, got None"),
        (-1, {}, ValueError, "interval must be a non-negative number of seconds, got -1"),
        (math.nan, {}, ValueError, "interval must be a non-negative number of seconds, got nan"),
        (math.inf, {}, ValueError, "interval must be a non-negative number of seconds, got inf"),
        (0, {"positive": True}, ValueError, "interval must be a positive number of seconds, got 0"),
        (
            math.inf,
            {"positive": True},
            ValueError,
            "interval must be a positive number of seconds, got inf",
        ),
    ],
)
def test_seconds_messages_name_the_argument(
    value: Any, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        check_seconds(value, "interval", **kwargs)
    assert str(info.value) == message


def test_seconds_may_allow_infinity() -> None:
    assert check_seconds(math.inf, "limit", finite=False) == math.inf
    with pytest.raises(ValueError, match="limit must be a non-negative"):
        check_seconds(math.nan, "limit", finite=False)


def test_a_wrong_kind_is_both_a_type_error_and_a_value_error() -> None:
    with pytest.raises(TypeError):
        check_seconds("1", "delay")
    with pytest.raises(ValueError):
        check_seconds("1", "delay")


@pytest.mark.parametrize(
    ("value", "kwargs", "error", "message"),
    [
        ("x", {}, ArgumentTypeError, "cost must be a number, got 'x'"),
        (math.nan, {}, ValueError, "cost must be a finite number, got nan"),
        (math.inf, {}, ValueError, "cost must be a finite number, got inf"),
        (-0.5, {"low": 0}, ValueError, "cost must be at least 0, got -0.5"),
        (21, {"high": 20}, ValueError, "cost must be at most 20, got 21"),
    ],
)
def test_number_messages(
    value: Any, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        check_number(value, "cost", **kwargs)
    assert str(info.value) == message


def test_number_bounds_are_inclusive_and_infinity_can_be_allowed() -> None:
    assert check_number(0, "x", low=0, high=0) == 0.0
    assert check_number(-math.inf, "x", finite=False) == -math.inf


@pytest.mark.parametrize("value", [0, 0.25, 1])
def test_fraction_accepts_zero_to_one(value: float) -> None:
    assert check_fraction(value, "rate") == value


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (1.01, ValueError),
        (-0.1, ValueError),
        (math.nan, ValueError),
        ("0.5", ArgumentTypeError),
        (False, ArgumentTypeError),
    ],
)
def test_fraction_refusals_name_the_argument(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        check_fraction(value, "rate")
    assert str(info.value) == f"rate must be a number from 0 to 1, got {value!r}"


@pytest.mark.parametrize("value", [1.0, "3", True, None])
def test_ints_refuse_other_kinds(value: Any) -> None:
    for check in (check_int, check_count, check_positive_int):
        with pytest.raises(ArgumentTypeError) as info:
            check(value, "runs")
        assert str(info.value) == f"runs must be an int, got {value!r}"


def test_counts_and_positive_ints() -> None:
    assert check_int(-3, "seed") == -3
    assert check_count(0, "n") == 0
    assert check_positive_int(1, "jobs") == 1
    with pytest.raises(ValueError, match=r"^n must be a non-negative int, got -1$"):
        check_count(-1, "n")
    with pytest.raises(ValueError, match=r"^jobs must be a positive int, got 0$"):
        check_positive_int(0, "jobs")


class _Greeter(Protocol):
    def hello(self) -> str: ...

    def bye(self) -> str: ...


def test_implements_accepts_any_object_with_the_methods() -> None:
    class Duck:
        def hello(self) -> str:
            return "hi"

        def bye(self) -> str:
            return "bye"

    check_implements(Duck(), "greeter", _Greeter)


def test_implements_names_what_is_missing() -> None:
    class Half:
        def hello(self) -> str:
            return "hi"

        bye = "not callable"

    with pytest.raises(TypeError) as info:
        check_implements(Half(), "greeter", _Greeter)
    message = str(info.value)
    assert message.startswith("greeter must provide the _Greeter methods (missing bye()), got ")


def test_bounded_ints_name_the_range() -> None:
    assert check_int(100, "sessions", low=0, high=100) == 100
    with pytest.raises(ValueError, match=r"^sessions must be an int from 0 to 100, got 101$"):
        check_int(101, "sessions", low=0, high=100)
    with pytest.raises(ValueError, match=r"^n must be an int of at least 2, got 1$"):
        check_int(1, "n", low=2)
    with pytest.raises(ValueError, match=r"^n must be an int of at most 2, got 3$"):
        check_int(3, "n", high=2)
    with pytest.raises(ArgumentTypeError, match=r"^sessions must be an int, got 2.0$"):
        check_int(2.0, "sessions", low=0, high=100)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (200, ValueError, "status must be an HTTP error status 400-599, got 200"),
        (600, ValueError, "status must be an HTTP error status 400-599, got 600"),
        ("503", ArgumentTypeError, "status must be an int, got '503'"),
        (True, ArgumentTypeError, "status must be an int, got True"),
    ],
)
def test_http_error_status(value: Any, error: type[Exception], message: str) -> None:
    assert check_http_error(400, "status") == 400 and check_http_error(599, "status") == 599
    with pytest.raises(error) as info:
        check_http_error(value, "status")
    assert str(info.value) == message


#: Modules that may still test ``isinstance(x, bool)`` themselves, and why: none of
#: them checks a user's argument (those go through ``_checks``).
_BOOL_TESTS_WITH_A_REASON = {
    "_checks.py": "the shared helpers themselves",
    "world.py": "outbox=True/False switches the default outbox; any other value is an Outbox",
    "_jslength.py": "measures a JSON value the way JavaScript would: true is not a number",
    "sim/_report.py": "formats a report cell: a bool prints yes/no, not 1/0",
    "client/_jsonrpc.py": "judges a server's JSON-RPC error object and ids (wire data)",
    "conformance/suite/_options.py": (
        "a flag option may come as a bool (argparse) or as text (OSF_ env)"
    ),
}


def test_argument_checks_are_not_hand_rolled() -> None:
    """``isinstance(x, bool) or not isinstance(...)`` chains live only in ``_checks``."""
    package = Path(__file__).resolve().parent.parent / "pytest_osfoundry"
    found = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if re.search(r"isinstance\([^()]*, bool\)", path.read_text(encoding="utf-8"))
    }
    assert found <= set(_BOOL_TESTS_WITH_A_REASON), sorted(found - set(_BOOL_TESTS_WITH_A_REASON))


@pytest.mark.parametrize("check", [check_number, check_seconds])
def test_an_integer_past_a_float_is_refused_naming_the_argument(check: Any) -> None:
    """``osf(latency=10**400)``: a ValueError naming the argument, not an OverflowError."""
    message = r"^latency must be a finite number, got an integer of 1329 bits$"
    with pytest.raises(ValueError, match=message):
        check(10**400, "latency")
