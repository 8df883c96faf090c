"""D17: completions go to the outbox before the POST and leave it only after a 2xx."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_osfoundry.engine import Graph
from pytest_osfoundry.faults import LoseRequests, ServerErrors
from pytest_osfoundry.relay._desktop import FakeRelay
from pytest_osfoundry.relay._outbox import FileOutbox, MemoryOutbox
from tests.relay.osf_relay_kit import T0, queue, recorded_relay, stamp, view, world

GRAPH = Graph(
    duration=25, result={"answer": "日本語 😀", "n": 42}, total_tokens=1234, reported_cost=0.5
)


def test_one_lost_completion_is_delivered_by_the_next_pass() -> None:
    w = world(graph=GRAPH, lose_completions=1)
    w.clock.advance(1)
    cid = queue(w)
    w.clock.run_until(T0 + 50)  # started 20, finished 45, POST lost
    assert view(w, cid)["status"] == "running"
    assert [e.kind for e in w.relay.events if e.command_id == cid] == [
        "started",
        "finished",
        "complete-lost",
    ]
    assert [c for c, _ in w.relay.outbox.items()] == [cid]  # type: ignore[union-attr]
    w.clock.run_until(T0 + 61)
    seen = view(w, cid)
    assert seen["status"] == "completed"
    assert seen["result"] == {"answer": "日本語 😀", "n": 42}
    assert w.relay.delivered_at(cid) == T0 + 60  # the seed: delivered 40 s after start
    assert stamp(seen["finished_at"]) == T0 + 60
    assert stamp(seen["started_at"]) == T0 + 20
    assert len(w.engine.runs) == 1, "a redelivery never runs the Graph again"
    assert w.relay.outbox.items() == []  # type: ignore[union-attr]


def test_without_the_outbox_a_lost_completion_leaves_the_run_running_forever() -> None:
    w = world(graph=GRAPH, lose_completions=1, outbox=False)
    assert w.relay.outbox is None
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(3600)
    seen = view(w, cid)
    assert seen["status"] == "running"
    assert seen["finished_at"] is None
    assert w.relay.delivered_at(cid) is None
    assert len(w.engine.runs) == 1


def test_the_entry_is_written_before_the_post() -> None:
    w = world(start_relay=False, graph=GRAPH)
    box = MemoryOutbox()
    seen_in_box: list[list[str]] = []

    class Peek:
        def before(self, method: str, url: str) -> None:
            if url.endswith("/complete"):
                seen_in_box.append([c for c, _ in box.items()])

        def after(self, method: str, url: str, response: object) -> None:
            return None

    relay, _ = recorded_relay(w, Peek(), outbox=box)
    relay.start()
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(60)
    assert seen_in_box == [[cid]]
    assert box.items() == []


def test_an_error_answer_keeps_the_entry_until_a_2xx() -> None:
    w = world(start_relay=False, graph=GRAPH)
    relay, rec = recorded_relay(w, ServerErrors("/complete", status=503, count=2))
    relay.start()
    w.clock.advance(1)
    cid = queue(w)
    w.clock.advance(80)  # 45: 503, 60: 503, 80: delivered
    assert [s.at - T0 for s in rec.sent if s.action == "complete"] == [45, 60, 80]
    assert view(w, cid)["status"] == "completed"
    assert relay.delivered_at(cid) == T0 + 80
    assert len(relay.outbox) == 0  # type: ignore[arg-type]


def test_a_recheck_cancellation_is_redelivered_too() -> None:
    w = world(start_relay=False)
    relay, _ = recorded_relay(w, LoseRequests("/complete", count=1))
    relay.start()
    w.clock.advance(1)
    cid = queue(w, index=1)
    relay.untick(w.project_id, w.sessions[1].graph_session_id)  # re-check cancel, POST lost
    assert view(w, cid)["status"] == "queued"
    w.clock.advance(30)  # the pass at 21 delivers it before syncing
    assert view(w, cid)["status"] == "cancelled"
    assert w.engine.runs == []
    assert [e.kind for e in relay.events if e.command_id == cid] == [
        "recheck-cancelled",
        "complete-lost",
        "delivered",
    ]


def test_a_command_waiting_in_the_outbox_is_not_run_again() -> None:
    # Its cancellation never arrived, so the server still hands the command out: the
    # relay must not run it while its completion waits (here, a 503 on the first flush).
    w = world(start_relay=False)
    relay, rec = recorded_relay(
        w, LoseRequests("/complete", count=1), ServerErrors("/complete", count=1)
    )
    relay.start()
    w.clock.advance(1)
    cid = queue(w, index=1)
    relay.untick(w.project_id, w.sessions[1].graph_session_id)
    relay.tick(w.project_id, w.sessions[1])  # shared again: the re-check would now pass
    w.clock.advance(40)
    assert w.engine.runs == []
    assert view(w, cid)["status"] == "cancelled"
    assert "start" not in [s.action for s in rec.sent]
    assert any(e.kind == "skipped" and e.command_id == cid for e in relay.events)


# --------------------------------------------------------------------------- FileOutbox

KILLED_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    from pytest_osfoundry.engine import Graph
    from pytest_osfoundry.relay._outbox import FileOutbox
    from pytest_osfoundry.relay._desktop import FakeRelay
    from pytest_osfoundry.world import OsfWorld, WorldConfig

    path, seed = sys.argv[1], int(sys.argv[2])

    class KillBeforeComplete:
        # The process dies after the outbox write, before the POST reaches the server.
        def before(self, method, url):
            if url.endswith("/complete"):
                sys.stdout.flush()
                os._exit(1)
        def after(self, method, url, response):
            return None

    graph = Graph(duration=25, result={"answer": "日本語 😀", "n": 42},
                  total_tokens=1234, reported_cost=0.5)
    world = OsfWorld(WorldConfig(seed=seed, start_relay=False, graph=graph))
    relay = FakeRelay(world.clock, world.relay_client(KillBeforeComplete()), world.engine,
                      outbox=FileOutbox(path), seed=seed)
    relay.share(world.project_id, world.sessions)
    relay.start()
    world.clock.advance(0)
    ticket = world.agent_client().run_graph_session(
        world.sessions[0].graph_session_id, "idempotency-key-1", {"x": 1})
    print(json.dumps({"command_id": ticket["command_id"]}), flush=True)
    world.clock.advance(3600)
    print("NOT KILLED", flush=True)
    """
)


@pytest.fixture
def killed_outbox(tmp_path: Path) -> tuple[Path, str]:
    """Run the script above; return the outbox path and the command id it left behind."""
    script = tmp_path / "kill_before_post.py"
    script.write_text(KILLED_SCRIPT, encoding="utf-8")
    path = tmp_path / "outbox.json"
    proc = subprocess.run(
        [sys.executable, str(script), str(path), "11"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "NOT KILLED" not in proc.stdout
    cid = json.loads(proc.stdout.splitlines()[0])["command_id"]
    return path, cid


def test_a_file_outbox_survives_a_kill_between_the_write_and_the_post(
    killed_outbox: tuple[Path, str],
) -> None:
    path, cid = killed_outbox
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".outbox-")] == []
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["version"] == 1
    box = FileOutbox(path)
    ((stored_id, body),) = box.items()
    assert stored_id == cid
    assert body["status"] == "completed"
    assert body["result"] == {"answer": "日本語 😀", "n": 42}
    assert body["total_tokens"] == 1234
    assert body["reported_cost"] == 0.5
    assert body["execution_id"].startswith("exec_")
    assert "result_truncated" not in body


def test_a_fresh_relay_delivers_the_survivor_on_its_first_pass(
    killed_outbox: tuple[Path, str],
) -> None:
    path, cid = killed_outbox
    body = dict(FileOutbox(path).items())[cid]
    # Rebuild the server side: same seed, so the same command id; the run is `running`.
    w = world(seed=11, start_relay=False, graph=GRAPH)
    w.server.state.share(w.project_id, [s.to_dict() for s in w.sessions])
    assert queue(w, key="idempotency-key-1", arguments={"x": 1}) == cid
    account = w.server.state.accounts[w.creds.account_id]
    w.server.state.relay_start(account, cid, body["execution_id"])
    assert view(w, cid)["status"] == "running"

    relay = FakeRelay(w.clock, w.relay_client(), w.engine, outbox=FileOutbox(path))
    relay.share(w.project_id, w.sessions)
    relay.start()
    w.clock.advance(0)
    assert [e.kind for e in relay.events] == ["delivered", "synced"]
    seen = view(w, cid)
    assert seen["status"] == "completed"
    assert seen["result"] == {"answer": "日本語 😀", "n": 42}
    assert seen["execution_id"] == body["execution_id"]
    assert w.engine.runs == [], "the Graph is not run again"
    assert FileOutbox(path).items() == []


def test_a_file_outbox_round_trips_entries_in_order(tmp_path: Path) -> None:
    path = tmp_path / "box.json"
    box = FileOutbox(path)
    box.put("a", {"status": "completed", "result": "日本語"})
    box.put("b", {"status": "failed", "error": "😀"})
    box.put("a", {"status": "cancelled"})  # replaced: now the newest
    assert [c for c, _ in FileOutbox(path).items()] == ["b", "a"]
    assert dict(FileOutbox(path).items())["a"] == {"status": "cancelled"}
    box.remove("b")
    box.remove("never-there")
    assert FileOutbox(path).items() == [("a", {"status": "cancelled"})]
    assert len(box) == 1


def test_a_file_outbox_keeps_a_lone_surrogate(tmp_path: Path) -> None:
    """An error cut by slice(0, 2000) through an emoji ends in half of it (JSON writes it
    ``"\\ud83d"``); the file keeps it as it keeps any text."""
    body = {"status": "failed", "error": "日本語 \ud83d"}
    FileOutbox(tmp_path / "o.json").put("a", body)
    assert dict(FileOutbox(tmp_path / "o.json").items())["a"] == body


def test_a_missing_file_is_an_empty_outbox_and_an_empty_file_too(tmp_path: Path) -> None:
    assert FileOutbox(tmp_path / "new.json").items() == []
    assert not (tmp_path / "new.json").exists()
    (tmp_path / "empty.json").write_text("", encoding="utf-8")
    assert FileOutbox(tmp_path / "empty.json").items() == []


@pytest.mark.parametrize(
    "content",
    [
        "not json at all",
        "[1, 2, 3]",
        '{"version": 1}',
        '{"version": 1, "entries": {"a": {}}}',
        '{"version": 1, "entries": [["a"]]}',
        '{"version": 1, "entries": [["a", {}, "extra"]]}',
        '{"version": 1, "entries": [["a", "not a dict"]]}',
        '{"version": 1, "entries": [[7, {}]]}',
        '{"version": 1, "entries": [5]}',
        '{"version": 1, "entries": [["a", {"status": "completed"}]',  # torn
    ],
)
def test_a_corrupt_outbox_file_is_a_clear_value_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "outbox.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match="is not a pytest-osfoundry outbox file") as info:
        FileOutbox(path)
    assert str(path) in str(info.value)


def test_a_file_outbox_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        FileOutbox(tmp_path / "nope" / "outbox.json")


@pytest.mark.parametrize("make", [MemoryOutbox, "file"])
def test_outbox_put_refuses_bad_arguments(tmp_path: Path, make: object) -> None:
    box = FileOutbox(tmp_path / "o.json") if make == "file" else MemoryOutbox()
    with pytest.raises(TypeError, match="command_id"):
        box.put("", {"status": "completed"})
    with pytest.raises(TypeError, match="command_id"):
        box.put(None, {"status": "completed"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="body must be a dict"):
        box.put("a", ["not", "a", "dict"])  # type: ignore[arg-type]
    assert box.items() == []


def test_a_file_outbox_refuses_a_body_it_cannot_store_and_stays_usable(tmp_path: Path) -> None:
    path = tmp_path / "o.json"
    box = FileOutbox(path)
    with pytest.raises(TypeError):
        box.put("a", {"result": object()})
    assert box.items() == []
    box.put("b", {"status": "completed"})
    assert FileOutbox(path).items() == [("b", {"status": "completed"})]
