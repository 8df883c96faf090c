"""pytest-osfoundry: a pytest plugin and conformance kit for osFoundry-style Connected Graph runs.

An agent queues a Graph run over MCP tools, the owner's desktop pulls it with a 20 s
poll, runs it and posts a bounded result back. This package fakes every part of that
round trip on a virtual clock, and checks any implementation against the spec.

pytest imports this package in every run of a project that installs the kit, so the
top level holds only :data:`__version__` and :data:`SPEC_REVISION`. The components
are imported from their subpackages: :mod:`pytest_osfoundry.world` (``OsfWorld``,
``WorldConfig``), :mod:`~pytest_osfoundry.server` (``ReferenceServer``,
``LoopbackServer``, ``mount``), :mod:`~pytest_osfoundry.clock` (``VirtualClock``),
:mod:`~pytest_osfoundry.agent` (``ScriptedAgent``), :mod:`~pytest_osfoundry.relay`
(``FakeRelay``), :mod:`~pytest_osfoundry.engine` (``FakeEngine``, ``Graph``),
:mod:`~pytest_osfoundry.client` (``McpClient``).
"""

from __future__ import annotations

from pytest_osfoundry._vocabulary import SPEC_REVISION
from pytest_osfoundry._vocabulary import VERSION as __version__

__all__ = ["SPEC_REVISION", "__version__"]
