"""What osfoundry-load costs, whether one process keeps up with many desktops, and what
the reference server holds as a load target.

    python benchmarks/bench_load.py [--pairs 3] [--seconds 15]      # cost and capacity
    python benchmarks/bench_load.py --desktops 1000 [--agents 50] [--seconds 120]

Cost (the default): paired runs, kit then plain, against one ``osfoundry-fake serve
--accounts``: **kit** is the load's own users (the kit's agents and desktops, through
Locust, at a time scale fast enough to keep the process busy); **plain** is Locust
users sending the same kind of pre-built requests through the same statistics
transport and wire (``plain_load.py``). Each run's process CPU seconds and
requests between the end of spawning and the start of stopping give requests per
CPU second; the ratio kit/plain is the load generator's cost per request (aim: at
least 0.75). The server's CPU seconds over the same span give its requests per CPU
second: its capacity on one core.

``--desktops N``: one process drives N desktops (and ``--agents`` agents) at real time
(20 s passes) against ``serve --accounts N`` for ``--seconds``: printed are the
accounting's verdict ("not valid" if the process could not keep up), its timers'
worst lateness, and the process's share of one core.

Every process runs on loopback; each run is bounded in time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PLAIN = HERE / "plain_load.py"


def _serve(folder: Path, accounts: int, agents: int) -> tuple[subprocess.Popen[bytes], Path]:
    path = folder / "accounts.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_osfoundry", "serve", "--accounts", str(accounts),
         "--agents-per-account", str(agents), "--accounts-file", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    json.loads(proc.stdout.readline())
    return proc, path


def _locustfile() -> str:
    from pytest_osfoundry.load import __file__ as package

    return str(Path(package).with_name("locustfile.py"))


def _run(kind: str, folder: Path, target: Path, server: int, seconds: int,
         agents: int, desktops: int) -> dict[str, float]:
    meter = folder / f"meter-{kind}.json"
    meter.unlink(missing_ok=True)
    env = dict(os.environ, OSF_BENCH_METER=str(meter), OSF_BENCH_SERVER_PID=str(server),
               OSF_BENCH_TARGET=str(target))
    common = ["--headless", "--only-summary", "--loglevel", "ERROR", "-t", f"{seconds}s"]
    if kind == "kit":
        cmd = [sys.executable, "-m", "locust", "-f", f"{_locustfile()},{PLAIN}", *common,
               "--target", str(target), "--desktops", str(desktops), "--agents", str(agents),
               "--time-scale", "0.002", "--strategy", "every 5 s", "--lost-replies", "0",
               "--drain", "2000", "AgentUser", "DesktopUser"]
    else:
        users = str(agents + desktops)
        env["OSF_BENCH_PLAIN_SPLIT"] = f"{agents},{desktops}"
        cmd = [sys.executable, "-m", "locust", "-f", str(PLAIN), *common, "-u", users,
               "-r", users, "PlainAgent", "PlainDesktop"]
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=seconds + 120, check=False)
    figures: dict[str, float] = json.loads(meter.read_text())
    return figures


def cost(pairs: int, seconds: int, agents: int, desktops: int) -> dict[str, Any]:
    """Paired kit/plain runs; requests per CPU second of each, and the server's."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proc, target = _serve(folder, desktops, max(1, agents // desktops))
        try:
            rows = []
            for _ in range(pairs):
                kit = _run("kit", folder, target, proc.pid, seconds, agents, desktops)
                plain = _run("plain", folder, target, proc.pid, seconds, agents, desktops)
                rows.append((kit, plain))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    per_cpu = [(k["requests"] / k["cpu"], p["requests"] / p["cpu"]) for k, p in rows]
    server = [r["requests"] / r["server_cpu"] for pair in rows for r in pair if r["server_cpu"]]
    return {
        "pairs": [
            {"kit_per_cpu_s": round(k, 1), "plain_per_cpu_s": round(p, 1),
             "ratio": round(k / p, 3),
             "kit_per_s": round(kr["requests"] / kr["wall"], 1),
             "plain_per_s": round(pr["requests"] / pr["wall"], 1)}
            for (k, p), (kr, pr) in zip(per_cpu, rows, strict=True)
        ],
        "ratio_median": round(statistics.median(k / p for k, p in per_cpu), 3),
        "server_per_cpu_s_median": round(statistics.median(server), 1) if server else None,
        "server_cpu_us_per_request": (
            round(1e6 / statistics.median(server), 1) if server else None
        ),
    }


def many_desktops(desktops: int, agents: int, seconds: int) -> dict[str, Any]:
    """One process, ``desktops`` desktops at real time; the accounting and the CPU share."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proc, target = _serve(folder, desktops, 1)
        report = folder / "accounting.json"
        meter = folder / "meter.json"
        env = dict(os.environ, OSF_BENCH_METER=str(meter), OSF_BENCH_SERVER_PID=str(proc.pid))
        try:
            subprocess.run(
                [sys.executable, "-m", "locust", "-f", f"{_locustfile()},{PLAIN}",
                 "--headless", "--only-summary", "--loglevel", "ERROR", "-t", f"{seconds}s",
                 "--target", str(target), "--desktops", str(desktops), "--agents", str(agents),
                 "--graph-median", "10", "--drain", "120", "--report-json", str(report),
                 "AgentUser", "DesktopUser"],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                timeout=seconds + 400, check=False,
            )
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        result = json.loads(report.read_text())
        figures = json.loads(meter.read_text())
    return {
        "desktops": desktops,
        "agents": agents,
        "verdict": result["verdict"],
        "not_valid": result["not_valid"],
        "late_max_s": round(result["late_max"], 3),
        "runs": result["runs"],
        "lost": len(result["lost"]),
        "pickup": result["pickup"],
        "requests_per_s": round(figures["requests"] / figures["wall"], 1),
        "core_share": round(figures["cpu"] / figures["wall"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--desktops", type=int, default=0,
                        help="the many-desktops run with this many desktops (default: cost)")
    args = parser.parse_args()
    if args.desktops:
        out = many_desktops(args.desktops, args.agents, args.seconds)
    else:
        out = cost(args.pairs, args.seconds, args.agents, 5)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
