"""Redis cores at 1,000,000 online, from the run's per-operation costs: the
capacity line of docs/benchmarks/README.md (its method says how)."""

from __future__ import annotations

from typing import Any

from benchmarks.table import med

ONLINE = 1_000_000
PAGE_VIEWS = ONLINE / 60  # one page view a minute per visitor
# Pages a web server process serves a second (a Django process behind
# gunicorn serves some tens to a few hundred); with WHOS_ONLINE_SNAPSHOT_MAX_AGE
# each process asks Redis for at most one snapshot per that many seconds.
PAGES_PER_PROCESS = 100
SNAPSHOT_MAX_AGE = 2.0
AWAY_AFTER = 300  # WHOS_ONLINE_AWAY_AFTER's default
CORES_TARGET = 0.5


def capacity(results: dict[str, Any]) -> dict[str, Any]:
    """Redis cores by command time at 1,000,000 online (see the method),
    with the same by core µs beside it."""
    params = results["params"]
    guard = params.get("guard_seconds", 300)
    heartbeat = params.get("heartbeat_seconds", 60)
    rates = {
        "thread pages": PAGE_VIEWS,
        "records": ONLINE / guard,
        "heartbeats": ONLINE / max(AWAY_AFTER - heartbeat, heartbeat),
        "snapshots": min(PAGE_VIEWS, PAGE_VIEWS / PAGES_PER_PROCESS / SNAPSHOT_MAX_AGE),
    }
    out: dict[str, Any] = {"rates": rates}
    for measure in ("us", "core_us"):
        cost = {n: med([r[measure] for r in rs]) for n, rs in results["redis"].items()}
        threads = [cost[n] for n in cost if "thread after thread" in n]
        per = {
            "thread pages": max(threads, default=0.0),
            "records": max(
                cost.get("record guest returning", 0.0), cost["record user renewal"]
            ),
            "heartbeats": cost["heartbeat"],
            "snapshots": cost["widget at the cap"],
        }
        out[measure] = {n: rates[n] * per[n] / 1e6 for n in rates}
    return out


def capacity_line(cap: dict[str, Any]) -> str:
    cores = sum(cap["us"].values())
    parts = ", ".join(f"{name} {cap['us'][name]:.2f}" for name in cap["rates"])
    verdict = "met" if cores <= CORES_TARGET else "**missed**"
    return (
        "**1,000,000 online, a page a minute each, every page a thread new to "
        f"its reader: {cores:.2f} Redis cores by command time** ({parts}): "
        "the time Redis spends executing the commands (`INFO commandstats`), "
        "scripts' own commands inside their script's; not reading requests, "
        "writing replies or system calls, with which Redis' main thread spent "
        f"{sum(cap['core_us'].values()):.2f} cores' worth in this run. "
        f"Target: ≤ {CORES_TARGET} cores by command time ({verdict})."
    )
