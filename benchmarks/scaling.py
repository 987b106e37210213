"""WHOS_ONLINE_SHARDS on real servers: one master against three, side by side.

    .venv/bin/python benchmarks/scaling.py           # make bench-scaling
    .venv/bin/python benchmarks/scaling.py --quick   # in make bench-smoke

Starts a redis-server and a three-master Redis Cluster (``redis-cli
--cluster create``) of its own on loopback ports, and stops them at the end.
For each setup (1 master with 1 shard, 1 master with 6, 3 masters with 6):

- records: PROCESSES processes call ``presence.record_guest`` for new guests
  (each enters the window: the dearer path) for SECONDS; records a second,
  server µs per record and the busiest master's share of them (``INFO
  commandstats``), and ``used_memory`` added per guest recorded;
- snapshots: median µs of ``presence.snapshot(50, guest_limit=50)`` over
  the guests just recorded.

Then the estimate: SIZES distinct guests recorded through ``record.lua``
itself (``presence.record_call``, 2,000 scripts a pipeline) with sets capped
at WHOS_ONLINE_MAX_MEMBERS' default, and the count a snapshot gives (from
the minutes' HyperLogLogs) against the number recorded. Prints Markdown
tables, and writes the figures as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from whos_online.store import get_store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import servers  # noqa: E402
from benchmarks.common import log, per_call  # noqa: E402

SHARDS = 6
FULL = {"processes": 4, "seconds": 15.0, "snapshots": 500, "sizes": [10**6, 10**7]}
QUICK = {"processes": 2, "seconds": 1.0, "snapshots": 20, "sizes": [20_000]}
PIPELINE = 2_000
CAP = 100_000  # WHOS_ONLINE_MAX_MEMBERS' default


def cluster_client() -> Any:
    """The WHOS_ONLINE_CONNECTION_FACTORY of the three-master setup."""
    from redis.cluster import RedisCluster

    return RedisCluster.from_url(os.environ["BENCH_CLUSTER_URL"])


@contextmanager
def setup(
    shards: int, cluster: bool, cap: int = 2 * 10**7, window: int = 900
) -> Iterator[None]:
    """The app on the cluster or the single server, with ``shards`` shards;
    every server emptied first (they are this run's own)."""
    from django.test import override_settings

    factory = "benchmarks.scaling.cluster_client" if cluster else None
    with override_settings(
        WHOS_ONLINE_SHARDS=shards,
        WHOS_ONLINE_CONNECTION_FACTORY=factory,
        WHOS_ONLINE_MAX_MEMBERS=cap,
        WHOS_ONLINE_WINDOW=window,
    ):
        for node in nodes(cluster):
            node.flushall()
            node.config_resetstat()
        from tests import presence

        presence.sync_clock()
        assert len(get_store().shards) == shards
        yield


def nodes(cluster: bool) -> list[Any]:
    from redis import Redis

    urls = os.environ["BENCH_MASTERS" if cluster else "BENCH_REDIS_URL"].split()
    return [Redis.from_url(url) for url in urls]


def drive(worker: int, start: float, seconds: float, done: Any) -> None:
    """One client process: record new guests until the time is up."""
    from benchmarks.scale import ipv4
    from tests import presence
    from whos_online.conf import get_config

    get_config.cache_clear()  # a client of this process's own
    time.sleep(max(start - time.time(), 0))
    count, base = 0, (worker + 1) * 10**8
    while time.time() < start + seconds:
        presence.record_guest(ipv4(base + count))
        count += 1
    done.put(count)


def measure_setup(
    name: str, shards: int, cluster: bool, params: dict[str, Any]
) -> dict[str, Any]:
    from tests import presence

    log(f"{name}: records from {params['processes']} processes")
    with setup(shards, cluster):
        masters = nodes(cluster)
        before = sum(node.info("memory")["used_memory"] for node in masters)
        fork = multiprocessing.get_context("fork")
        done = fork.Queue()
        start, seconds = time.time() + 1, params["seconds"]
        workers = [
            fork.Process(target=drive, args=(n, start, seconds, done))
            for n in range(params["processes"])
        ]
        for worker in workers:
            worker.start()
        recorded = sum(done.get() for _ in workers)
        for worker in workers:
            worker.join()
        stats = [node.info("commandstats")["cmdstat_evalsha"] for node in masters]
        calls = [int(stat["calls"]) for stat in stats]
        added = sum(node.info("memory")["used_memory"] for node in masters) - before
        log(f"{name}: snapshots")
        presence.snapshot(50, guest_limit=50)
        snapshot_us = per_call(
            lambda: presence.snapshot(50, guest_limit=50), params["snapshots"]
        )
        counted = presence.snapshot(0).counts.guests
    return {
        "setup": name,
        "recorded": recorded,
        "counted": counted,
        "records_per_second": recorded / seconds,
        "server_us_per_record": sum(s["usec"] for s in stats) / sum(calls),
        "busiest_share": max(calls) / sum(calls),
        "bytes_per_guest": added / recorded,
        "snapshot_us": snapshot_us,
    }


def fill(worker: int, workers: int, size: int, done: Any) -> None:
    """One of ``workers`` processes recording every ``workers``-th guest."""
    from benchmarks.app import record_on_masters
    from benchmarks.scale import ipv4
    from tests import presence
    from whos_online.conf import get_config

    get_config.cache_clear()
    config = get_config()
    step = PIPELINE * workers
    for first in range(worker * PIPELINE, size, step):
        members = (ipv4(i) for i in range(first, min(first + PIPELINE, size)))
        record_on_masters(
            config, [presence.record_call(config, "guests", m) for m in members]
        )
    done.put(worker)


def measure_estimate(size: int, workers: int) -> dict[str, Any]:
    """``size`` guests recorded through record.lua on the three masters.
    The window is an hour, so that the fill (minutes) stays inside it."""
    from tests import presence

    log(f"estimate: {size:,} guests on 3 masters, {SHARDS} shards")
    with setup(SHARDS, True, cap=CAP, window=3600):
        fork, began = multiprocessing.get_context("fork"), time.perf_counter()
        done = fork.Queue()
        procs = [
            fork.Process(target=fill, args=(n, workers, size, done))
            for n in range(workers)
        ]
        for proc in procs:
            proc.start()
        for proc in procs:
            done.get()
            proc.join()
        seconds = time.perf_counter() - began
        counts = presence.snapshot(0).counts
        snapshot_us = per_call(lambda: presence.snapshot(0), 50)
        masters = nodes(True)
        memory = sum(node.info("memory")["used_memory"] for node in masters)
        minutes = [(node, key) for node in masters for key in node.keys("*:seen:*")]
        hll = max(node.memory_usage(key) or 0 for node, key in minutes)
    return {
        "size": size,
        "shards": SHARDS,
        "masters": len(masters),
        "fill_seconds": seconds,
        "counted": counts.guests,
        "estimated": "guests" in counts.estimated,
        "error": counts.guests / size - 1,
        "snapshot_us": snapshot_us,
        "used_memory": memory,
        "minute_hyperloglogs": len(minutes),
        "hyperloglog_bytes": hll,
    }


def markdown(results: dict[str, Any]) -> str:
    rows = [
        "| Setup | Records/s | Server µs per record | Busiest master's share "
        "| Bytes per guest | Snapshot µs | Counted / recorded |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results["setups"]:
        rows.append(
            f"| {r['setup']} | {r['records_per_second']:,.0f} "
            f"| {r['server_us_per_record']:.1f} | {r['busiest_share']:.0%} "
            f"| {r['bytes_per_guest']:.0f} | {r['snapshot_us']:,.0f} "
            f"| {r['counted']:,} / {r['recorded']:,} |"
        )
    rows += [
        "",
        "| Guests | Masters, shards | Fill (record.lua, pipelined) | Counted | Error "
        "| Snapshot µs | used_memory | Minute HyperLogLogs |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for e in results["estimates"]:
        rows.append(
            f"| {e['size']:,} | {e['masters']}, {e['shards']} "
            f"| {e['fill_seconds']:,.0f} s | {e['counted']:,}"
            f"{'' if e['estimated'] else ' (exact)'} | {e['error']:+.2%} "
            f"| {e['snapshot_us']:,.0f} | {e['used_memory'] / 2**20:,.0f} MiB "
            f"| {e['minute_hyperloglogs']} × {e['hyperloglog_bytes'] / 1024:.1f} KiB |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 1 s")
    parser.add_argument("--sizes", type=int, nargs="*", help="guests for the estimate")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    params: dict[str, Any] = QUICK if args.quick else FULL
    if args.sizes is not None:
        params = params | {"sizes": args.sizes}
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        single = stack.enter_context(servers.redis_server(workdir))
        masters = stack.enter_context(servers.redis_cluster(workdir))
        os.environ["BENCH_MASTERS"] = " ".join(masters)
        os.environ["BENCH_CLUSTER_URL"] = masters[0]
        from benchmarks.run import environment, set_up_django

        set_up_django(workdir, single)
        results: dict[str, Any] = {"params": params}
        results["setups"] = [
            measure_setup("1 master, 1 shard", 1, False, params),
            measure_setup(f"1 master, {SHARDS} shards", SHARDS, False, params),
            measure_setup(f"3 masters, {SHARDS} shards", SHARDS, True, params),
        ]
        results["estimates"] = [
            measure_estimate(size, params["processes"]) for size in params["sizes"]
        ]
        results["environment"] = environment(single)
    print(markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
