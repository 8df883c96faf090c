"""``osfoundry-fake relay``: why the first sync failed is decided by the error, not its text."""

from __future__ import annotations

import pytest

from pytest_osfoundry.client import HttpStatusError, ReplyLost
from pytest_osfoundry.faults import DropReplies, Fault, FaultyHandler, ServerErrors
from pytest_osfoundry.relay._cli import first_sync_problem
from pytest_osfoundry.server import LoopbackServer, ReferenceServer
from tests.relay.test_relay_cli import _exit, _spawn


def test_a_status_error_is_a_refusal_naming_the_status() -> None:
    error = HttpStatusError(401, {}, b"no", url="http://127.0.0.1:1/api/graph-relays/sync")
    line = first_sync_problem(error, "http://127.0.0.1:1")
    assert line.startswith("the first sync was refused: ") and "401" in line


@pytest.mark.parametrize(
    "error",
    [
        ReplyLost("no reply from POST http://127.0.0.1:1/api/graph-relays/sync: ConnectError"),
        # A lost reply whose text happens to read like a status line is still not a refusal.
        ReplyLost("HTTP 503 stream ended before the reply"),
    ],
)
def test_a_lost_reply_is_not_a_refusal(error: ReplyLost) -> None:
    line = first_sync_problem(error, "http://ops:pw@127.0.0.1:1/")
    assert line.startswith("cannot sync with http://***@127.0.0.1:1/: ")
    assert "pw" not in line


def _first_sync_against(fault: Fault) -> tuple[int, str]:
    """Run the relay command against a reference server behind ``fault``."""
    server = ReferenceServer()
    made = server.provision()
    with LoopbackServer(FaultyHandler(server, fault)) as loop:
        relay = _spawn(
            "relay",
            "--relay-url",
            loop.origin,
            "--desktop-token",
            made.desktop_token,
            "--project-id",
            made.project_id,
        )
        code, err = _exit(relay)
    assert made.desktop_token not in err and "Traceback" not in err
    return code, err


def test_the_command_reports_a_refused_first_sync() -> None:
    code, err = _first_sync_against(ServerErrors("/sync", status=503))
    assert code == 2
    assert "the first sync was refused: HTTP 503" in err


def test_the_command_reports_a_lost_first_sync_reply() -> None:
    code, err = _first_sync_against(DropReplies("/sync", fraction=1.0))
    assert code == 2
    assert "cannot sync with http://127.0.0.1:" in err
    assert "refused" not in err
