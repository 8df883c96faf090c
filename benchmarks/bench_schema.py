"""What validating against MCP's schema costs, with and without the fast check.

Run ``python benchmarks/bench_schema.py`` (``--json`` for one machine-readable line).
Every request the reference server takes and every answer the conformance suite
reads is validated against MCP's schema (:mod:`pytest_osfoundry._mcp_schema`);
``jsonschema-rs`` passes the valid ones and ``jsonschema`` judges the rest. Three
paired measurements in this one invocation (A B A B ..., medians of the pairs'
ratios), the fast check off (``jsonschema`` alone) against on:

* **per message**: the messages one scripted-agent run validates, recorded once,
  each validated 200 times (microseconds a message);
* **scripted agent**: one whole run of the fixtures' world (server, relay, engine) with
  the kit's synchronous agent, a 60 s Graph, polls every 10 s (the path a fixture
  user's test takes);
* **embedded suite**: ``python -m pytest --osf-target=embedded`` as a whole process; the
  off runs load a plugin that turns the fast check off.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_osfoundry import _mcp_schema
from pytest_osfoundry.agent import wait_then_every
from pytest_osfoundry.engine import Fixed, Graph
from pytest_osfoundry.world import OsfWorld, WorldConfig

_REAL_FAST = _mcp_schema.fast_check
_OFF_PLUGIN = (
    "from pytest_osfoundry import _mcp_schema\n"
    "_mcp_schema.fast_check = lambda revision, definition: None\n"
)


def _switch(on: bool) -> None:
    """The fast check on (the kit's default) or off (jsonschema alone), in this process."""
    _mcp_schema.fast_check = _REAL_FAST if on else (lambda revision, definition: None)  # type: ignore[assignment]


def agent_run() -> float:
    """Wall seconds of one scripted-agent run of the fixtures' world."""
    start = time.perf_counter()
    world = OsfWorld(WorldConfig(seed=7, graph=Graph(duration=Fixed(60))))
    run = world.make_agent(strategy=wait_then_every(20, 10)).run(world.sessions[0].graph_session_id)
    assert run.status == "completed"
    return time.perf_counter() - start


def recorded_messages() -> list[tuple[str, str, Any]]:
    """The (revision, definition, message) triples one scripted-agent run validates
    (recorded with the fast check off, so that every message reaches ``jsonschema``)."""
    messages: list[tuple[str, str, Any]] = []
    real_validator = _mcp_schema.validator

    def keeping(revision: str, definition: str) -> Any:
        inner = real_validator(revision, definition)

        class Keeper:
            def iter_errors(self, message: Any) -> Any:
                messages.append((revision, definition, message))
                return inner.iter_errors(message)

        return Keeper()

    _switch(False)
    _mcp_schema.validator = keeping  # type: ignore[assignment]
    try:
        agent_run()
    finally:
        _mcp_schema.validator = real_validator
        _switch(True)
    return messages


def per_message(messages: list[tuple[str, str, Any]], repeat: int = 200) -> float:
    """Microseconds :func:`first_violation` takes per message, over ``repeat`` rounds."""
    start = time.perf_counter()
    for _ in range(repeat):
        for revision, definition, message in messages:
            _mcp_schema.first_violation(revision, definition, message)
    return (time.perf_counter() - start) / (repeat * len(messages)) * 1e6


def suite_run(plugin_dir: str | None) -> float:
    """Wall seconds of one embedded suite run (``plugin_dir``: the fast check off)."""
    env = dict(os.environ)
    args = [sys.executable, "-m", "pytest", "--osf-target=embedded", "-q", "-p", "no:cacheprovider"]
    if plugin_dir is not None:
        env["PYTHONPATH"] = plugin_dir + os.pathsep + env.get("PYTHONPATH", "")
        args += ["-p", "osf_bench_schema_off"]
    with tempfile.TemporaryDirectory(prefix="osf-bench-schema-") as folder:
        start = time.perf_counter()
        done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit("the embedded suite failed")
    return wall


def _ratios(pairs: int, off: Any, on: Any) -> tuple[float, float, float]:
    offs, ons = [], []
    for _ in range(pairs):
        _switch(False)
        offs.append(off())
        _switch(True)
        ons.append(on())
    ratio = statistics.median(a / b for a, b in zip(offs, ons, strict=True))
    return statistics.median(offs), statistics.median(ons), ratio


def measure(pairs: int, suite_pairs: int) -> dict[str, Any]:
    """All three paired measurements; medians."""
    if _mcp_schema.fast_check("2025-11-25", "JSONRPCRequest") is None:
        raise SystemExit("jsonschema-rs is not importable: nothing to compare")
    messages = recorded_messages()
    agent_run(), per_message(messages, 5)  # warm-up: imports, compiled validators
    _switch(False)
    agent_run(), per_message(messages, 5)
    _switch(True)
    m_off, m_on, m_ratio = _ratios(
        pairs, lambda: per_message(messages), lambda: per_message(messages)
    )
    a_off, a_on, a_ratio = _ratios(pairs * 4, agent_run, agent_run)
    figures: dict[str, Any] = {
        "messages_per_agent_run": len(messages),
        "per_message_us_off": round(m_off, 1),
        "per_message_us_on": round(m_on, 2),
        "per_message_off_over_on": round(m_ratio, 1),
        "agent_run_ms_off": round(a_off * 1000, 2),
        "agent_run_ms_on": round(a_on * 1000, 2),
        "agent_run_off_over_on": round(a_ratio, 2),
    }
    if suite_pairs:
        with tempfile.TemporaryDirectory(prefix="osf-bench-schema-plugin-") as plugin_dir:
            Path(plugin_dir, "osf_bench_schema_off.py").write_text(_OFF_PLUGIN, encoding="utf-8")
            suite_run(None)  # warm-up
            s_off, s_on = [], []
            for _ in range(suite_pairs):
                s_off.append(suite_run(plugin_dir))
                s_on.append(suite_run(None))
        figures["suite_wall_s_off"] = round(statistics.median(s_off), 3)
        figures["suite_wall_s_on"] = round(statistics.median(s_on), 3)
        figures["suite_off_minus_on_s"] = round(
            statistics.median(a - b for a, b in zip(s_off, s_on, strict=True)), 3
        )
    return figures


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5, help="pairs of each kind (default 5)")
    parser.add_argument(
        "--suite-pairs", type=int, default=5, help="pairs of whole suite runs (0: skip them)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args()
    if args.pairs < 1 or args.suite_pairs < 0:
        parser.error("--pairs must be at least 1 and --suite-pairs at least 0")
    figures = measure(args.pairs, args.suite_pairs)
    if args.json:
        print(json.dumps(figures))
        return 0
    for name, value in figures.items():
        print(f"{name:28s} {value:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
