"""The accounts file is written through a new file renamed into place, never through a
link (issue 42 item 11): ``--accounts-file link.json`` used to truncate, overwrite and
chmod 0600 the link's target (a dangling link created it)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from pytest_osfoundry.load import Account, Target, read_target, write_target
from tests.server.test_server_cli import first_line, spawn, stop

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and modes")


def _target() -> Target:
    return Target("http://127.0.0.1:1/mcp", "http://127.0.0.1:1",
                  (Account("proj_0", "desk-secret-0", ("agent-secret-0",)),))


def _written_in_place(path: Path) -> None:
    """``path`` is a plain file of its owner's alone holding the target, with nothing
    else left in its folder but what the test put there."""
    assert not path.is_symlink() and path.is_file()
    assert stat.S_IMODE(path.lstat().st_mode) == 0o600
    assert read_target(path) == _target()
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_an_existing_link_is_replaced_and_its_target_left_alone(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    os.chmod(victim, 0o644)
    link = tmp_path / "link.json"
    link.symlink_to(victim)
    write_target(link, _target())
    assert victim.read_text() == "keep me\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644
    _written_in_place(link)


def test_a_dangling_link_is_replaced_and_its_target_not_created(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "nowhere.json")
    write_target(link, _target())
    assert not (tmp_path / "nowhere.json").exists()
    _written_in_place(link)


def test_a_hard_link_is_replaced_and_the_other_name_keeps_its_bytes(tmp_path: Path) -> None:
    other = tmp_path / "other.txt"
    other.write_text("shared\n")
    path = tmp_path / "accounts.json"
    os.link(other, path)
    write_target(path, _target())
    assert other.read_text() == "shared\n"
    _written_in_place(path)


def test_a_folder_that_cannot_take_it_leaves_nothing_behind(tmp_path: Path) -> None:
    folder = tmp_path / "accounts.json"
    folder.mkdir()  # a folder where the file would go: the rename fails
    with pytest.raises(OSError):
        write_target(folder, _target())
    assert [p.name for p in tmp_path.iterdir()] == ["accounts.json"]


def test_serve_writes_through_no_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "link.json"
    link.symlink_to(victim)
    proc = spawn("--accounts", "1", "--accounts-file", str(link))
    try:
        line = json.loads(first_line(proc))
    finally:
        stop(proc)
    assert line["accounts_file"] == str(link)
    assert victim.read_text() == "keep me\n"
    assert not link.is_symlink() and stat.S_IMODE(link.stat().st_mode) == 0o600
    assert len(read_target(link).accounts) == 1
