"""The ledger a load process sends its master: tags, latencies, merging, round trips."""

from __future__ import annotations

import json

import pytest

from pytest_osfoundry.load import Ledger
from pytest_osfoundry.load._ledger import Latencies, RunRecord, run_of, tag, tag_of


def test_a_runs_tag_names_its_agent_and_key() -> None:
    assert tag_of(tag("2.1", "k" * 32)) == ("2.1", "k" * 32)
    others: list[object] = [None, {}, {"osf_load": "x"}, {"osf_load": {"agent": 1, "key": "k"}}, []]
    for other in others:
        assert tag_of(other) is None


def test_percentiles_come_from_the_counted_times() -> None:
    lat = Latencies()
    for ms in range(1, 101):
        lat.add("MCP get_graph_run", float(ms), failed=ms > 98)
    assert lat.count("MCP get_graph_run") == 100
    assert lat.percentile("MCP get_graph_run", 0.5) == 50
    assert lat.percentile("MCP get_graph_run", 0.95) == 95
    assert lat.percentile("MCP get_graph_run", 1.0) == 100
    assert lat.failures["MCP get_graph_run"] == 2
    assert lat.percentile("unknown", 0.5) == 0.0


def test_times_are_kept_to_two_significant_figures() -> None:
    lat = Latencies()
    for ms in (0.234, 2.66, 35.4, 1234.0, 0.0):
        lat.add("x", ms, failed=False)
    assert sorted(lat.times["x"]) == [0.0, 0.23, 2.7, 35.0, 1200.0]


def test_a_command_started_again_is_counted_not_replaced() -> None:
    ledger = Ledger()
    ledger.started("c1", tag("0.0", "key1"))
    ledger.started("c1", {})
    ledger.started("c2", None)
    assert ledger.starts["c1"].count == 2
    assert (ledger.starts["c1"].agent, ledger.starts["c1"].key) == ("0.0", "key1")
    assert ledger.starts["c2"].agent is None


def _ledger(runs: int, start: str, late: float) -> Ledger:
    ledger = Ledger()
    ledger.runs = [
        RunRecord("0.0", f"key{i}", [f"c{i}"], {"status": "queued"}) for i in range(runs)
    ]
    ledger.started(start, tag("0.0", "key0"))
    ledger.latencies.add("relay sync", 3.0, failed=False)
    ledger.late_max = late
    return ledger


def test_ledgers_merge_and_survive_json() -> None:
    a, b = _ledger(2, "c0", 0.01), _ledger(1, "c0", 0.2)
    b.cpu_warning = True
    merged = Ledger.combined(Ledger.from_dict(json.loads(json.dumps(x.to_dict()))) for x in (a, b))
    assert len(merged.runs) == 3
    assert merged.starts["c0"].count == 2
    assert merged.latencies.count("relay sync") == 2
    assert merged.late_max == 0.2
    assert merged.cpu_warning
    assert merged.sources == 2


def test_a_message_that_is_no_ledger_is_refused() -> None:
    with pytest.raises(ValueError, match="not a load ledger"):
        Ledger.from_dict({"runs": [["too", "short"]]})


def test_the_one_percentile_is_the_nearest_rank_of_counted_values() -> None:
    from collections import Counter

    from pytest_osfoundry.load._ledger import percentile

    waits = Counter([4.0, 1.0, 3.0, 2.0])
    assert [percentile(waits, q) for q in (0.0, 0.25, 0.5, 0.51, 0.95, 1.0)] == [
        1.0, 1.0, 2.0, 3.0, 4.0, 4.0
    ]
    assert percentile(Counter({10.0: 99, 500.0: 1}), 0.99) == 10.0  # a measured value
    assert percentile(Counter(), 0.5) == 0.0


def test_runs_of_another_load_run_are_dropped_as_foreign() -> None:
    ledger = Ledger()
    ledger.started("mine", tag("0.0", "k1", "run-a"))
    ledger.started("earlier", tag("0.0", "k0", "run-0"))
    ledger.started("untagged", {"x": 1})
    ledger.started("older-format", {"osf_load": {"agent": "0.0", "key": "k9"}})
    assert run_of(tag("0.0", "k1", "run-a")) == "run-a"
    assert ledger.drop_foreign("run-a") == ["earlier", "older-format", "untagged"]
    assert list(ledger.starts) == ["mine"]


def test_refusals_and_answers_merge_and_survive_json() -> None:
    a, b = Ledger(), Ledger()
    a.refused[(0, "desktop token", 401, "relay sync")] = 3
    b.refused[(0, "desktop token", 401, "relay sync")] = 2
    b.refused[(1, "mcp_url", 404, "MCP initialize")] = 1
    a.answered_last, b.answered_last = 10.0, 12.5
    a.unanswered, b.unanswered = 1, 4
    merged = Ledger.combined(Ledger.from_dict(json.loads(json.dumps(x.to_dict()))) for x in (a, b))
    assert merged.refused == {(0, "desktop token", 401, "relay sync"): 5,
                              (1, "mcp_url", 404, "MCP initialize"): 1}
    assert (merged.answered_last, merged.unanswered) == (12.5, 5)
