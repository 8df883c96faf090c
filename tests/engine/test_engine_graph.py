"""Graph as data: durations, result texts, waves and the token ceiling's validation."""

from __future__ import annotations

import math
import random
import statistics
from typing import Any

import pytest

from pytest_osfoundry._jslength import js_length
from pytest_osfoundry.engine import (
    Duration,
    Fixed,
    Graph,
    LogNormal,
    ResultText,
    Uniform,
)
from pytest_osfoundry.engine._graph import ALPHABETS, ceiling_error


def test_fixed_duration() -> None:
    assert Fixed(12.5).sample(random.Random(1)) == 12.5
    assert Fixed(0).sample(random.Random(1)) == 0.0


def test_lognormal_defaults_follow_the_spec() -> None:
    dist = LogNormal()
    assert (dist.median, dist.minimum) == (60.0, 5.0)
    rng = random.Random(7)
    samples = [dist.sample(rng) for _ in range(20_001)]
    assert min(samples) == 5.0  # the floor is reached and never crossed
    assert 55.0 < statistics.median(samples) < 65.0


def test_lognormal_sigma_controls_the_spread() -> None:
    rng = random.Random(3)
    tight = [LogNormal(sigma=0.1).sample(rng) for _ in range(2_000)]
    wide = [LogNormal(sigma=1.5).sample(rng) for _ in range(2_000)]
    assert statistics.pstdev(tight) < statistics.pstdev(wide)
    assert LogNormal(sigma=0).sample(rng) == 60.0


def test_lognormal_is_deterministic_for_a_seed() -> None:
    dist = LogNormal(sigma=0.8)
    a = [dist.sample(random.Random(42)) for _ in range(3)]
    b = [dist.sample(random.Random(42)) for _ in range(3)]
    assert a == b


def test_uniform_stays_in_range() -> None:
    rng = random.Random(5)
    samples = [Uniform(10, 20).sample(rng) for _ in range(1_000)]
    assert all(10 <= s <= 20 for s in samples)
    assert max(samples) - min(samples) > 9
    assert Uniform(3, 3).sample(rng) == 3


@pytest.mark.parametrize(
    ("make", "error", "fragment"),
    [
        (lambda: Fixed(-1), ValueError, "Fixed.seconds must be a non-negative number"),
        (lambda: Fixed(math.inf), ValueError, "Fixed.seconds must be a non-negative number"),
        (lambda: Fixed("5"), TypeError, "Fixed.seconds must be a number"),  # type: ignore[arg-type]
        (lambda: Fixed(True), TypeError, "Fixed.seconds must be a number"),
        (lambda: LogNormal(median=0), ValueError, "LogNormal.median must be > 0"),
        (lambda: LogNormal(sigma=-0.1), ValueError, "LogNormal.sigma must be in [0, 20]"),
        (lambda: LogNormal(sigma=50), ValueError, "LogNormal.sigma must be in [0, 20]"),
        (lambda: LogNormal(minimum=-1), ValueError, "LogNormal.minimum must be >= 0"),
        (lambda: LogNormal(minimum=90), ValueError, "must not exceed the median"),
        (lambda: LogNormal(median=math.nan), ValueError, "LogNormal.median must be a finite"),
        (lambda: Uniform(-1, 2), ValueError, "Uniform.low must be >= 0"),
        (lambda: Uniform(5, 2), ValueError, "Uniform.high (2) must be >= low (5)"),
        (lambda: Uniform(None, 2), TypeError, "Uniform.low must be a number"),  # type: ignore[arg-type]
    ],
)
def test_bad_durations_are_named(make: Any, error: type, fragment: str) -> None:
    with pytest.raises(error) as info:
        make()
    assert fragment in str(info.value)


def test_duration_is_abstract() -> None:
    with pytest.raises(TypeError):
        Duration()  # type: ignore[abstract]


@pytest.mark.parametrize(
    ("alphabet", "size", "expected"),
    [
        ("ascii", 30, "abcdefghijklmnopqrstuvwxyzabcd"),
        ("japanese", 5, "日本語日本"),
        ("emoji", 3, "😀😀😀"),
        ("xy", 5, "xyxyx"),
        ("ascii", 0, ""),
    ],
)
def test_result_text(alphabet: str, size: int, expected: str) -> None:
    text = ResultText(size, alphabet).text
    assert text == expected
    assert len(text) == size


def test_result_text_sizes_are_exact_and_cached() -> None:
    big = ResultText(99_899, "japanese")
    assert len(big.text) == 99_899
    assert len(big.text.encode("utf-8")) == 299_697
    assert big.text is big.text
    emoji = ResultText(10, "emoji")
    assert js_length(emoji.text) == 20
    assert set(ALPHABETS) == {"ascii", "japanese", "emoji"}


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"size": -1}, ValueError, "ResultText.size must be a non-negative int"),
        ({"size": 1.5}, TypeError, "ResultText.size must be an int"),
        ({"size": 3, "alphabet": ""}, ValueError, "ResultText.alphabet must be"),
        ({"size": 3, "alphabet": 7}, ValueError, "ResultText.alphabet must be"),
    ],
)
def test_bad_result_text(kwargs: dict[str, Any], error: type, fragment: str) -> None:
    with pytest.raises(error) as info:
        ResultText(**kwargs)
    assert fragment in str(info.value)


def test_graph_defaults_and_helpers() -> None:
    graph = Graph()
    assert graph.sample_duration(random.Random(0)) == 60.0
    assert graph.result_value() is None
    assert graph.planned_tokens == 0
    assert Graph(duration=Fixed(3)).sample_duration(random.Random(0)) == 3.0
    assert Graph(result=ResultText(4, "xy")).result_value() == "xyxy"
    assert Graph(total_tokens=9).planned_tokens == 9
    assert Graph(waves=(1, 2, 3)).planned_tokens == 6
    assert Graph(waves=(1, 2, 3), total_tokens=6).planned_tokens == 6


def test_ceiling_error_text() -> None:
    assert ceiling_error(1000, 3) == "token ceiling of 1000 reached; wave 3 refused"


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"duration": -1}, ValueError, "Graph.duration must be a non-negative"),
        ({"duration": "60"}, TypeError, "Graph.duration must be a number"),
        ({"duration": math.nan}, ValueError, "Graph.duration must be a non-negative"),
        ({"result": {"rows": [1, object()]}}, TypeError, "Graph.result.rows[1] is a object"),
        ({"total_tokens": -5}, ValueError, "Graph.total_tokens must be a non-negative int"),
        ({"total_tokens": 2.0}, TypeError, "Graph.total_tokens must be an int"),
        ({"reported_cost": -0.01}, ValueError, "Graph.reported_cost must be at least 0"),
        ({"reported_cost": math.inf}, ValueError, "Graph.reported_cost must be a finite number"),
        ({"error": 404}, TypeError, "Graph.error must be a str or None"),
        ({"waves": [1, 2]}, TypeError, "Graph.waves must be a tuple of ints"),
        ({"waves": (1, -2)}, ValueError, "Graph.waves[1] must be a non-negative int"),
        ({"waves": (1, "2")}, TypeError, "Graph.waves[1] must be an int"),
        ({"waves": (1, 2), "total_tokens": 5}, ValueError, "must be 0 or the waves' sum (3)"),
        ({"token_ceiling": 10}, ValueError, "Graph.token_ceiling needs waves"),
        ({"waves": (1,), "token_ceiling": -1}, ValueError, "token_ceiling must be a non-negative"),
        ({"waves": (1,), "token_ceiling": 1.5}, TypeError, "Graph.token_ceiling must be an int"),
    ],
)
def test_bad_graphs_are_named(kwargs: dict[str, Any], error: type, fragment: str) -> None:
    with pytest.raises(error) as info:
        Graph(**kwargs)
    assert fragment in str(info.value)
