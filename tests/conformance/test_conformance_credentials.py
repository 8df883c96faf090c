"""``--osf-credentials``: every credential at once, from the JSON line a server printed.

``osfoundry-fake serve`` and the SDK examples print one JSON line whose keys are the
suite's option names; the option reads that line from a file and fills each
credential not given otherwise (the command line, then ``OSF_...``, win). A file that
cannot serve is refused with one line naming it and what is wrong, never quoting a
value. The documented commands that use it run in
``test_conformance_sdk_servers.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_osfoundry.conformance.suite._options import CREDENTIAL_KEYS, OPTIONS, Settings

SECRET = "tok-4f1b9c"
LINE = {
    "mcp_url": "http://127.0.0.1:41234/mcp",
    "relay_url": "http://127.0.0.1:41234",
    "project_id": "proj_1",
    "agent_token": SECRET,
    "other_agent_token": "tok-other",
    "read_token": "tok-read",
    "desktop_token": "tok-desk",
    "stranger_token": "tok-stranger",
    "stranger_desktop_token": "tok-stranger-desk",
    "stranger_project_id": "proj_2",
}


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "server.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_each_credential_key_is_an_option_name() -> None:
    flags = {spec.flag for spec in OPTIONS}
    assert {"--osf-" + key.replace("_", "-") for key in CREDENTIAL_KEYS} <= flags


def test_the_line_serve_prints_fills_every_credential(tmp_path: Path) -> None:
    path = _file(tmp_path, json.dumps(LINE) + "\n")
    settings = Settings.from_values({"osf_credentials": path}, {})
    for key in CREDENTIAL_KEYS:
        assert getattr(settings, f"osf_{key}") == LINE[key]
    assert settings.osf_target is None, "the target is named by --osf-target alone"
    assert settings.osf_relay_url is None
    assert SECRET in settings.secrets() and SECRET not in repr(settings)


def test_the_command_line_and_the_environment_win_over_the_file(tmp_path: Path) -> None:
    path = _file(tmp_path, json.dumps(LINE))
    env = {"OSF_CREDENTIALS": path, "OSF_READ_TOKEN": "from-env"}
    settings = Settings.from_values({"osf_agent_token": "from-cli"}, env)
    assert settings.osf_agent_token == "from-cli"
    assert settings.osf_read_token == "from-env"
    assert settings.osf_desktop_token == LINE["desktop_token"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "cannot be read"),
        ("", "is empty: has the server written its JSON line there yet"),
        ("\n", "is empty"),
        ('{"agent_token": "' + SECRET, "is not one JSON object \\(line 1"),
        (json.dumps(LINE) + "\n" + json.dumps(LINE), "is not one JSON object \\(line 2"),
        (json.dumps([LINE]), "is not a JSON object"),
        (json.dumps({"url": "http://x/mcp", "token": SECRET}), "holds none of agent_token"),
        (json.dumps({**LINE, "agent_token": 7}), "agent_token must be a non-empty text"),
        (json.dumps({**LINE, "read_token": " "}), "read_token must be a non-empty text"),
    ],
    ids=["missing", "empty", "blank", "cut", "two-lines", "list", "no-key", "number", "space"],
)
def test_a_file_that_cannot_serve_is_one_line(
    tmp_path: Path, text: str | None, message: str
) -> None:
    path = str(tmp_path / "absent.json") if text is None else _file(tmp_path, text)
    with pytest.raises(
        pytest.UsageError, match=f"^--osf-credentials: {re.escape(path)}.*{message}"
    ) as err:
        Settings.from_values({"osf_credentials": path}, {})
    assert "\n" not in str(err.value) and SECRET not in str(err.value)
