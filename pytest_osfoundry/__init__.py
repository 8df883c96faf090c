"""pytest-osfoundry: a pytest plugin and conformance kit for osFoundry-style Connected Graph runs.

An agent queues a Graph run over MCP tools, the owner's desktop pulls it with a 20 s
poll, runs it and posts a bounded result back. This package fakes every part of that
round trip on a virtual clock, and checks any implementation against the spec.

The handful of names most users need are importable from here (loaded on first use):
:class:`OsfWorld`, :class:`WorldConfig`, :class:`ReferenceServer`,
:class:`LoopbackServer`, :class:`VirtualClock`, :class:`ScriptedAgent`,
:class:`FakeRelay`, :class:`FakeEngine`, :class:`Graph`, :class:`McpClient`.
"""

from __future__ import annotations

import importlib
from typing import Any

from pytest_osfoundry._vocabulary import SPEC_REVISION
from pytest_osfoundry._vocabulary import VERSION as __version__

_LAZY = {
    "OsfWorld": "pytest_osfoundry.world",
    "WorldConfig": "pytest_osfoundry.world",
    "ReferenceServer": "pytest_osfoundry.server",
    "LoopbackServer": "pytest_osfoundry.server",
    "VirtualClock": "pytest_osfoundry.clock",
    "ScriptedAgent": "pytest_osfoundry.agent",
    "FakeRelay": "pytest_osfoundry.relay",
    "FakeEngine": "pytest_osfoundry.engine",
    "Graph": "pytest_osfoundry.engine",
    "McpClient": "pytest_osfoundry.client",
}

__all__ = ["SPEC_REVISION", "__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_osfoundry' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
