"""The domain vocabulary: its words checked against independent copies, its path helper."""

from __future__ import annotations

import pytest

from pytest_osfoundry import _vocabulary as vocab


def test_statuses_and_terminal_ones() -> None:
    assert vocab.RUN_STATUSES == ("queued", "running", "completed", "failed", "cancelled")
    assert vocab.TERMINAL_STATUSES == ("completed", "failed", "cancelled")
    assert set(vocab.TERMINAL_STATUSES) < set(vocab.RUN_STATUSES)


def test_the_spec_messages_word_for_word() -> None:
    assert vocab.RUN_NOT_FOUND == "Graph run not found or access removed"
    assert vocab.SESSION_NOT_FOUND == "Graph session not found or access removed"
    assert vocab.PROJECT_NOT_FOUND == "Project not found or access removed"
    assert vocab.KEY_CONFLICT == "idempotency_key was already used with different arguments"
    assert vocab.NO_LONGER_SHARED == "Graph session is no longer shared with this project"


def test_relay_paths() -> None:
    assert vocab.RELAY_SYNC == "/external-assistants/graph-relays/sync"
    assert (
        vocab.relay_command_path("c-1", "control")
        == "/external-assistants/graph-relays/commands/c-1/control"
    )


def test_a_command_id_cannot_leave_its_path_segment() -> None:
    path = vocab.relay_command_path("../sync?x=1#y", "start")
    assert path == "/external-assistants/graph-relays/commands/..%2Fsync%3Fx%3D1%23y/start"


def test_an_unknown_relay_action_is_refused() -> None:
    with pytest.raises(ValueError, match="action must be one of start, control, complete"):
        vocab.relay_command_path("c-1", "delete")


def test_limits_and_id_shapes() -> None:
    assert (vocab.RESULT_LIMIT, vocab.ERROR_LIMIT) == (100_000, 2_000)
    assert vocab.GRAPH_SESSION_ID_RE.fullmatch("gs_" + "0a" * 16)
    assert not vocab.GRAPH_SESSION_ID_RE.fullmatch("gs_" + "0A" * 16)
    assert vocab.UUID_RE.fullmatch("123e4567-e89b-12d3-a456-426614174000")
