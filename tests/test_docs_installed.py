"""What ``pytest --help`` points a reader at exists in every install: a wheel holds no
``docs/`` or ``benchmarks/``, so the options' help names no file, only modules an
install can import (issue 34, item 9). The wheel's own ``--help`` and report are
checked from an installed wheel in ``tests/test_layout.py``."""

from __future__ import annotations

import importlib.util
import re

import pytest

from pytest_osfoundry.conformance.suite._options import OPTIONS

_PATH = re.compile(
    r"(?<![\w.:/])(?:[a-z_][\w.-]*/)+"
    r"(?:[\w-]+\.(?:md|py|toml|json|txt|ya?ml|sh|m?js|cts)\b|(?!\w))"
)
"""A file or folder path: ``docs/x.md``, ``benchmarks/``, ``a/b/c.py`` (not ``HTTP/1.1``)."""
_MODULE = re.compile(r"\bpytest_osfoundry(?:\.\w+)+")


def help_problems(text: str) -> tuple[list[str], list[str]]:
    """The file paths ``text`` names (none may be named) and the modules it names (each
    must be importable where the help is read)."""
    paths = _PATH.findall(text)
    return paths, sorted(set(_MODULE.findall(text)))


def test_the_options_help_names_no_file_and_only_importable_modules() -> None:
    text = " ".join(spec.help for spec in OPTIONS)
    paths, modules = help_problems(text)
    assert paths == [], "a path a wheel may not hold, named by --help"
    assert "pytest_osfoundry.relay.driven" in modules
    assert all(importlib.util.find_spec(m) is not None for m in modules), modules


@pytest.mark.parametrize(
    "text",
    ["see docs/relay-conformance.md", "chosen by benchmarks/bench_latency.py", "the a/b/ folder"],
)
def test_a_named_file_is_found(text: str) -> None:
    assert help_problems(text)[0]


@pytest.mark.parametrize(
    "text", ["HTTP/1.1 over sockets", "http://127.0.0.1:8080/mcp", "URL|embedded", "true/false"]
)
def test_what_is_not_a_file_is_not_named_one(text: str) -> None:
    assert help_problems(text)[0] == []
