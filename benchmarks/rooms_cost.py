"""Only the rows of reading thread after thread, beside floor B: the time
inside Redis of a guarded guest and user opening a room new to them each
page, in a private redis-server, as benchmarks/run.py measures them, in a
few minutes rather than the whole run's.

    .venv/bin/python benchmarks/rooms_cost.py [--size N] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench import log, redis_server, scratch  # noqa: E402
from benchmarks.table import ratios  # noqa: E402

ROWS = ("guest reading thread after thread", "user reading thread after thread")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=20_000, help="members online")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200, help="per round")
    args = parser.parse_args()
    with scratch("whos-online-rooms-") as workdir, redis_server(workdir) as url:
        os.environ |= {"BENCH_REDIS_URL": url, "BENCH_DB": str(workdir / "db")}
        os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
        import django

        django.setup()
        from benchmarks import figures, redis_figures

        world = figures.World(args.size, 30)
        log("time inside Redis, per operation")
        costs = redis_figures.redis_costs(world, args.rounds, args.calls, ROWS)
    report(costs)


def report(costs: dict[str, list[dict[str, Any]]]) -> None:
    from benchmarks.redis_figures import FLOOR_B

    floor = [r["us"] for r in costs[FLOOR_B]]
    for name, runs in costs.items():
        us = [r["us"] for r in runs]
        each = ratios(us, floor)
        print(
            f"{name}: {min(us):.1f} / {statistics.median(us):.1f} / {max(us):.1f} µs"
            f"  × B {min(each):.2f} / {statistics.median(each):.2f} / {max(each):.2f}"
        )
        calls: dict[str, list[tuple[float, float]]] = {}
        for run in runs:
            for command, figures in run["per_command"].items():
                counted = (figures["calls"], figures["us"])
                calls.setdefault(command, []).append(counted)
        shown = (
            f"{c} {statistics.median(n for n, _ in v):.3g}× "
            f"{statistics.median(u for _, u in v):.1f} µs"
            for c, v in sorted(calls.items(), key=lambda c: -c[1][0][1])
        )
        print("   ", ", ".join(shown))


if __name__ == "__main__":
    main()
