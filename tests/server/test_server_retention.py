"""What the reference server keeps of finished work is bounded (issue 39.6).

Terminal runs are kept up to :class:`Retention`'s caps (a count and the characters of
their completions), the oldest-finished forgotten first; a forgotten run answers
exactly as an invented id does (D5, R13); a kept run's view never changes (R6); an
idempotency key outlives its run for its 24 hours and its replay returns the original
ticket with the run's final status (R4, R5). State sizes, never RSS or time.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_osfoundry._checks import ArgumentTypeError
from pytest_osfoundry.server import ReferenceServer, Retention, ServerState
from tests.server.osf_server_kit import GS1, INVENTED, RUN_NOT_FOUND, Srv, session

DAY = 86_400.0


def _srv(**retention: Any) -> Srv:
    s = Srv(retention=Retention(**retention))
    s.server.state.share(s.pid, [session(GS1)])
    return s


def _complete(srv: Srv, key: str, result: Any = "done") -> str:
    command_id: str = srv.queue(key=key)["command_id"]
    assert srv.start(command_id, f"exec-{key}").status == 200
    body = {"execution_id": f"exec-{key}", "status": "completed", "result": result}
    reply = srv.complete(command_id, body)
    assert reply.status == 200, reply.body
    return command_id


def test_the_oldest_finished_runs_are_forgotten_past_the_count() -> None:
    srv = _srv(finished_runs=3)
    done = [_complete(srv, f"count-key-{i:04d}") for i in range(5)]
    kept = srv.server.state.kept()
    assert (kept["runs"], kept["finished"], kept["keys"]) == (3, 3, 5)
    for gone in done[:2]:
        assert srv.err("get_graph_run", {"command_id": gone}, srv.agent) == RUN_NOT_FOUND
    for still in done[2:]:
        assert srv.get(still)["status"] == "completed"


def test_a_forgotten_run_answers_exactly_as_an_invented_id() -> None:
    srv = _srv(finished_runs=1)
    gone = _complete(srv, "exact-key-0001")
    _complete(srv, "exact-key-0002")
    for tool in ("get_graph_run", "cancel_graph_run"):
        assert srv.call(tool, {"command_id": gone}, srv.agent) == srv.call(
            tool, {"command_id": INVENTED}, srv.agent
        )
    for path in (f"/commands/{gone}/control", f"/commands/{INVENTED}/control"):
        reply = srv.relay("GET", path)
        assert reply.status == 404
    body = {"execution_id": "exec-exact-key-0001", "status": "completed", "result": "done"}
    assert srv.complete(gone, body).status == 404  # R13: as unknown as any id


def test_a_replay_of_a_forgotten_runs_key_returns_its_ticket_with_the_final_status() -> None:
    srv = _srv(finished_runs=1)
    first = srv.queue(key="replay-key-0001")
    command_id = first["command_id"]
    srv.start(command_id)
    srv.complete(command_id, {"execution_id": "exec-1", "status": "failed", "error": "x"})
    _complete(srv, "replay-key-0002")  # pushes the first out
    assert command_id not in srv.server.state.runs
    replay = srv.queue(key="replay-key-0001")
    assert replay == {**first, "status": "failed"}
    assert srv.server.state.kept()["runs"] == 1  # nothing queued again
    conflict = srv.err(
        "run_graph_session",
        {"graph_session_id": GS1, "idempotency_key": "replay-key-0001", "arguments": {"a": 1}},
    )
    assert conflict == "idempotency_key was already used with different arguments"


def test_completions_are_kept_up_to_their_weight_in_characters() -> None:
    srv = _srv(finished_chars=250_000)
    big = "x" * 99_000  # about 99,050 characters as JSON.stringify counts the completion
    done = [_complete(srv, f"weight-key-{i:04d}", big) for i in range(4)]
    kept = srv.server.state.kept()
    assert kept["finished"] == 2 and 198_000 < kept["finished_chars"] <= 250_000
    assert srv.err("get_graph_run", {"command_id": done[1]}, srv.agent) == RUN_NOT_FOUND
    assert srv.get(done[3])["result"] == big


def test_queued_and_running_runs_are_never_forgotten() -> None:
    srv = _srv(finished_runs=1)
    queued = [srv.queue(key=f"queued-key-{i:04d}")["command_id"] for i in range(3)]
    srv.start(queued[0])
    for i in range(3):
        _complete(srv, f"finished-key-{i:04d}")
    assert srv.get(queued[0])["status"] == "running"
    assert [srv.get(c)["status"] for c in queued[1:]] == ["queued", "queued"]
    assert [c["command_id"] for c in srv.sync()["commands"]] == queued[1:]


def test_a_kept_runs_view_never_changes_while_others_are_forgotten() -> None:
    srv = _srv(finished_runs=2)
    watched = _complete(srv, "view-key-0000", {"answer": [1, 2, 3]})
    before = srv.get(watched)
    _complete(srv, "view-key-0001")
    assert srv.get(watched) == before
    _complete(srv, "view-key-0002")  # now the watched run is the oldest past the cap
    assert srv.err("get_graph_run", {"command_id": watched}, srv.agent) == RUN_NOT_FOUND


def test_keys_are_kept_24_hours_then_forgotten() -> None:
    srv = _srv()
    first = srv.queue(key="window-key-0001")
    srv.clock.advance(DAY - 1)
    assert srv.queue(key="window-key-0001") == first  # still within R5's 24 hours
    srv.clock.advance(1)
    again = srv.queue(key="window-key-0001")
    assert again["command_id"] != first["command_id"]  # a new run: the key was forgotten
    assert srv.server.state.kept()["keys"] == 1


def test_a_cancel_while_queued_weighs_nothing_and_arguments_go_with_the_run() -> None:
    srv = _srv(finished_chars=100_000)
    command_id = srv.queue(key="cancel-key-0001", arguments={"big": "y" * 50_000})["command_id"]
    assert srv.server.state.runs[command_id].arguments == {"big": "y" * 50_000}
    assert srv.cancel(command_id)["status"] == "cancelled"
    assert srv.server.state.runs[command_id].arguments == {}
    assert srv.server.state.kept()["finished_chars"] == 0


def test_unbounded_keeps_everything() -> None:
    state = ServerState(retention=Retention.unbounded())
    assert state.retention == Retention(None, None, None)


def test_the_defaults_and_where_they_are_set() -> None:
    assert Retention() == Retention(10_000, 50_000_000, DAY)
    assert ReferenceServer().state.retention == Retention()
    kept = Retention(finished_runs=5)
    assert ReferenceServer(retention=kept).state.retention is kept
    with pytest.raises(ValueError, match="give retention to the ServerState"):
        ReferenceServer(state=ServerState(), retention=kept)


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"finished_runs": 0}, ValueError, "finished_runs must be a positive int"),
        ({"finished_runs": 1.5}, ArgumentTypeError, "finished_runs must be an int"),
        ({"finished_chars": 99_999}, ValueError, "finished_chars must be an int of at least"),
        ({"key_seconds": 3_600}, ValueError, "key_seconds must be at least 86400"),
        ({"key_seconds": "1d"}, ArgumentTypeError, "key_seconds must be a number of seconds"),
    ],
)
def test_a_bad_retention_is_refused_naming_the_field(
    fields: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Retention(**fields)
    with pytest.raises(TypeError, match="retention must be a Retention"):
        ServerState(retention=fields)  # type: ignore[arg-type]
