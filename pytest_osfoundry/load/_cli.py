"""``osfoundry-load``: Locust with the kit's agents and desktops, and the accounting.

It runs Locust's own command line on ``load/locustfile.py``, so every
Locust option works as Locust documents it, and returns the accounting's exit status
(:data:`~pytest_osfoundry.load._accounting.EXIT`: 0 green, 1 red, 3 not valid; 2 for
a command line, an accounts file or a preflight it cannot use; 130 for an interrupt
before the load started) instead of Locust's. A worker (``--worker``) returns
Locust's. Nothing here may run with freezegun active.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``osfoundry-load`` with ``argv`` (default: the process's); the exit status."""
    # Locust patches the process for gevent when imported: before any of the kit's
    # clients, clocks and locks exist, never in a process that did not ask for it.
    import locust.main

    from pytest_osfoundry._process_time import FrozenTime, refuse_frozen_time
    from pytest_osfoundry.load import _coordination

    try:
        refuse_frozen_time()
    except FrozenTime as err:
        print(f"osfoundry-load: {err}", file=sys.stderr)
        return 2
    args = list(sys.argv[1:] if argv is None else argv)
    if "-h" in args or "--help" in args:
        _own_help()
    locustfile = str(Path(__file__).with_name("locustfile.py"))
    sys.argv = ["osfoundry-load", "-f", locustfile, *args]

    try:
        locust.main.main()
    except KeyboardInterrupt:
        # Before the load started (the preflight, a master waiting for its workers):
        # once it runs, the load takes its interrupts itself (_coordination).
        print("osfoundry-load: interrupted before the load started: nothing to judge",
              file=sys.stderr)
        return 130
    except SystemExit as done:
        code = done.code
        if _coordination.verdict:
            return _coordination.verdict[-1].exit_status
        if isinstance(code, str):
            print(code, file=sys.stderr)
            return 2
        return int(code or 0)
    return _coordination.verdict[-1].exit_status if _coordination.verdict else 0


def _own_help() -> None:
    """Print the load's options; Locust's own help follows (its ``--help`` ignores the
    locustfile's options)."""
    import argparse

    from pytest_osfoundry.load._options import add_options

    parser = argparse.ArgumentParser(
        prog="osfoundry-load",
        usage="osfoundry-load [osfoundry-load options] [Locust options]",
        description="Locust with the kit's agents and desktops against an osFoundry server, "
        "then an accounting of every run (docs/load.md). Exit status: 0 green, 1 red (a run "
        "lost, duplicated or executed twice, a token or URL refused, the server gone), 2 usage "
        "or a failed preflight, 3 not valid (interrupted, or the load generator could not keep "
        "up). Every Locust option below works as Locust documents it.",
        add_help=False,
    )
    add_options(parser)
    parser.print_help()
    print("\nLocust's options:\n")
    sys.stdout.flush()


if __name__ == "__main__":  # pragma: no cover - the console script calls main()
    sys.exit(main())
