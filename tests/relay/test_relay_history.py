"""The fake relay's history is bounded (issue 39.6): an idle relay holds a fixed amount.

``FakeRelay.passes``, ``.events`` and ``.executed`` keep the newest ``history`` items
(10,000 by default; ``None`` keeps all), as :class:`History` sequences that read like
the lists they were. State sizes, never RSS or time.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_osfoundry.relay._desktop import DEFAULT_HISTORY, History
from pytest_osfoundry.world import WorldConfig
from tests.relay.osf_relay_kit import T0, queue, world


def test_a_history_keeps_the_newest_and_counts_what_it_forgot() -> None:
    kept: History[int] = History(3)
    for item in range(5):
        kept.append(item)
    assert kept == [2, 3, 4] and kept == (2, 3, 4) and kept != [1, 2, 3]
    assert (len(kept), kept.dropped, kept[0], kept[-1], kept[1:]) == (3, 2, 2, 4, [3, 4])
    assert list(reversed(kept)) == [4, 3, 2] and 3 in kept and 1 not in kept
    assert repr(kept) == "History([2, 3, 4], limit=3, dropped=2)"
    everything: History[int] = History(None)
    for item in range(5):
        everything.append(item)
    assert everything == [0, 1, 2, 3, 4] and everything.dropped == 0


@pytest.mark.parametrize("limit", [0, -1, 2.5, True])
def test_a_history_refuses_a_limit_that_is_not_a_count(limit: Any) -> None:
    with pytest.raises(ValueError, match="at least 1 item or None"):
        History(limit)


def test_an_idle_relay_keeps_only_its_newest_passes_and_events() -> None:
    w = world(relay_history=4)
    w.clock.advance(20 * 50)  # 51 passes, each a sync
    relay = w.relay
    assert len(relay.passes) == 4 and relay.passes.dropped == 47
    assert [p.at - T0 for p in relay.passes] == [940, 960, 980, 1000]
    assert len(relay.events) == 4 and {e.kind for e in relay.events} == {"synced"}


def test_executed_commands_are_bounded_too() -> None:
    w = world(relay_history=2)
    ids = [queue(w, key=f"history-key-{i:04d}") for i in range(3)]
    w.clock.advance(20 * 10)
    assert w.server.state.counts()["completed"] == 3  # every run ran
    assert w.relay.executed == ids[1:] and w.relay.executed.dropped == 1


def test_the_default_is_generous_and_none_keeps_all() -> None:
    assert world().relay.events.limit == DEFAULT_HISTORY == 10_000
    assert world(relay_history=None).relay.passes.limit is None


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"relay_history": 0}, ValueError, "relay_history must be a positive int"),
        ({"retention": {"finished_runs": 1}}, TypeError, "retention must be a Retention"),
    ],
)
def test_the_world_refuses_a_bad_bound_naming_the_field(
    fields: dict[str, Any], error: type[Exception], message: str
) -> None:
    from pytest_osfoundry.world import OsfWorld

    with pytest.raises(error, match=message):
        OsfWorld(WorldConfig(**fields))


def test_the_relay_command_takes_its_history_bound(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_osfoundry._cli import build_parser

    base = [
        "relay",
        "--relay-url",
        "http://127.0.0.1:9",
        "--desktop-token",
        "t",
        "--project-id",
        "p",
    ]
    assert build_parser().parse_args(base).history == DEFAULT_HISTORY
    assert build_parser().parse_args([*base, "--history", "5"]).history == 5
    with pytest.raises(SystemExit):
        build_parser().parse_args([*base, "--history", "0"])
    assert "argument --history: expected a positive integer" in capsys.readouterr().err
