"""js_stringify / js_length against what JavaScript's JSON.stringify prints."""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import struct
import subprocess
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_osfoundry._jslength import js_length, js_number, js_stringify, js_stringify_length

# Expected strings written from ECMAScript's JSON.stringify / Number::toString rules.
KNOWN: list[tuple[Any, str]] = [
    (None, "null"),
    (True, "true"),
    (False, "false"),
    (0, "0"),
    (-7, "-7"),
    (1.0, "1"),
    (-0.0, "0"),
    (0.1, "0.1"),
    (-1.5, "-1.5"),
    (100.0, "100"),
    (123.456, "123.456"),
    (1e20, "100000000000000000000"),
    (1e21, "1e+21"),
    (1.5e21, "1.5e+21"),
    (-1e21, "-1e+21"),
    (1e-6, "0.000001"),
    (1.5e-6, "0.0000015"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (123e-20, "1.23e-18"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (2.0**60, "1152921504606847000"),
    (123456789012345680000.0, "123456789012345680000"),
    (0.000001234, "0.000001234"),
    (1e16, "10000000000000000"),
    (math.nan, "null"),
    (math.inf, "null"),
    (-math.inf, "null"),
    (2**53, "9007199254740992"),
    (2**53 + 1, "9007199254740992"),
    (-(2**53) - 1, "-9007199254740992"),
    (2**60, "1152921504606847000"),
    (10**21, "1e+21"),
    (10**400, "null"),
    ("", '""'),
    ("plain", '"plain"'),
    ('say "hi"\\', '"say \\"hi\\"\\\\"'),
    ("\b\f\n\r\t", '"\\b\\f\\n\\r\\t"'),
    ("\x00\x01\x1f", '"\\u0000\\u0001\\u001f"'),
    ("\x0b", '"\\u000b"'),
    ("\x7f/", '"\x7f/"'),
    ("\u2028\u2029", '"\u2028\u2029"'),
    ("日本語 é", '"日本語 é"'),
    ("😀", '"😀"'),
    ("\ud800", '"\\ud800"'),
    ("a\udfffb", '"a\\udfffb"'),
    ("\udc00\ud800", '"\\udc00\\ud800"'),
    ("\ud83d\ude00", '"\ud83d\ude00"'),  # a valid pair, held as two code points
    ([], "[]"),
    ({}, "{}"),
    ([1, "a", None, [True]], '[1,"a",null,[true]]'),
    ((1, 2.5), "[1,2.5]"),
    ({"a": 1, "b": [1.0, {"c": None}]}, '{"a":1,"b":[1,{"c":null}]}'),
    ({"b": 1, "2": 2, "a": 3, "1": 4}, '{"1":4,"2":2,"b":1,"a":3}'),
    ({"x": 0, "01": 1, "-1": 2, "1.5": 3, "10": 4}, '{"10":4,"x":0,"01":1,"-1":2,"1.5":3}'),
    ({"4294967295": 1, "4294967294": 2}, '{"4294967294":2,"4294967295":1}'),
    ({"k\n": "v"}, '{"k\\n":"v"}'),
    ({"n": math.nan}, '{"n":null}'),
]


@pytest.mark.parametrize(("value", "expected"), KNOWN, ids=[repr(v)[:40] for v, _ in KNOWN])
def test_known_javascript_outputs(value: Any, expected: str) -> None:
    assert js_stringify(value) == expected
    assert js_stringify_length(value) == js_length(expected)


@pytest.mark.parametrize(
    ("text", "units"),
    [
        ("", 0),
        ("abc", 3),
        ("日本語", 3),
        ("😀", 2),
        ("a😀b", 4),
        ("\ud800", 1),
        ("\U0010ffff\U00010000", 4),
    ],
)
def test_js_length_counts_utf16_code_units(text: str, units: int) -> None:
    assert js_length(text) == units


def test_js_length_of_large_strings() -> None:
    text = "a" * 50_000 + "日" * 25_000 + "😀" * 25_000
    assert len(text) == 100_000
    assert js_length(text) == 125_000
    assert js_stringify_length(text) == 125_002
    assert js_stringify_length({"r": text}) == 125_002 + len('{"r":}')


def test_bools_and_int_subclasses_print_as_javascript_does() -> None:
    from enum import IntEnum

    class Level(IntEnum):
        HIGH = 3

    assert js_stringify([Level.HIGH, True, 1]) == "[3,true,1]"


@pytest.mark.parametrize(
    ("value", "name", "fragment"),
    [
        ({"items": [0, 1, 2, {1, 2}]}, "result", "result.items[3] is a set"),
        ({"a": {"b c": b"x"}}, "value", 'value.a["b c"] is a bytes'),
        ([object()], "arguments", "arguments[0] is a object"),
        ({1: "x"}, "result", "result has a key 1 of type int"),
        ({"d": {("t",): 1}}, "result", "result.d has a key"),
        (1j, "value", "value is a complex"),
    ],
)
def test_non_json_values_raise_type_error_naming_the_path(
    value: Any, name: str, fragment: str
) -> None:
    with pytest.raises(TypeError) as info:
        js_stringify(value, name=name)
    assert fragment in str(info.value)
    with pytest.raises(TypeError):
        js_stringify_length(value, name=name)


def test_cycles_raise_type_error() -> None:
    loop: list[Any] = [1]
    loop.append({"back": loop})
    with pytest.raises(TypeError, match=r"value\[1\]\.back contains itself"):
        js_stringify(loop)


def test_shared_non_cyclic_values_are_fine() -> None:
    shared = [1]
    assert js_stringify([shared, shared]) == "[[1],[1]]"


@pytest.mark.parametrize("name", ["", None, 3])
def test_bad_name_is_refused(name: Any) -> None:
    with pytest.raises(TypeError, match="name must be a non-empty str"):
        js_stringify(1, name=name)


@pytest.mark.parametrize("value", [True, "1", None, [1]])
def test_js_number_refuses_non_numbers(value: Any) -> None:
    with pytest.raises(TypeError, match="js_number needs an int or a float"):
        js_number(value)


def test_js_length_refuses_non_strings() -> None:
    with pytest.raises(TypeError, match="js_length needs a str"):
        js_length(b"abc")  # type: ignore[arg-type]


# --- properties -------------------------------------------------------------------

SAFE_INTS = st.integers(min_value=-(2**53), max_value=2**53)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
KEYS = st.text(max_size=8)
JSONISH = st.recursive(
    st.none() | st.booleans() | SAFE_INTS | FINITE | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25,
)


@given(JSONISH)
def test_round_trip_through_json_loads(value: Any) -> None:
    # JavaScript reads every number as a double, so parse them all as floats.
    assert json.loads(js_stringify(value), parse_int=float) == value


@given(JSONISH)
def test_stringify_length_is_length_of_stringify(value: Any) -> None:
    assert js_stringify_length(value) == js_length(js_stringify(value))


def _no_index_keys(value: Any) -> bool:
    if isinstance(value, dict):
        return all(
            re.fullmatch(r"0|[1-9][0-9]*", k) is None and _no_index_keys(v)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return all(_no_index_keys(v) for v in value)
    return True


NO_FLOATS = st.recursive(
    st.none() | st.booleans() | SAFE_INTS | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25,
)


@given(NO_FLOATS.filter(_no_index_keys))
def test_matches_python_compact_json_without_floats(value: Any) -> None:
    # Without floats, surrogates or index-like keys, Python's compact, non-ASCII json
    # is character for character what JavaScript prints.
    python = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert js_stringify(value) == python
    assert js_stringify_length(value) == len(python.encode("utf-16-le")) // 2


@given(NO_FLOATS)
def test_never_longer_than_python_ascii_json(value: Any) -> None:
    # Python's ASCII json escapes what JavaScript leaves as is (non-ASCII, U+007F), so
    # JavaScript's output is never longer, and as long when there is nothing to escape.
    # (Reordering index keys never changes the length.)
    python = json.dumps(value, separators=(",", ":"))
    assert js_stringify_length(value) <= len(python)
    if python == json.dumps(value, separators=(",", ":"), ensure_ascii=False):
        assert js_stringify_length(value) == len(python)


@given(FINITE)
def test_numbers_round_trip_and_use_javascript_forms(x: float) -> None:
    text = js_number(x)
    assert float(text) == x
    assert not text.endswith(".0")
    assert "e" not in text or re.fullmatch(r"-?\d(\.\d+)?e[+-]\d+", text)
    magnitude = abs(x)
    exponent_form = magnitude != 0 and (magnitude >= 1e21 or magnitude < 1e-6)
    assert ("e" in text) == exponent_form
    assert len(text.lstrip("-").replace(".", "").split("e")[0].strip("0")) <= 17


@given(st.integers())
def test_ints_print_as_the_double_javascript_holds(n: int) -> None:
    text = js_number(n)
    try:
        as_double = float(n)
    except OverflowError:
        assert text == "null"
        return
    assert float(text) == as_double


# --- against a real JavaScript engine, when one is installed -----------------------


def _corpus() -> list[Any]:
    rng = random.Random(20261108)
    pool = [chr(c) for c in range(0x30)] + list(
        '\x7f\u2028\u2029/\\"日é😀\ud800\udbff\udc00\udfffa'
    )
    values: list[Any] = []
    for _ in range(3000):
        bits = rng.getrandbits(64).to_bytes(8, "little")
        x = struct.unpack("<d", bits)[0]
        if math.isfinite(x):
            values.append(x)
        values.append(rng.uniform(-1e25, 1e25) * 10.0 ** rng.randint(-30, 10))
        values.append(rng.randint(-(10**25), 10**25))
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 10)))
        keys = [rng.choice(["a", "b", "0", "7", "10", "01", "-1", "1.5", text]) for _ in range(4)]
        values.append({key: [text, x if math.isfinite(x) else None] for key in keys})
    return values


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_against_node() -> None:
    values = _corpus()
    script = (
        "const a = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(a.map(x => [JSON.stringify(x),"
        " JSON.stringify(x).length])));"
    )
    done = subprocess.run(
        ["node", "-e", script],
        input=json.dumps(values),  # ASCII-escaped, so lone surrogates survive
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answers = json.loads(done.stdout)

    def units(text: str) -> str:  # one form for a surrogate pair: as JavaScript holds it
        return text.encode("utf-16-le", "surrogatepass").hex()

    for value, (text, length) in zip(values, answers, strict=True):
        ours = js_stringify(value)
        assert units(ours) == units(text), value
        assert js_stringify_length(value) == length, value


ASCIIISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(alphabet=st.characters(max_codepoint=127))
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(alphabet=st.characters(max_codepoint=127), max_size=6), inner)
    ),
    max_leaves=25,
)


@given(ASCIIISH)
def test_measured_length_is_stringify_length_for_any_json_data(value: Any) -> None:
    # The measuring path sums lengths (ASCII fast path, big ints, NaN, tuples);
    # it must agree with the text JSON.stringify would produce.
    assert js_stringify_length(value) == js_length(js_stringify(value))


def test_deep_data_and_cycles_are_measured_by_the_careful_path() -> None:
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    assert js_stringify_length(deep) == len(js_stringify(deep)) == 203
    loop: list[Any] = [1]
    loop.append({"back": loop})
    with pytest.raises(TypeError, match="contains itself"):
        js_stringify_length(loop)
