"""``osfoundry-fake relay``: ids that never repeat across restarts, and quiet, masked logs."""

from __future__ import annotations

import json
from typing import Any

from pytest_osfoundry.client import HttpTransport, McpClient
from tests.relay.test_relay_cli import _relay, _stop, _wait_for, served

__all__ = ["served"]  # the fixture, shared with test_relay_cli


def _one_run(info: dict[str, Any], key: str, *extra: str) -> tuple[str, str]:
    """Start a relay, have it run one command, stop it: the run's execution id and stderr."""
    relay = _relay(info, "--sessions", "1", "--graph-duration", "0.1", *extra)
    assert relay.stdout is not None
    line = json.loads(relay.stdout.readline())
    with HttpTransport() as transport:
        agent = McpClient(transport, info["mcp_url"], info["agent_token"])
        gsid = line["sessions"][0]["graph_session_id"]
        ticket = agent.run_graph_session(gsid, key)
        run = _wait_for(
            lambda: (v := agent.get_graph_run(ticket["command_id"]))["status"] == "completed" and v
        )
    code, err = _stop(relay)
    assert code == 0
    return str(run["execution_id"]), err


def test_execution_ids_differ_across_restarts_unless_seeded(
    served: tuple[Any, dict[str, Any]],
) -> None:
    _, info = served
    first, _ = _one_run(info, "restart-key-0001")
    second, _ = _one_run(info, "restart-key-0002")
    assert first != second
    seeded = {_one_run(info, f"restart-key-seed-{i}", "--seed", "7")[0] for i in range(2)}
    assert len(seeded) == 1


def test_httpx_lines_are_left_out_and_the_relays_own_lines_stay(
    served: tuple[Any, dict[str, Any]],
) -> None:
    _, info = served
    _, err = _one_run(info, "quiet-key-0001")
    assert "HTTP Request:" not in err  # httpx's INFO line per request
    assert "delivered" in err
    assert info["desktop_token"] not in err


def test_url_credentials_are_masked_in_every_line(served: tuple[Any, dict[str, Any]]) -> None:
    from tests.relay.test_relay_cli import _exit, _spawn

    _, info = served
    url = info["relay_url"].replace("http://", "http://ops:hunter2pass@")
    stranger = "osf_a-desktop-token-this-server-never-issued"
    relay = _spawn(
        "relay",
        "--relay-url",
        url,
        "--desktop-token",
        stranger,
        "--project-id",
        info["project_id"],
    )
    code, err = _exit(relay)  # a token the server does not know: refused
    assert code == 2 and "refused: HTTP 401 from http://***@127.0.0.1:" in err
    assert "hunter2pass" not in err and stranger not in err


def test_an_error_line_masks_url_credentials() -> None:
    from tests.relay.test_relay_cli import _exit, _spawn

    relay = _spawn(
        "relay",
        "--relay-url",
        "http://ops:hunter2pass@127.0.0.1:9/",
        "--desktop-token",
        "desk-token-secret",
        "--project-id",
        "p",
    )
    code, err = _exit(relay)
    assert code == 2 and "cannot sync with http://***@127.0.0.1:9/" in err
    assert "hunter2pass" not in err and "desk-token-secret" not in err
