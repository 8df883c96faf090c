"""D18 end to end: relay -> server -> get_graph_run, at the exact 100,000 boundary.

The pure function is tested in ``test_bounded.py``; here a Graph returns a text of
the boundary size and the agent reads what the server stored. The boundary is
computed independently of the kit: the relay posts ``{"execution_id": "exec_" + 32
hex, "status": "completed", "result": <text>, "total_tokens": 0, "reported_cost": 0}``
and ``JSON.stringify`` counts UTF-16 code units.
"""

from __future__ import annotations

import json

import pytest

from pytest_osfoundry.engine import Graph, ResultText
from tests.relay.osf_relay_kit import queue, recorded_relay, view, world

LIMIT = 100_000


def js_len(value: object) -> int:
    """``JSON.stringify(value).length`` for plain ASCII keys (an independent oracle)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-16-le")) // 2


ENVELOPE = {
    "execution_id": "exec_" + "0" * 32,
    "status": "completed",
    "result": "",
    "total_tokens": 0,
    "reported_cost": 0,
}
OVERHEAD = js_len(ENVELOPE)  # everything but the text: 124 (the seed's 101 + 23 id chars)
UNITS = {"ascii": 1, "japanese": 1, "emoji": 2}


def boundary(alphabet: str) -> int:
    """The largest text size (in characters) whose completion still carries the result."""
    return (LIMIT - OVERHEAD) // UNITS[alphabet]


def run_text(size: int, alphabet: str) -> dict[str, object]:
    w = world(graph=Graph(duration=5, result=ResultText(size, alphabet)))
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(30)
    return view(w, cid)


def test_the_independent_boundary_matches_the_seed_figure() -> None:
    assert OVERHEAD == 124
    assert boundary("ascii") == 99_899 - 23


@pytest.mark.parametrize("alphabet", ["ascii", "japanese", "emoji"])
def test_the_boundary_fits(alphabet: str) -> None:
    size = boundary(alphabet)
    seen = run_text(size, alphabet)
    assert seen["status"] == "completed"
    assert "result_truncated" not in seen
    assert seen["result"] == ResultText(size, alphabet).text
    assert js_len({**ENVELOPE, "result": seen["result"]}) <= LIMIT


@pytest.mark.parametrize("alphabet", ["ascii", "japanese", "emoji"])
def test_one_more_character_is_truncated_all_or_nothing(alphabet: str) -> None:
    size = boundary(alphabet) + 1
    assert js_len({**ENVELOPE, "result": ResultText(size, alphabet).text}) > LIMIT
    seen = run_text(size, alphabet)
    assert seen["status"] == "completed"
    assert seen["result_truncated"] is True
    assert "result" not in seen


def test_japanese_counts_characters_not_bytes() -> None:
    size = boundary("japanese")
    assert len(ResultText(size, "japanese").text.encode("utf-8")) == 3 * size > LIMIT
    assert run_text(size, "japanese")["result"] == ResultText(size, "japanese").text


def failing(error: str) -> dict[str, object]:
    w = world(graph=Graph(duration=5, error=error, total_tokens=9))
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(30)
    return view(w, cid)


@pytest.mark.parametrize("length", [1_999, 2_000])
def test_an_error_of_up_to_2000_characters_arrives_whole(length: int) -> None:
    error = ("Traceback: wave failed; " * 100)[:length]
    assert len(error) == length
    seen = failing(error)
    assert seen["status"] == "failed"
    assert seen["error"] == error
    assert seen["total_tokens"] == 9


def test_an_error_of_2001_characters_is_cut_to_the_first_2000() -> None:
    error = "".join(chr(ord("a") + i % 26) for i in range(2_001))
    seen = failing(error)
    assert seen["status"] == "failed"
    assert seen["error"] == error[:2_000]


def test_an_error_cut_never_splits_an_emoji() -> None:
    error = "x" * 1_999 + "😀" + "tail"
    seen = failing(error)
    assert seen["error"] == "x" * 1_999


def test_a_japanese_error_is_cut_by_characters() -> None:
    error = "日本語" * 700  # 2,100 characters, 6,300 UTF-8 bytes
    seen = failing(error)
    assert seen["error"] == error[:2_000]


@pytest.mark.parametrize("length", [1_999, 2_000, 2_001, 5_000])
def test_the_relay_itself_posts_at_most_2000_characters_of_error(length: int) -> None:
    # The server cuts too (R6); this checks the body the relay sends (D18).
    w = world(start_relay=False, graph=Graph(duration=5, error="e" * length))
    relay, rec = recorded_relay(w)
    relay.start()
    w.clock.advance(1)
    queue(w)
    w.clock.advance(30)
    (posted,) = [s.body for s in rec.sent if s.action == "complete"]
    assert posted["status"] == "failed"
    assert posted["error"] == "e" * min(length, 2_000)


def test_the_relay_itself_posts_no_result_past_the_bound() -> None:
    size = boundary("ascii") + 1
    w = world(start_relay=False, graph=Graph(duration=5, result=ResultText(size)))
    relay, rec = recorded_relay(w)
    relay.start()
    w.clock.advance(1)
    queue(w)
    w.clock.advance(30)
    (posted,) = [s.body for s in rec.sent if s.action == "complete"]
    assert posted == {
        "execution_id": posted["execution_id"],
        "status": "completed",
        "result_truncated": True,
    }
