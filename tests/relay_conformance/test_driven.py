"""The kit's driven relay (``python -m pytest_osfoundry.relay.driven``): its environment,
its reading of the driver's sharing, and its lost-start retry."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_osfoundry.client._errors import HttpStatusError, OsfClientError, ReplyLost
from pytest_osfoundry.relay._driver_seams import DriverError
from pytest_osfoundry.relay.driven import EnvError, StartRetrying, read_env, shares_from

BASE = {
    "OSF_RELAY_URL": "http://127.0.0.1:1",
    "OSF_DESKTOP_TOKEN": "tok_desktop_0123456789",
    "OSF_RELAY_DRIVER": "http://127.0.0.1:2/s/x",
    "OSF_RELAY_STATE_DIR": "/tmp",
}


def test_read_env_defaults_to_the_production_cadence():
    env = read_env(BASE)
    assert (env["OSF_RELAY_INTERVAL"], env["OSF_RELAY_CONTROL_POLL"]) == (20.0, 3.0)
    scaled = read_env({**BASE, "OSF_RELAY_INTERVAL": "1", "OSF_RELAY_CONTROL_POLL": "0.15"})
    assert (scaled["OSF_RELAY_INTERVAL"], scaled["OSF_RELAY_CONTROL_POLL"]) == (1.0, 0.15)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"OSF_RELAY_DRIVER": ""}, "OSF_RELAY_DRIVER is not set"),
        ({"OSF_RELAY_INTERVAL": "soon"}, "OSF_RELAY_INTERVAL must be a number"),
        ({"OSF_RELAY_CONTROL_POLL": "0"}, "OSF_RELAY_CONTROL_POLL must be positive"),
    ],
)
def test_read_env_names_the_bad_variable(change, named):
    with pytest.raises(EnvError, match=named):
        read_env({**BASE, **change})


def test_the_command_refuses_a_bad_environment_in_one_line_without_the_token():
    env = {"PATH": "/usr/bin:/bin", **BASE, "OSF_RELAY_INTERVAL": "-1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_osfoundry.relay.driven"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "OSF_RELAY_INTERVAL must be positive" in done.stderr
    assert "Traceback" not in done.stderr and BASE["OSF_DESKTOP_TOKEN"] not in done.stderr


def test_shares_from_keeps_ticked_sessions_in_order_without_the_ticked_field():
    session = {"name": "n", "description": "d", "version": 1, "status": "active"}
    sharing = {
        "revision": 3,
        "projects": [
            {
                "project_id": "p1",
                "enabled": True,
                "sessions": [
                    {**session, "graph_session_id": "gs_b", "slug": "b", "ticked": True},
                    {**session, "graph_session_id": "gs_a", "slug": "a", "ticked": False},
                    {**session, "graph_session_id": "gs_c", "slug": "c", "ticked": True},
                ],
            },
            {"project_id": "p2", "enabled": False, "sessions": []},
        ],
    }
    shares = shares_from(sharing)
    assert list(shares["p1"].sessions) == ["gs_b", "gs_c"]
    assert "ticked" not in shares["p1"].sessions["gs_b"]
    assert shares["p2"].enabled is False
    with pytest.raises(DriverError, match="project_id"):
        shares_from({"projects": [{"enabled": True}]})


class _LosingStarts:
    def __init__(self, losses: int, error: OsfClientError | None = None) -> None:
        self.losses = losses
        self.error = error or ReplyLost("no reply")
        self.calls: list[tuple[str, str]] = []

    def start(self, command_id: str, execution_id: str) -> str:
        self.calls.append((command_id, execution_id))
        if len(self.calls) <= self.losses:
            raise self.error
        return "running"


def _status(code: int) -> HttpStatusError:
    return HttpStatusError(code, {}, b"{}", url="http://127.0.0.1/start")


def test_a_lost_start_is_asked_again_with_the_same_execution_id():
    inner = _LosingStarts(losses=2)
    client = StartRetrying(inner)  # type: ignore[arg-type]
    assert client.start("c1", "exec_1") == "running"
    assert inner.calls == [("c1", "exec_1")] * 3
    with pytest.raises(ReplyLost):
        StartRetrying(_LosingStarts(losses=3)).start("c1", "exec_1")  # type: ignore[arg-type]


def test_a_start_answered_5xx_is_asked_again_a_refusal_is_not():
    """A 5xx may hide an applied start, as a lost reply does; a 401 is the token refused
    (R15: nothing more this pass), a 404 or 409 a final answer."""
    answered = _LosingStarts(losses=2, error=_status(503))
    assert StartRetrying(answered).start("c1", "exec_1") == "running"  # type: ignore[arg-type]
    assert len(answered.calls) == 3
    for code in (401, 403, 404, 409):
        refused = _LosingStarts(losses=1, error=_status(code))
        with pytest.raises(HttpStatusError):
            StartRetrying(refused).start("c1", "exec_1")  # type: ignore[arg-type]
        assert len(refused.calls) == 1, code
