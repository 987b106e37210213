"""Many processes recording at once lose nothing.

Worker processes, each with Django set up from tests.settings as a web
server would be, record thousands of distinct users and guests at the same
moment on one real Redis. Each record is one Lua script, which Redis runs
atomically, so the counts come out exact and the record high equals the
total.
"""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing.synchronize import Barrier

from tests import presence
from tests.redis_servers import (
    RedisServer,
    cache_for,
    on_redis_server,
    real_redis,
    redis_server,
)

pytestmark = real_redis

__all__ = ["on_redis_server", "redis_server"]  # fixtures, used by name

PROCESSES = 4
PER_PROCESS = 1500
TOTAL = PROCESSES * PER_PROCESS  # users, and as many guests
JOIN_TIMEOUT = 60


def record_many(url: str, prefix: str, worker: int, start: Barrier) -> None:
    """In a fresh process: set up Django, wait for the others, then record
    ``PER_PROCESS`` users and as many guests of this worker's own."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    import django

    django.setup()
    from django.conf import settings
    from django.test import override_settings

    with override_settings(
        CACHES={**settings.CACHES, "shared": cache_for(url)},
        WHOS_ONLINE_CACHE_ALIAS="shared",
        WHOS_ONLINE_KEY_PREFIX=prefix,
    ):
        start.wait(JOIN_TIMEOUT)
        for n in range(PER_PROCESS):
            presence.record_user(worker * PER_PROCESS + n)
            presence.record_guest(f"10.{worker}.{n // 256}.{n % 256}")


def test_many_processes_recording_at_once_lose_nothing(
    on_redis_server: RedisServer, isolated_presence: str
) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(PROCESSES)
    workers = [
        context.Process(
            target=record_many, args=(on_redis_server.url, isolated_presence, n, start)
        )
        for n in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(JOIN_TIMEOUT)
        if worker.is_alive():
            worker.kill()
            worker.join()
    assert [worker.exitcode for worker in workers] == [0] * PROCESSES

    counts = presence.snapshot(limit=0).counts
    record = presence.most_ever_online()
    assert (counts.users, counts.guests) == (TOTAL, TOTAL)
    assert record is not None and record[0] == 2 * TOTAL
