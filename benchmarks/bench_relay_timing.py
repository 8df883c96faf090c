"""The relay suite's timing checks, measured: no false failure, every mutant caught.

Runs each timing check ``--runs`` times (default 20) against the kit's reference
relay (``embedded``) and against the cadence mutant it is meant to catch
(``tests/relay_conformance/broken.py``), ``--workers`` relays at once (default 8, as
the suite runs them: the machine is as loaded as in a real run), and prints one line
per pair: how many runs failed. The goal: 0 failures against the reference relay,
every run failing against the mutant. Exit status 1 when the goal is missed.

Run it from the repository root (the mutants are modules of ``tests/``)::

    python benchmarks/bench_relay_timing.py [--runs 20] [--workers 8]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from pytest_osfoundry.conformance.relay import RelaySuite
from pytest_osfoundry.conformance.suite._expect import CheckFailure
from pytest_osfoundry.conformance.suite._registry import find_check

#: Each timing check and the mutant meant to fail it.
PAIRS = {
    "D11-relay-cadence": "ignores-interval",
    "D11-relay-sharing-pass": "no-sharing-pass",
    "D11-relay-busy-skip": "overlapping-passes",
    "D14-relay-control-cadence": "ignores-control-poll",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of each pair (default 20)")
    parser.add_argument("--workers", type=int, default=8, help="relays at once (default 8)")
    args = parser.parse_args(argv)
    suite = RelaySuite("embedded")
    failures: Counter[tuple[str, str]] = Counter()
    messages: dict[tuple[str, str], str] = {}

    def one(job: tuple[str, str]) -> None:
        check_id, relay = job
        conf = suite.context(check_id)
        if relay != "embedded":
            conf.argv = [sys.executable, "-m", "tests.relay_conformance.broken", relay]
        try:
            find_check(check_id)(conf)
        except CheckFailure as err:
            failures[job] += 1
            messages.setdefault(job, str(err).splitlines()[0])
        finally:
            conf.close()

    jobs = [
        (check_id, relay)
        for _ in range(args.runs)
        for check_id, mutant in PAIRS.items()
        for relay in ("embedded", mutant)
    ]
    began = time.perf_counter()
    try:
        with ThreadPoolExecutor(args.workers) as pool:
            list(pool.map(one, jobs))
    finally:
        suite.close()
    ok = True
    print(f"{len(jobs)} check runs, {args.workers} at once, in {time.perf_counter() - began:.0f} s")
    for check_id, mutant in PAIRS.items():
        false = failures[(check_id, "embedded")]
        caught = failures[(check_id, mutant)]
        ok = ok and false == 0 and caught == args.runs
        print(
            f"{check_id:28} reference relay: {false:2}/{args.runs} failed   "
            f"{mutant:22}: {caught:2}/{args.runs} caught"
        )
        if false:
            print(f"    a false failure: {messages[(check_id, 'embedded')]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
