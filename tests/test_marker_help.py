"""The ``osf`` marker's help names every WorldConfig field (it is drawn from them)."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_osfoundry._marker import _fields_from_source, osf_marker_help, world_config_fields
from pytest_osfoundry.world import WorldConfig


def test_the_fields_read_from_source_are_the_dataclass_fields() -> None:
    assert world_config_fields() == tuple(f.name for f in dataclasses.fields(WorldConfig))


def test_the_help_names_every_field_the_fixture_options_included() -> None:
    text = osf_marker_help()
    listed = text.split("any WorldConfig field: ", 1)[1].rstrip(")")
    assert listed.split(", ") == [f.name for f in dataclasses.fields(WorldConfig)]
    for option in ("patch_sleep", "virtual_loop", "stall_after", "stall_timeout"):
        assert option in listed.split(", ")


def test_the_source_reader_follows_the_class() -> None:
    source = "class WorldConfig:\n    a: int = 0\n    _private: int = 1\n    b: str\n    c = 3\n"
    assert _fields_from_source(source) == ("a", "b")
    assert _fields_from_source("class Other:\n    a: int\n") is None


def test_pytest_markers_prints_the_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    line = next(ln for ln in result.outlines if ln.startswith("@pytest.mark.osf("))
    for field in world_config_fields():
        assert field in line
