"""CPython's full garbage collections in the processes serving the live
run's site: with ``BENCH_GC_LOG`` naming a file, each process that loads
benchmarks/load_settings.py appends a line for each full collection, its
pid, when it began on ``time.monotonic()`` (one clock for every process of
the machine) and how long it took, so that benchmarks/streams.py can say
how many of them fell among a round's joins."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path
from typing import Any, NamedTuple


class Collection(NamedTuple):
    pid: int
    began: float
    seconds: float


def install(path: str) -> None:
    out = open(path, "a", buffering=1)  # noqa: SIM115 (open for the process's life)
    began = [0.0]

    def on_collection(phase: str, info: dict[str, Any]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            began[0] = time.monotonic()
        else:
            spent = time.monotonic() - began[0]
            out.write(f"{os.getpid()} {began[0]:.6f} {spent:.6f}\n")

    gc.callbacks.append(on_collection)


def between(path: Path, start: float, end: float) -> list[Collection]:
    """The full collections logged in ``path`` that began between two
    readings of ``time.monotonic()``."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        pid, began, seconds = line.split()
        if start <= float(began) <= end:
            found.append(Collection(int(pid), float(began), float(seconds)))
    return found
