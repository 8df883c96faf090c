"""UserClock: a real clock run by one greenlet, waiting on gevent's timer.

gevent never enters a pytest process: the clock runs in a subprocess of its own.
"""

from __future__ import annotations

import subprocess
import sys

from tests.load._runs import need_locust

SCRIPT = r"""
from gevent import monkey; monkey.patch_all()
import time, gevent
from pytest_osfoundry.load._clock import MAX_WAIT, UserClock

clock = UserClock()
seen = []

def process():
    for step in range(3):
        seen.append((step, clock.now()))
        yield 0.02
        clock.call_later(0.01, lambda: seen.append(("timer", clock.now())))

begun = clock.now()
clock.spawn(process(), "p")
clock.run(until=lambda: len(seen) >= 6)
steps = [s for s, _ in seen]
assert steps == [0, 1, "timer", 2, "timer", "timer"], steps
times = [t for _, t in seen]
assert times == sorted(times), times
assert seen[3][1] - begun >= 0.04, seen  # two 0.02 s yields before step 2

# A stop from another greenlet ends a run with nothing scheduled (its waits are at most
# MAX_WAIT long, so the stop is seen), and is used up when run returns.
assert MAX_WAIT > 0
stopper = gevent.spawn_later(0.05, clock.stop)
t0 = time.monotonic()
clock.run()
assert time.monotonic() - t0 >= 0.04
clock.stop()
clock.run()  # a stop before run: returns at once
print("ok")
"""


def test_user_clock_runs_events_in_order_and_sees_a_stop_from_another_greenlet() -> None:
    need_locust()
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
