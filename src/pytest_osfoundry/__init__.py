"""pytest-osfoundry: a pytest plugin and conformance kit for osFoundry-style Connected Graph runs.

An agent queues a Graph run over MCP tools, the owner's desktop pulls it with a 20 s
poll, runs it and posts a bounded result back. This package fakes every part of that
round trip on a virtual clock, and checks any implementation against the spec.
"""

__version__ = "0.1.0"
SPEC_REVISION = "2026-11-08"

__all__ = ["SPEC_REVISION", "__version__"]
