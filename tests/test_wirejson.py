"""jsonwire: orjson's speed, the standard library's answers.

Every property compares :mod:`pytest_osfoundry._wirejson` with :mod:`json` on the
same input, type for type, so a drift in either library fails here first.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_osfoundry import _wirejson as jsonwire

BIG = 2**64


def same(a: Any, b: Any) -> bool:
    """Equal value *and* type at every level (``1 != 1.0``, ``True != 1``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def has_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(has_float(v) for v in value)
    return isinstance(value, float)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _strict(data: bytes | str) -> Any:
    return json.loads(data)


@settings(max_examples=400, deadline=None)
@given(values)
def test_reading_agrees_with_json_type_for_type(value: Any) -> None:
    text = json.dumps(value)
    assert same(jsonwire.loads(text, _strict), json.loads(text))
    assert same(jsonwire.loads(text.encode(), _strict), json.loads(text))


@settings(max_examples=400, deadline=None)
@given(values)
def test_writing_round_trips_through_json(value: Any) -> None:
    out = jsonwire.dumps(value)
    assert isinstance(out, bytes)
    assert same(json.loads(out), value)
    if not has_float(value):  # floats may differ in notation (0.00001 vs 1e-05) only
        compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        assert out == compact.encode("utf-8")


@pytest.mark.parametrize(
    "literal",
    [
        "12345678901234567890123",
        "-9223372036854775809",
        "18446744073709551616",
        '{"a":[1,99999999999999999999999999]}',
        "[-170141183460469231731687303715884105728]",
    ],
)
def test_integers_beyond_64_bits_stay_exact(literal: str) -> None:
    assert same(jsonwire.loads(literal, _strict), json.loads(literal))
    assert same(jsonwire.loads(literal.encode(), _strict), json.loads(literal))


def test_integers_beyond_64_bits_are_written_exactly() -> None:
    assert jsonwire.dumps({"n": BIG * 3 + 1}) == b'{"n":%d}' % (BIG * 3 + 1)
    assert jsonwire.dumps([-(BIG**2)]) == b"[%d]" % -(BIG**2)


def test_non_ascii_is_written_as_utf8_and_lone_surrogates_escaped() -> None:
    assert jsonwire.dumps({"t": "日本語 😀"}) == '{"t":"日本語 😀"}'.encode()
    escaped = jsonwire.dumps({"t": "a\ud800日"})
    assert escaped == b'{"t":"a\\ud800\\u65e5"}'  # valid UTF-8 JSON, as JSON.stringify
    assert json.loads(escaped) == {"t": "a\ud800日"}


def test_non_finite_floats_are_written_null_as_json_stringify_does() -> None:
    assert jsonwire.dumps([math.inf, -math.inf, math.nan]) == b"[null,null,null]"
    # ... also when the standard library has to write the rest (a big integer).
    assert jsonwire.dumps({"n": BIG, "x": math.inf}) == b'{"n":%d,"x":null}' % BIG


def test_what_neither_can_write_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        jsonwire.dumps({"x": object()})


def test_non_string_keys_are_written_as_json_writes_them() -> None:
    assert jsonwire.dumps({1: "a", None: 2}) == b'{"1":"a","null":2}'


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{",
        b"NaN",
        b'{"a":Infinity}',
        b"\xef\xbb\xbf{}",
        b'{"a":"\\ud800"}',
        "{}".encode("utf-16"),
        b"[" * 2000 + b"]" * 2000,
        b"1e400",
        b'"\xff"',
    ],
)
def test_what_orjson_refuses_gets_the_fallbacks_answer(body: bytes) -> None:
    def reference(data: bytes | str) -> Any:
        try:
            return ("value", json.loads(data))
        except (ValueError, RecursionError) as err:
            return ("error", type(err).__name__)

    assert same(list(jsonwire.loads(body, reference)), list(reference(body)))


def test_deep_nesting_orjson_reads_is_read_as_json_reads_it() -> None:
    body = b"[" * 300 + b"]" * 300
    assert jsonwire.loads(body, json.loads) == json.loads(body)


def test_fallback_errors_propagate_unchanged() -> None:
    class Refused(ValueError):
        pass

    def refuse(data: bytes | str) -> Any:
        raise Refused("no")

    with pytest.raises(Refused):
        jsonwire.loads(b"{", refuse)
    assert jsonwire.loads(b'{"a":1}', refuse) == {"a": 1}  # orjson's answer, no fallback


@settings(max_examples=300, deadline=None)
@given(values | st.text(alphabet=st.characters(codec=None)).map(lambda t: {"t": t + "\ud800"}))
def test_string_of_is_dumps_of_the_text(value: Any) -> None:
    encoded = jsonwire.dumps(value)
    assert jsonwire.string_of(encoded) == jsonwire.dumps(encoded.decode("utf-8"))
    assert json.loads(json.loads(jsonwire.string_of(encoded))) == json.loads(encoded)


json_ish_text = st.text(
    alphabet='{}[]":,.-+eE0123456789 \t\n\\/abcnulltrufs\u00e9\ud800', max_size=40
)


@settings(max_examples=1500, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=40), json_ish_text.map(lambda t: t.encode("utf-8", "surrogatepass"))
    )
)
def test_any_bytes_get_the_standard_librarys_verdict(data: bytes) -> None:
    # Valid or not: orjson must never accept what json refuses, nor read it otherwise.
    def verdict(reader: Any) -> tuple[str, Any]:
        try:
            return ("value", reader(data))
        except (ValueError, RecursionError):
            return ("error", None)

    expected = verdict(json.loads)
    got = verdict(lambda d: jsonwire.loads(d, json.loads))
    assert got[0] == expected[0]
    if got[0] == "value":
        assert same(got[1], expected[1])
