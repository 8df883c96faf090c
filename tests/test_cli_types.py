"""One set of argparse types for every command line, refusing in one style."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import pytest

from pytest_osfoundry import _cli_types as types
from pytest_osfoundry._cli import build_parser
from pytest_osfoundry.sim._cli import build_parser as sim_parser


@pytest.mark.parametrize(
    ("parse", "text", "value"),
    [
        (types.number, "1e3", 1000.0),
        (types.number, "-0.5", -0.5),
        (types.positive_int, "3", 3),
        (types.positive_seconds, "0.25", 0.25),
        (types.bounded_seconds(60), "0", 0.0),
        (types.bounded_seconds(60), "60", 60.0),
        (types.session_count, "0", 0),
        (types.session_count, "100", 100),
        (types.port, "0", 0),
        (types.port, "65535", 65535),
        (types.mcp_path, "/mcp", "/mcp"),
    ],
)
def test_good_text_is_read(parse: Callable[[str], Any], text: str, value: Any) -> None:
    assert parse(text) == value


@pytest.mark.parametrize(
    ("parse", "text", "what"),
    [
        (types.number, "abc", "a number"),
        (types.positive_int, "0", "a positive integer"),
        (types.positive_int, "1.5", "a positive integer"),
        (types.positive_seconds, "0", "a positive number of seconds"),
        (types.positive_seconds, "inf", "a positive number of seconds"),
        (types.positive_seconds, "x", "a positive number of seconds"),
        (types.bounded_seconds(60), "61", "a number of seconds from 0 to 60"),
        (types.bounded_seconds(60), "nan", "a number of seconds from 0 to 60"),
        (types.session_count, "101", "a whole number from 0 to 100"),
        (types.session_count, "-1", "a whole number from 0 to 100"),
        (types.port, "70000", "a port number from 0 to 65535"),
        (types.port, "http", "a port number from 0 to 65535"),
        (types.mcp_path, "mcp", "a path starting with '/'"),
    ],
)
def test_bad_text_is_refused_in_one_style(
    parse: Callable[[str], Any], text: str, what: str
) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as err:
        parse(text)
    message = str(err.value)
    assert message.startswith(f"expected {what}") and message.endswith(f", got {text!r}")


def _types_of(parser: argparse.ArgumentParser) -> set[Any]:
    found = set()
    for action in parser._actions:
        if action.type is not None:
            found.add(action.type)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _types_of(sub)
    return found


def test_every_command_line_takes_its_types_from_the_one_module() -> None:
    for parser in (build_parser(), sim_parser()):
        kinds = _types_of(parser)
        assert len(kinds) >= 3
        for kind in kinds:
            module = getattr(kind, "__module__", "")
            assert kind in (int, str) or module == types.__name__, kind
