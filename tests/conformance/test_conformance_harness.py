"""The suite's harness parts on their own, against the embedded reference server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_osfoundry.conformance.expected import CANCELLED, COMPLETED, RUNNING
from pytest_osfoundry.conformance.server._harness import CheckFailure, Conformance
from pytest_osfoundry.conformance.server._lifecycle import finished_run, started_run
from pytest_osfoundry.conformance.server._target import Target, resolve_target
from pytest_osfoundry.conformance.suite._options import Settings
from pytest_osfoundry.conformance.suite._registry import all_checks

INFO = next(c for c in all_checks() if c.check_id == "D1-run-only-queues")


@pytest.fixture
def target() -> Iterator[Target]:
    made = resolve_target(Settings(osf_target="embedded"))
    try:
        yield made
    finally:
        made.close()


def test_clean_up_ends_every_run_the_check_left_open_even_when_it_failed(
    target: Target,
) -> None:
    c = Conformance(target, INFO)
    queued = c.agent.queue()["command_id"]
    running = started_run(c)
    finished = finished_run(c, COMPLETED, result="kept").command_id
    attempt = c.agent.run(c.agent.run_args())  # a refusal was expected; it queued anyway
    assert attempt.structured is not None
    attempted = attempt.structured["command_id"]
    with pytest.raises(CheckFailure, match="a failing check: expected 2, got 1"):
        c.expect.equal(1, 2, "a failing check")
    c.close()
    reader = Conformance(target, INFO)
    statuses = {cid: reader.agent.view(cid)["status"] for cid in (queued, running, attempted)}
    assert statuses == {queued: CANCELLED, running: CANCELLED, attempted: CANCELLED}
    view = reader.agent.view(finished)
    assert (view["status"], view["result"]) == (COMPLETED, "kept")
    assert reader.desktop.command(reader.desktop.sync(), queued) is None


def test_runs_remember_the_execution_id_they_were_started_with(target: Target) -> None:
    c = Conformance(target, INFO)
    command_id = c.agent.queue()["command_id"]
    assert c.desktop.start(command_id) == RUNNING
    execution_id = c.desktop.execution_id(command_id)
    assert c.desktop.execution_id(command_id) == execution_id
    assert c.desktop.completion(command_id, CANCELLED, error="x") == {
        "execution_id": execution_id,
        "status": CANCELLED,
        "error": "x",
    }
    assert c.desktop.execution_id("not-tracked") != c.desktop.execution_id("not-tracked")
    c.close()


def test_failures_mask_every_credential(target: Target) -> None:
    c = Conformance(target, INFO, secrets=("extra-secret-0123456789",))
    token = target.creds.agent_token
    assert token
    with pytest.raises(CheckFailure) as info:
        c.expect.fail(f"leaked {token} and extra-secret-0123456789")
    assert token not in str(info.value) and "extra-secret" not in str(info.value)


def test_expectations_note_which_refusal_shape_they_saw(target: Target) -> None:
    c = Conformance(target, INFO)
    c.expect.schema_refusal(c.agent.call("get_graph_run", {}), "no command_id")
    assert c.notes == ["no command_id: refused as an isError result"]
    reply = c.agent.call("get_graph_run", {"command_id": "not-a-uuid"})
    with pytest.raises(CheckFailure, match="expected the error 'other'"):
        c.expect.error(reply, "other", "a wrong message")
    with pytest.raises(CheckFailure, match="get_graph_run answered an isError result"):
        c.expect.result_of(reply, "get_graph_run", "reading")


def test_raw_relay_requests_refuse_unknown_actions(target: Target) -> None:
    c = Conformance(target, INFO)
    with pytest.raises(ValueError, match="relay action 'stop'"):
        c.desktop.raw("stop", "x")
    with pytest.raises(ValueError, match="relay action 'start' for command None"):
        c.desktop.raw("start")
    assert c.desktop.raw("control", "00000000-0000-4000-8000-000000000000").status == 404


def test_a_fresh_servers_first_queue_leaves_no_refused_attempt_in_the_record(
    target: Target,
) -> None:
    c = Conformance(target, INFO)
    c.agent.queue()  # a fresh server: the fixed sessions are shared on the way
    history, _ = c.wire.exchanges()
    refusals = [e for e in history if b"Graph session not found" in e.response_body]
    assert refusals == [], "the pre-sync refusal is left out of the check's record"
    assert any(e.url.endswith("/graph-relays/sync") for e in history)
    c.close()
