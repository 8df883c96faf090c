"""Poll strategies: the documented delays, their names, and parse_strategy."""

from __future__ import annotations

import math
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_osfoundry.agent._strategies import (
    SEED_STRATEGIES,
    backoff,
    every,
    parse_strategy,
    wait_then_every,
)


def delays(strategy: Any, n: int) -> list[float]:
    return [strategy(k, 0.0) for k in range(n)]


@pytest.mark.parametrize("seconds", [2, 5, 15, 30, 0.5])
def test_every_waits_the_same_each_time(seconds: float) -> None:
    assert delays(every(seconds), 6) == [seconds] * 6
    assert every(seconds)(3, 1234.0) == seconds


def test_backoff_doubles_up_to_its_cap() -> None:
    assert delays(backoff(2, cap=30), 8) == [2, 4, 8, 16, 30, 30, 30, 30]
    assert delays(backoff(1, cap=10, factor=3), 4) == [1, 3, 9, 10]
    assert delays(backoff(5, cap=5, factor=1), 3) == [5, 5, 5]
    assert backoff(2, cap=30)(10_000, 0.0) == 30  # no overflow for huge attempts


def test_wait_then_every_waits_first_then_polls_evenly() -> None:
    assert delays(wait_then_every(20, 10), 5) == [20, 10, 10, 10, 10]


def test_the_seed_table_rows_in_order() -> None:
    assert [s.name for s in SEED_STRATEGIES] == [
        "every 2 s",
        "every 5 s",
        "every 15 s",
        "every 30 s",
        "backoff 2, 4, 8 … 30 s",
        "wait 20 s, then every 10 s",
    ]


@pytest.mark.parametrize("strategy", SEED_STRATEGIES, ids=lambda s: s.name)
def test_parse_strategy_reads_every_table_name(strategy: Any) -> None:
    parsed = parse_strategy(strategy.name)
    assert parsed == strategy
    assert delays(parsed, 7) == delays(strategy, 7)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  Every 5 s  ", every(5)),
        ("every 2.5s", every(2.5)),
        ("every 7", every(7)),
        ("wait 20 s then every 10 s", wait_then_every(20, 10)),
        ("WAIT 30s, then every 15s", wait_then_every(30, 15)),
        ("backoff 2, 4, 8 ... 30 s", backoff(2, cap=30)),
        ("backoff 1, 3, 9 … 60 s", backoff(1, cap=60, factor=3)),
    ],
)
def test_parse_strategy_spelling_variants(text: str, expected: Any) -> None:
    assert parse_strategy(text) == expected


def test_parse_strategy_imports_module_colon_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_poll_strategies_for_test.py").write_text(
        textwrap.dedent(
            """
            def fibonacci(attempt, elapsed):
                a, b = 1, 1
                for _ in range(attempt):
                    a, b = b, a + b
                return float(a)
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    strategy = parse_strategy("my_poll_strategies_for_test:fibonacci")
    assert delays(strategy, 6) == [1, 1, 2, 3, 5, 8]
    assert parse_strategy("math:hypot") is math.hypot
    monkeypatch.delitem(sys.modules, "my_poll_strategies_for_test", raising=False)


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "   ",
        "sometimes",
        "every",
        "every x s",
        "every 1.2.3 s",
        "every . s",
        "every -5 s",
        "wait 20 s",
        "backoff",
        "backoff 30 s",
        "backoff 2, 4 … s",
        "math:no_such_function",
        "math:pi",
        "no_such_module_for_osf_tests:f",
        ":f",
    ],
)
def test_parse_strategy_garbage_is_a_clear_value_error(garbage: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_strategy(garbage)
    message = str(info.value)
    assert repr(garbage.strip()) in message or "non-empty" in message, message


@pytest.mark.parametrize("value", [None, 5, ["every 5 s"]])
def test_parse_strategy_needs_a_string(value: Any) -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        parse_strategy(value)


@pytest.mark.parametrize("seconds", [0, -1, math.nan, math.inf, "5", None, True])
def test_every_refuses_bad_seconds(seconds: Any) -> None:
    with pytest.raises(ValueError, match=r"every\(seconds\)"):
        every(seconds)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"first": 0}, "first"),
        ({"cap": -1}, "cap"),
        ({"first": 10, "cap": 5}, "below"),
        ({"factor": 0.5}, "factor"),
        ({"factor": math.nan}, "factor"),
        ({"factor": "2"}, "factor"),
        ({"first": math.inf}, "first"),
    ],
)
def test_backoff_refuses_bad_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        backoff(**kwargs)


@pytest.mark.parametrize(("first", "then"), [(0, 10), (20, 0), (-1, 10), (20, "10")])
def test_wait_then_every_refuses_bad_arguments(first: Any, then: Any) -> None:
    with pytest.raises(ValueError, match="wait_then_every"):
        wait_then_every(first, then)
