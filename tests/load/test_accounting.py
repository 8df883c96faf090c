"""The accounting judges the server: lost, duplicated, ran twice; pickup; not valid."""

from __future__ import annotations

import json
import re

import pytest

from pytest_osfoundry._ids import rfc3339
from pytest_osfoundry.load import Ledger, account
from pytest_osfoundry.load._accounting import pickup_waits
from pytest_osfoundry.load._drain import Final
from pytest_osfoundry.load._ledger import RunRecord, tag

T0 = 1_800_000_000.0
INTERVAL = 20.0


def _view(cid: str, status: str, queued: float, started: float | None = None,
          finished: float | None = None) -> dict[str, object]:
    return {
        "command_id": cid,
        "status": status,
        "queued_at": rfc3339(T0 + queued),
        "started_at": None if started is None else rfc3339(T0 + started),
        "finished_at": None if finished is None else rfc3339(T0 + finished),
    }


def _green() -> tuple[Ledger, dict[str, Final]]:
    ledger = Ledger()
    ledger.sources = 1
    finals = {}
    for i, (q, s, f) in enumerate([(0, 10, 70), (100, 112, 150), (105, 150, 200)]):
        cid = f"c{i}"
        view = _view(cid, "completed", q, s, f)
        ledger.runs.append(RunRecord(f"{i % 2}.0", f"key{i}", [cid], view))
        ledger.started(cid, tag(f"{i % 2}.0", f"key{i}"))
        finals[cid] = Final(cid, f"{i % 2}.0", view)
        ledger.latencies.add("MCP run_graph_session", 2.0, failed=False)
    return ledger, finals


def test_a_clean_run_is_green_with_every_figure() -> None:
    ledger, finals = _green()
    result = account(ledger, finals, interval=INTERVAL)
    assert (result.verdict, result.exit_status) == ("green", 0)
    assert result.runs == 3
    assert result.statuses == {"completed": 3}
    assert result.latency[0]["name"] == "MCP run_graph_session"
    assert result.latency[0]["requests"] == 3
    # c0 on owner 0 idle: 10 s; c1 on owner 1 idle: 12 s; c2 queued on owner 0 while idle? no
    # c2 is owner 0 and c0 ended at 70 < 105: idle, 45 s (late: over 1.1 intervals).
    assert result.pickup.runs == 3
    assert result.pickup.max == pytest.approx(45.0)
    assert result.pickup.late == 1
    for text in (result.table(), result.to_markdown()):
        assert "green" in text
        assert "MCP run_graph_session" in text
    assert json.loads(result.to_json())["verdict"] == "green"


def test_a_duplicated_key_is_red_and_named() -> None:
    ledger, finals = _green()
    ledger.started("c9", tag("0.0", "key0"))  # a second run for key0 that a desktop ran
    finals["c9"] = Final("c9", "0.0", _view("c9", "completed", 1, 30, 40))
    result = account(ledger, finals, interval=INTERVAL)
    assert (result.verdict, result.exit_status) == ("red", 1)
    assert result.duplicated == [{"agent": "0.0", "key": "key0", "command_ids": ["c0", "c9"]}]
    assert "duplicated: agent 0.0 key key0: c0, c9" in result.table()
    assert "c9" in result.to_markdown()


def test_an_execution_run_twice_is_red_and_named() -> None:
    ledger, finals = _green()
    ledger.started("c1", tag("1.0", "key1"))
    result = account(ledger, finals, interval=INTERVAL)
    assert result.verdict == "red"
    assert result.ran_twice == [{"command_id": "c1", "starts": 2, "agent": "1.0"}]
    assert "ran twice: c1 started 2 times" in result.table()


def test_a_run_not_terminal_after_the_drain_is_lost_and_named() -> None:
    ledger, finals = _green()
    finals["c1"] = Final("c1", "1.0", _view("c1", "running", 100, 112))
    finals["c5"] = Final("c5", "0.0", None, "Graph run not found or access removed")
    result = account(ledger, finals, interval=INTERVAL)
    assert (result.verdict, result.exit_status) == ("red", 1)
    assert [r["command_id"] for r in result.lost] == ["c1", "c5"]
    assert result.lost[1]["detail"] == "Graph run not found or access removed"
    assert "lost: c1 (agent 1.0, last status running)" in result.table()


def test_a_load_generator_that_fell_behind_makes_a_lost_run_not_valid() -> None:
    ledger, finals = _green()
    finals["c1"] = Final("c1", "1.0", _view("c1", "running", 100, 112))
    ledger.late_max = INTERVAL / 10 + 0.01
    result = account(ledger, finals, interval=INTERVAL)
    assert (result.verdict, result.exit_status) == ("not valid", 3)
    assert "more than a tenth" in result.not_valid[0]
    assert result.lost  # still listed, under a name that does not judge them
    table = result.table()
    assert "not terminal, not judged: c1 (agent 1.0, last status running)" in table
    assert re.search(r"not terminal, not judged +1\n", table)
    assert "lost" not in table and "lost" not in result.to_markdown()


def test_timers_late_by_a_tenth_exactly_are_still_valid() -> None:
    ledger, finals = _green()
    ledger.late_max = INTERVAL / 10
    assert account(ledger, finals, interval=INTERVAL).verdict == "green"


@pytest.mark.parametrize("cause", ["cpu", "given"])
def test_cpu_warnings_and_missing_workers_make_it_not_valid(cause) -> None:
    ledger, finals = _green()
    reasons = ["worker w1 sent no ledger"] if cause == "given" else []
    ledger.cpu_warning = cause == "cpu"
    result = account(ledger, finals, interval=INTERVAL, not_valid=reasons)
    assert result.verdict == "not valid"


def test_a_duplicate_is_red_even_when_the_generator_fell_behind() -> None:
    ledger, finals = _green()
    ledger.started("c9", tag("0.0", "key0"))
    finals["c9"] = Final("c9", "0.0", _view("c9", "completed", 1, 30, 40))
    ledger.cpu_warning = True
    assert account(ledger, finals, interval=INTERVAL).verdict == "red"


def test_pickup_counts_only_runs_queued_to_an_idle_desktop() -> None:
    finals = [
        Final("a", "0.0", _view("a", "completed", 0, 5, 60)),
        Final("b", "0.1", _view("b", "completed", 10, 60, 90)),  # owner 0 busy with a
        Final("c", "0.0", _view("c", "cancelled", 95, None, 96)),  # never started
        Final("d", "0.0", _view("d", "completed", 97, 110, 120)),  # c ended at 96: idle
        Final("e", "1.0", _view("e", "running", 0, 19)),
        Final("f", "1.0", _view("f", "completed", 50, 70, 80)),  # e never ended: busy
    ]
    waits = pickup_waits(finals, {"0.0": "0", "0.1": "0", "1.0": "1"})
    assert sorted(waits) == [5.0, 13.0, 19.0]


def test_an_unanswered_start_is_listed_unless_a_desktop_ran_its_run() -> None:
    ledger, finals = _green()
    ledger.runs.append(RunRecord("0.0", "lonely", [], None, error="no reply after 20 start calls"))
    ledger.runs.append(RunRecord("1.0", "found", [], None))
    ledger.started("c7", tag("1.0", "found"))
    finals["c7"] = Final("c7", "1.0", _view("c7", "completed", 300, 310, 320))
    result = account(ledger, finals, interval=INTERVAL)
    assert result.unanswered == [
        {"agent": "0.0", "key": "lonely", "error": "no reply after 20 start calls"}
    ]
    assert result.verdict == "green"


def test_a_refused_credential_is_red_and_named_first() -> None:
    ledger, finals = _green()
    ledger.refused[(0, "desktop token", 401, "relay sync")] = 22
    ledger.refused[(1, "agent token 0", 401, "MCP list_graph_sessions")] = 77
    ledger.refused[(1, "relay_url", 404, "relay sync")] = 2
    ledger.cpu_warning = True  # a refusal is the server's whatever the generator's pace
    result = account(ledger, finals, interval=INTERVAL)
    assert (result.verdict, result.exit_status) == ("red", 1)
    assert result.summary == "red: account 0's desktop token refused (401), 22 exchanges " \
                             "(relay sync 22)"
    assert result.refused[1] == {"account": 1, "credential": "agent token 0", "status": 401,
                                 "count": 77, "requests": {"MCP list_graph_sessions": 77}}
    table = result.table()
    assert "account 1's agent token 0 refused (401), 77 exchanges" in table
    assert "the relay_url was not found (404) for account 1, 2 exchanges (relay sync 2)" in table
    assert json.loads(result.to_json())["refused"][0]["count"] == 22


def test_the_markdown_names_every_refusal_as_the_json_does() -> None:
    ledger, finals = _green()
    for acc in range(12):
        ledger.refused[(acc, "desktop token", 401, "relay sync")] = 1
    result = account(ledger, finals, interval=INTERVAL)
    page = result.to_markdown()
    assert len(json.loads(result.to_json())["refused"]) == 12
    for acc in range(12):
        assert f"account {acc}'s desktop token refused (401)" in page
    assert "more refusals" not in page
    table = result.table()  # the terminal names ten, and says where the rest are
    assert "account 9's desktop token refused" in table
    assert "account 10's desktop token refused" not in table
    assert "... and 2 more refusals (see the JSON)" in table


def test_a_server_that_stopped_answering_is_red() -> None:
    ledger, finals = _green()
    gone = "the server stopped answering at 31 s (9 exchanges found no server; ...)"
    result = account(ledger, finals, interval=INTERVAL, failures=[gone])
    assert (result.verdict, result.summary) == ("red", f"red: {gone}")
    assert gone in result.table() and gone in result.to_markdown()


def test_an_interrupted_run_is_not_valid_and_says_when() -> None:
    ledger, finals = _green()
    result = account(ledger, finals, interval=INTERVAL,
                     not_valid=["interrupted at 8 s of 60 s"],
                     interrupted={"at": 8.2, "of": 60.0, "drain_cut_at": None})
    assert (result.verdict, result.exit_status) == ("not valid", 3)
    assert result.summary == "not valid: interrupted at 8 s of 60 s"
    assert "verdict                    not valid: interrupted at 8 s of 60 s" in result.table()
    assert json.loads(result.to_json())["interrupted"]["at"] == 8.2


def test_an_interrupt_that_ended_a_run_without_a_run_time_is_shown_as_the_json_has_it(
) -> None:
    ledger, finals = _green()
    result = account(ledger, finals, interval=INTERVAL,
                     interrupted={"at": 8.2, "of": None, "drain_cut_at": None})
    assert result.verdict == "green"  # without -t an interrupt is how a run ends
    assert json.loads(result.to_json())["interrupted"]["at"] == 8.2
    line = "at 8 s (no -t: not held against the run)"
    assert re.search(rf"^  ended by an interrupt +{re.escape(line)}$", result.table(), re.M)
    assert f"| ended by an interrupt | {line} |" in result.to_markdown()


def test_runs_not_the_loads_are_counted_apart() -> None:
    ledger, finals = _green()
    result = account(ledger, finals, interval=INTERVAL, foreign=2)
    assert (result.verdict, result.runs, result.foreign) == ("green", 3, 2)
    assert "other runs, not counted" in result.table()
