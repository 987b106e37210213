"""Only the rows of reading thread after thread, beside floor B: the time
inside Redis of a guarded guest and user opening a room new to them each
page, in a private redis-server, as benchmarks/run.py measures them, in a
few minutes rather than the whole run's. With ``--instructions``, the
instructions redis-server ran for them instead (callgrind, counted in
``call()``: each command's dispatch and execution, a script's whole run),
steady where µs are within the machine's noise.

    .venv/bin/python benchmarks/rooms_cost.py [--size N] [--rounds N] [--instructions]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
from collections.abc import Callable
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
    parser.add_argument("--instructions", action="store_true")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        workdir = stack.enter_context(scratch("whos-online-rooms-"))
        counting = None
        if args.instructions:
            from benchmarks.lua_instructions import counted_server

            client, since = stack.enter_context(counted_server(workdir, "call"))
            url = f"redis://127.0.0.1:{client.connection_pool.connection_kwargs['port']}/0"
            counting = Counted(since)
        else:
            url = stack.enter_context(redis_server(workdir))
        os.environ |= {"BENCH_REDIS_URL": url, "BENCH_DB": str(workdir / "db")}
        os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
        import django

        django.setup()
        from benchmarks import figures, redis_figures

        world = figures.World(args.size, 30)
        log("inside Redis, per operation")
        costs = redis_figures.redis_costs(
            world, args.rounds, args.calls, ROWS, inside=counting
        )
    report(costs, "instructions" if args.instructions else "µs")


class Counted:
    """Measures as ``bench.Inside`` does, in instructions (``us``)."""

    def __init__(self, since: Callable[[], int]) -> None:
        self.since = since

    def measure(
        self, fn: Callable[[], object], n: int, before: Callable[[], object] | None
    ) -> dict[str, Any]:
        if before:
            before()
        self.since()
        for _ in range(n):
            fn()
        return {"us": self.since() / n, "per_command": {}}


def report(costs: dict[str, list[dict[str, Any]]], unit: str) -> None:
    from benchmarks.redis_figures import FLOOR_B

    floor = [r["us"] for r in costs[FLOOR_B]]
    for name, runs in costs.items():
        us = [r["us"] for r in runs]
        each = ratios(us, floor)
        print(
            f"{name}: {min(us):,.1f} / {statistics.median(us):,.1f} / {max(us):,.1f}"
            f" {unit}"
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
