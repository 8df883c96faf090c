"""Leaving what a suite run keeps out of the garbage collector's full passes.

A run of the suite imports some 90 modules beyond pytest's own (the kit's server,
clients and checks, jsonschema's validators, MCP's schemas), and pytest then makes
one item per check. All of it lives until the process ends, yet each full pass of
CPython's cycle collector walks it again: the passes the interpreter triggers during
the run, the two pytest makes at its end to surface unraisable exceptions, and the
one at interpreter exit. :func:`freeze_collected` moves every object alive once the
checks are collected into the permanent generation (:func:`gc.freeze`), so those
passes walk only what the run itself creates.

It is a speed trick, kept because it pays on the path users wait for
(``benchmarks/bench_suite_floor.py --only embedded``; docs/choices.md, "The suite's
own cost"). What it costs: a
cycle of objects alive at that moment that becomes garbage later is not reclaimed
until the process ends (reference counting still frees everything else). A command
line run ends with the suite, so nothing is kept longer than it would live anyway;
a process that runs the suite in-process again and again (``pytester``'s
``runpytest``) keeps each earlier run's collection-time cycles. Nothing is
unfrozen: doing so before pytest's final passes gives the gain back.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_collected"]


def freeze_collected() -> int:
    """Freeze every object the collector tracks now; how many are frozen in all."""
    gc.freeze()
    return gc.get_freeze_count()
