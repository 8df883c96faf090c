"""``osfoundry-load``: Locust with the kit's agents and desktops, and the accounting.

It runs Locust's own command line on :mod:`pytest_osfoundry.load.locustfile`, so every
Locust option works as Locust documents it, and returns the accounting's exit status
(:data:`~pytest_osfoundry.load._accounting.EXIT`: 0 green, 1 red, 3 not valid; 2 for
a command line or accounts file it cannot use) instead of Locust's. A worker
(``--worker``) returns Locust's. Nothing here may run with freezegun active.
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

    from pytest_osfoundry.load import _coordination
    from pytest_osfoundry.load._health import FrozenTime, refuse_frozen_time

    try:
        refuse_frozen_time()
    except FrozenTime as err:
        print(f"osfoundry-load: {err}", file=sys.stderr)
        return 2
    args = list(sys.argv[1:] if argv is None else argv)
    locustfile = str(Path(__file__).with_name("locustfile.py"))
    sys.argv = ["osfoundry-load", "-f", locustfile, *args]

    try:
        locust.main.main()
    except SystemExit as done:
        code = done.code
        if _coordination.verdict:
            return _coordination.verdict[-1].exit_status
        if isinstance(code, str):
            print(code, file=sys.stderr)
            return 2
        return int(code or 0)
    return _coordination.verdict[-1].exit_status if _coordination.verdict else 0


if __name__ == "__main__":  # pragma: no cover - the console script calls main()
    sys.exit(main())
