"""The accounts file and the handout: one desktop per owner, agents in turn."""

from __future__ import annotations

import json
import os
import stat

import pytest

from pytest_osfoundry.load import Account, AccountsError, Target, read_target, write_target
from pytest_osfoundry.load._accounts import Handout


def _target(n: int = 2, agents: int = 2) -> Target:
    return Target(
        "http://127.0.0.1:1/mcp",
        "http://127.0.0.1:1",
        tuple(Account(f"proj_{i}", f"desk-secret-{i}",
                      tuple(f"agent-secret-{i}-{j}" for j in range(agents))) for i in range(n)),
    )


def test_written_file_reads_back_and_is_its_owners_alone(tmp_path) -> None:
    path = tmp_path / "accounts.json"
    path.write_text("old")
    os.chmod(path, 0o644)
    write_target(path, _target())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert read_target(path) == _target()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("mcp_url"), "mcp_url must be an http(s) URL"),
        (lambda d: d.update(relay_url="ftp://x"), "relay_url must be an http(s) URL"),
        (lambda d: d.update(accounts=[]), "accounts must be a non-empty list"),
        (lambda d: d["accounts"][1].update(project_id=""), "accounts[1]: project_id"),
        (lambda d: d["accounts"][0].update(agent_tokens=[]), "accounts[0]: agent_tokens"),
        (lambda d: d["accounts"][1].update(project_id="proj_0"), "listed twice"),
        (lambda d: d["accounts"][1].update(desktop_token="desk-secret-0"),
         "accounts[1]: its desktop_token is another account's too"),
    ],
)
def test_a_bad_file_is_refused_naming_the_entry_never_a_token(tmp_path, change, message) -> None:
    data = _target().to_dict()
    change(data)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data))
    with pytest.raises(AccountsError) as err:
        read_target(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)
    assert "secret" not in str(err.value)


@pytest.mark.parametrize("token", ["desk-secret-0\r\nX-Evil: 1", "desk-secret-0\n",
                                   "desk secret 0", "desk-secret-\u00e9", "desk-secret-\x00"])
@pytest.mark.parametrize("field", ["desktop_token", "agent_tokens"])
def test_a_token_a_header_cannot_carry_is_refused_never_echoed(tmp_path, token, field) -> None:
    data = _target().to_dict()
    data["accounts"][1][field] = token if field == "desktop_token" else ["ok-token-1", token]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data))
    with pytest.raises(AccountsError) as err:
        read_target(path)
    where = "desktop_token" if field == "desktop_token" else "agent_tokens[1]"
    assert f"accounts[1]: {where} holds a character an HTTP header cannot carry" in str(err.value)
    assert "secret" not in str(err.value)


@pytest.mark.parametrize("url", ["desk-secret-1", "http://127.0.0.1:1/mcp?token=desk-secret-1",
                                 "http://desk-secret-1@127.0.0.1:1/mcp",
                                 "http://127.0.0.1:1/agent-secret-0-1"])
@pytest.mark.parametrize("field", ["mcp_url", "relay_url"])
def test_a_token_in_a_url_field_is_refused_never_echoed(tmp_path, url, field) -> None:
    data = _target().to_dict()
    data[field] = url
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data))
    with pytest.raises(AccountsError) as err:
        read_target(path)
    assert field in str(err.value)
    assert "secret" not in str(err.value)


def test_unreadable_and_unparsable_files_are_named(tmp_path) -> None:
    with pytest.raises(AccountsError, match="cannot read it"):
        read_target(tmp_path / "missing.json")
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(AccountsError, match="not JSON"):
        read_target(tmp_path / "x.json")


def test_one_desktop_per_owner_then_none() -> None:
    handout = Handout(_target(3), desktops=2)
    assert [handout.desktop(), handout.desktop(), handout.desktop()] == [0, 1, None]


def test_agents_spread_over_the_desktops_owners_before_sharing_a_token() -> None:
    handout = Handout(_target(3, agents=2), desktops=2)
    assert [handout.agent() for _ in range(5)] == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 0)]


@pytest.mark.parametrize("desktops", [0, 4])
def test_more_desktops_than_owners_is_refused(desktops) -> None:
    with pytest.raises(AccountsError, match="one desktop per owner"):
        Handout(_target(3), desktops=desktops)


def test_an_accounts_repr_shows_no_token() -> None:
    assert "secret" not in repr(_target())
