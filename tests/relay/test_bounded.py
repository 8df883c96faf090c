"""D18: the bounded completion the relay posts."""

from __future__ import annotations

import math
from itertools import cycle, islice
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_osfoundry._jslength import js_length, js_stringify, js_stringify_length
from pytest_osfoundry.relay._bounded import (
    ERROR_LIMIT,
    RESULT_LIMIT,
    SEED_ENVELOPE,
    Envelope,
    bounded_completion,
    cut_error,
    max_result_text,
)

BOUNDARY = 99_899


def cycled(alphabet: str, n: int) -> str:
    return "".join(islice(cycle(alphabet), n))


def seed_completion(result: Any) -> dict[str, Any]:
    return bounded_completion(
        execution_id="fleet-run-0001",
        status="completed",
        result=result,
        total_tokens=0,
        reported_cost=0,
    )


def test_limits() -> None:
    assert RESULT_LIMIT == 100_000
    assert ERROR_LIMIT == 2_000


def test_seed_envelope_takes_101_characters() -> None:
    expected = (
        '{"execution_id":"fleet-run-0001","status":"completed","result":"",'
        '"total_tokens":0,"reported_cost":0}'
    )
    assert len(expected) == 101
    assert js_stringify(seed_completion("")) == expected
    assert SEED_ENVELOPE.overhead() == 101
    assert SEED_ENVELOPE.completion("") == seed_completion("")


@pytest.mark.parametrize(
    ("alphabet", "utf8_bytes"),
    [("a", 99_899), ("abcdefghijklmnopqrstuvwxyz", 99_899), ("日本語", 299_697)],
)
def test_boundary_text_fits_whole_and_one_more_is_truncated(alphabet: str, utf8_bytes: int) -> None:
    text = cycled(alphabet, BOUNDARY)
    assert len(text.encode("utf-8")) == utf8_bytes
    fits = seed_completion(text)
    assert fits["result"] is text
    assert "result_truncated" not in fits
    assert js_stringify_length(fits) == RESULT_LIMIT

    over = seed_completion(cycled(alphabet, BOUNDARY + 1))
    assert over == {
        "execution_id": "fleet-run-0001",
        "status": "completed",
        "result_truncated": True,
    }
    assert js_stringify(over).endswith('"result_truncated":true}')


def test_emoji_count_two_so_half_as_many_fit() -> None:
    most = max_result_text("😀")
    assert most == 49_949
    assert "result" in seed_completion("😀" * most)
    assert js_stringify_length(seed_completion("😀" * most)) == 99_999
    assert seed_completion("😀" * (most + 1))["result_truncated"] is True
    assert "result" not in seed_completion("😀" * (most + 1))


@pytest.mark.parametrize(
    ("char", "expected"),
    [("a", 99_899), ("日", 99_899), ("😀", 49_949), ('"', 49_949), ("\x01", 16_649)],
)
def test_max_result_text(char: str, expected: int) -> None:
    assert max_result_text(char) == expected
    assert "result" in SEED_ENVELOPE.completion(char * expected)
    assert "result" not in SEED_ENVELOPE.completion(char * (expected + 1))


def test_max_result_text_depends_on_the_envelope() -> None:
    with_error = Envelope(execution_id="fleet-run-0001", error="x")
    # ,"error":"x" adds 12 characters to the envelope.
    assert with_error.overhead() == 113
    assert max_result_text("a", with_error) == BOUNDARY - 12
    no_money = Envelope(execution_id="e", status="failed", total_tokens=None, reported_cost=None)
    assert no_money.overhead() == len('{"execution_id":"e","status":"failed","result":""}')
    huge = Envelope(execution_id="x" * RESULT_LIMIT)
    assert max_result_text("a", huge) == 0


@pytest.mark.parametrize("char", ["", "ab", 5, None])
def test_max_result_text_refuses_anything_but_one_character(char: Any) -> None:
    with pytest.raises(ValueError, match="alphabet_char must be exactly one character"):
        max_result_text(char)


def test_max_result_text_refuses_a_bad_envelope() -> None:
    with pytest.raises(TypeError, match="envelope must be an Envelope"):
        max_result_text("a", {"execution_id": "x"})  # type: ignore[arg-type]


def test_key_order_and_absent_fields() -> None:
    full = bounded_completion(
        execution_id="c1",
        status="failed",
        result={"k": 1},
        total_tokens=5,
        reported_cost=0.25,
        error="boom",
    )
    assert list(full) == [
        "execution_id",
        "status",
        "result",
        "total_tokens",
        "reported_cost",
        "error",
    ]
    bare = bounded_completion(execution_id="c1", status="cancelled")
    assert bare == {"execution_id": "c1", "status": "cancelled", "result": None}
    assert js_stringify(bare) == '{"execution_id":"c1","status":"cancelled","result":null}'


@pytest.mark.parametrize(("size", "kept"), [(1_999, 1_999), (2_000, 2_000), (2_001, 2_000)])
def test_errors_are_cut_to_2000_characters(size: int, kept: int) -> None:
    error = cycled("0123456789", size)
    done = bounded_completion(execution_id="c1", status="failed", error=error)
    assert done["error"] == error[:kept]
    assert js_length(done["error"]) == kept


def test_an_emoji_straddling_the_cut_is_dropped_whole() -> None:
    error = "a" * 1_999 + "😀" + "tail"
    assert cut_error(error) == "a" * 1_999
    fits = "a" * 1_998 + "😀" + "tail"
    assert cut_error(fits) == "a" * 1_998 + "😀"
    assert js_length(cut_error(fits)) == 2_000


def test_a_surrogate_pair_held_as_two_code_points_is_not_split() -> None:
    error = "a" * 1_999 + "\ud83d\ude00" + "b"
    assert cut_error(error) == "a" * 1_999


def test_cut_counts_code_units_not_characters() -> None:
    error = "😀" * 1_500  # 3,000 code units
    cut = cut_error(error)
    assert cut == "😀" * 1_000
    japanese = cycled("日本語", 2_500)
    assert cut_error(japanese) == japanese[:2_000]
    assert cut_error("short") == "short"


@pytest.mark.parametrize(("error", "limit"), [(b"x", 10), ("x", -1), ("x", 1.5), ("x", True)])
def test_cut_error_bad_arguments(error: Any, limit: Any) -> None:
    with pytest.raises((TypeError, ValueError), match=r"error must be a str|limit must be"):
        cut_error(error, limit)


def test_the_error_counts_toward_the_limit_and_survives_truncation() -> None:
    text = "a" * BOUNDARY
    assert "result" in seed_completion(text)
    done = bounded_completion(
        execution_id="fleet-run-0001",
        status="completed",
        result=text,
        total_tokens=0,
        reported_cost=0,
        error="x",
    )
    assert done == {
        "execution_id": "fleet-run-0001",
        "status": "completed",
        "result_truncated": True,
        "error": "x",
    }


def test_a_truncated_completion_carries_the_cut_error() -> None:
    done = bounded_completion(
        execution_id="c1", status="failed", result="a" * RESULT_LIMIT, error="e" * 5_000
    )
    assert done["result_truncated"] is True
    assert done["error"] == "e" * 2_000
    assert "result" not in done


def test_structured_results_are_measured_as_javascript_prints_them() -> None:
    # 1.0 prints as 1, non-ASCII unescaped: the bound uses JavaScript's length.
    padding = RESULT_LIMIT - len(
        '{"execution_id":"c","status":"completed","result":{"n":1,"t":""}}'
    )
    result = {"n": 1.0, "t": "日" * padding}
    done = bounded_completion(execution_id="c", status="completed", result=result)
    assert done["result"] is result
    result["t"] += "x"
    assert bounded_completion(execution_id="c", status="completed", result=result) == {
        "execution_id": "c",
        "status": "completed",
        "result_truncated": True,
    }


@settings(max_examples=80, deadline=None)
@given(
    extra=st.integers(min_value=-4, max_value=4),
    alphabet=st.sampled_from(["a", "日本語", "😀x", 'q"\n', "\x01b"]),
    wrap=st.booleans(),
    error=st.none() | st.text(max_size=30),
    tokens=st.none() | st.integers(min_value=0, max_value=10**9),
)
def test_all_or_nothing(
    extra: int, alphabet: str, wrap: bool, error: str | None, tokens: int | None
) -> None:
    full: dict[str, Any] = {"execution_id": "c1", "status": "completed", "result": ""}
    if tokens is not None:
        full["total_tokens"] = tokens
    if error is not None:
        full["error"] = error
    # Aim the result's length at the bound, give or take a few characters.
    room = RESULT_LIMIT - js_stringify_length(full) - (4 if wrap else 0)
    per_cycle = js_stringify_length(alphabet) - 2
    text = cycled(alphabet, max(0, room * len(alphabet) // per_cycle + extra))
    result: Any = {"t": text} if wrap else text
    full["result"] = result
    done = bounded_completion(
        execution_id="c1", status="completed", result=result, total_tokens=tokens, error=error
    )
    if js_stringify_length(full) <= RESULT_LIMIT:
        assert done == full
        assert done["result"] is result
    else:
        assert "result" not in done
        assert done["result_truncated"] is True
        assert set(done) <= {"execution_id", "status", "result_truncated", "error"}


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"execution_id": ""}, TypeError, "execution_id must be a non-empty str"),
        ({"execution_id": 7}, TypeError, "execution_id must be a non-empty str"),
        ({"status": "done"}, ValueError, "status must be one of completed, failed, cancelled"),
        ({"status": "running"}, ValueError, "status must be one of"),
        ({"total_tokens": -1}, ValueError, "total_tokens must be a non-negative int"),
        ({"total_tokens": True}, ValueError, "total_tokens must be an int"),
        ({"total_tokens": 1.0}, ValueError, "total_tokens must be an int"),
        ({"reported_cost": math.nan}, ValueError, "reported_cost must be a finite number"),
        ({"reported_cost": -0.5}, ValueError, "reported_cost must be at least 0"),
        ({"reported_cost": "1"}, ValueError, "reported_cost must be a number"),
        ({"error": 3}, TypeError, "error must be a str or None"),
        ({"result": {"items": [1, 2, 3, {1}]}}, TypeError, r"result.items[3] is a set"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict[str, Any], error: type, fragment: str) -> None:
    args: dict[str, Any] = {"execution_id": "c1", "status": "completed", **kwargs}
    with pytest.raises(error) as info:
        bounded_completion(**args)
    assert fragment in str(info.value)


def test_envelope_validates_like_bounded_completion() -> None:
    with pytest.raises(ValueError, match="status must be one of"):
        Envelope(execution_id="x", status="queued")
