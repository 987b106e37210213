"""What several benchmarks share: where the repository is, the log line,
timing a call and percentiles."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}] {message}", flush=True)


def per_call(fn: Callable[[], object], n: int) -> float:
    """Median µs of ``n`` calls, each timed alone (a call that another
    process preempts is not the call's cost)."""
    clock, times = time.perf_counter, []
    for _ in range(n):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times) * 1e6


def percentile(values: Iterable[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q / 100))] if ordered else 0
