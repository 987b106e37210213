"""Real Redis servers that a test run starts for itself, on loopback ports.

A plain server, a three-master Redis Cluster and a Sentinel watching a
master and its replica. Each redis-server runs in a process group of its own
under a temporary directory, with no persistence, and is ended by its id
when its fixture is torn down, so no process outlives the run. Tests that
use them carry the ``real_redis`` marker and skip, saying why, where
redis-server is not installed.

Import the fixtures a test module needs from here (pytest finds fixtures in
a module's namespace).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis, RedisError
from redis.cluster import RedisCluster

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")
SENTINEL_SERVICE = "whos_online_test"
STARTUP_TIMEOUT = 10.0

needs_redis_server = pytest.mark.skipif(
    REDIS_SERVER is None or REDIS_CLI is None,
    reason="redis-server and redis-cli are not installed (apt-get install "
    "redis-server): these tests start real Redis servers of their own",
)
# For a whole module: ``pytestmark = real_redis``.
real_redis = [pytest.mark.real_redis, needs_redis_server]


_GIVEN: set[int] = set()


def free_port() -> int:
    """A loopback port nothing listens on right now, below the range the
    kernel gives outgoing connections: a port from that range (what
    port 0 picks) can be taken by a client socket before the server binds it.
    Never one it gave before: a cluster's ports are all picked before any
    node binds them, and a node's bus port once was another node's port."""
    while True:
        port = random.randrange(20_000, _first_outgoing_port())
        if port in _GIVEN:
            continue
        _GIVEN.add(port)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port


def _first_outgoing_port() -> int:
    try:
        return int(
            Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0]
        )
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def wait_until(condition: Callable[[], bool], what: str, timeout: float) -> float:
    """Poll ``condition`` until it holds; how long that took."""
    start = time.monotonic()
    while not _holds(condition):
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"{what}: not after {timeout} s")
        time.sleep(0.05)
    return time.monotonic() - start


def _holds(condition: Callable[[], bool]) -> bool:
    try:
        return condition()
    except (OSError, RedisError):
        return False


class RedisServer:
    """One redis-server on a loopback port, which a test may stop and start
    again on the same port."""

    def __init__(self, workdir: Path, *options: str, config: Path | None = None):
        self.port = free_port()
        self.workdir = workdir / str(self.port)
        self.workdir.mkdir(parents=True)
        self.options = options
        self.config = config
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def client(self, **kwargs: Any) -> Redis:
        return Redis(host="127.0.0.1", port=self.port, socket_timeout=2, **kwargs)

    def start(self) -> None:
        assert REDIS_SERVER is not None
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                *([str(self.config)] if self.config else []),
                *("--bind", "127.0.0.1", "--port", str(self.port)),
                *("--save", "", "--appendonly", "no"),
                *("--dir", str(self.workdir), "--logfile", "redis.log"),
                *self.options,
            ],
            cwd=self.workdir,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with self.client() as client:
            wait_until(
                self._answers(client), f"redis-server on {self.port}", STARTUP_TIMEOUT
            )

    def _answers(self, client: Redis) -> Callable[[], bool]:
        def answers() -> bool:
            if not self.is_running:
                raise RuntimeError(f"redis-server exited; see {self.workdir}")
            return bool(client.ping())

        return answers

    def stop(self) -> None:
        """End the process group: SIGTERM, then SIGKILL if it lingers."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


@contextmanager
def running(*servers: RedisServer) -> Iterator[None]:
    """Start the servers, and stop every one of them whatever happens."""
    try:
        for server in servers:
            server.start()
        yield
    finally:
        for server in servers:
            server.stop()


@dataclass
class Cluster:
    nodes: list[RedisServer]

    def client(self, **kwargs: Any) -> RedisCluster:
        """A client that learns the other nodes from the first."""
        return RedisCluster(host="127.0.0.1", port=self.nodes[0].port, **kwargs)

    def owners(self) -> dict[int, int]:
        """The port of the master that owns each slot."""
        with self.nodes[0].client() as client:
            ranges = client.cluster("SLOTS")
        return {
            slot: int(master[1])
            for first, last, master, *_ in ranges
            for slot in range(first, last + 1)
        }


@dataclass
class SentinelSetup:
    master: RedisServer
    replica: RedisServer
    sentinel: RedisServer
    service: str = SENTINEL_SERVICE

    def master_port(self) -> int:
        """The port of the master, as Sentinel sees it now."""
        with self.sentinel.client() as client:
            _, port = client.sentinel_get_master_addr_by_name(self.service)
        return int(port)


def start_cluster(workdir: Path, *options: str) -> Iterator[Cluster]:
    """Three masters, no replicas, every slot assigned; ``options`` are
    given to each redis-server."""
    assert REDIS_CLI is not None
    nodes = [RedisServer(workdir, *_cluster_options(), *options) for _ in range(3)]
    with running(*nodes):
        subprocess.run(
            [
                REDIS_CLI,
                "--cluster",
                "create",
                *(f"127.0.0.1:{node.port}" for node in nodes),
                *("--cluster-replicas", "0", "--cluster-yes"),
            ],
            check=True,
            capture_output=True,
            timeout=30,
        )
        for node in nodes:
            with node.client() as client:
                wait_until(_cluster_is_ok(client), "cluster_state:ok", 20)
        yield Cluster(nodes)


def _cluster_options() -> tuple[str, ...]:
    # The bus port defaults to port + 10000, which may not exist; pick one.
    return (
        *("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"),
        *("--cluster-port", str(free_port()), "--cluster-node-timeout", "2000"),
    )


def _cluster_is_ok(client: Redis) -> Callable[[], bool]:
    def is_ok() -> bool:
        return bool(client.cluster("INFO")["cluster_state"] == "ok")

    return is_ok


def start_sentinel(workdir: Path) -> Iterator[SentinelSetup]:
    """A master, its replica, and one Sentinel that fails over within seconds
    of the master going away."""
    # Without the default 5 s wait before a diskless sync to the replica.
    master = RedisServer(workdir, "--repl-diskless-sync-delay", "0")
    with running(master):
        replica = RedisServer(workdir, "--replicaof", "127.0.0.1", str(master.port))
        with running(replica):
            with replica.client() as client:
                wait_until(_replicates(client), "replica in sync", 10)
            # Started after the replica is in sync, so that Sentinel's first
            # look at the master already finds the replica.
            config = workdir / "sentinel.conf"
            config.write_text(
                f"sentinel monitor {SENTINEL_SERVICE} 127.0.0.1 {master.port} 1\n"
                f"sentinel down-after-milliseconds {SENTINEL_SERVICE} 500\n"
                f"sentinel failover-timeout {SENTINEL_SERVICE} 3000\n"
            )
            sentinel = RedisServer(workdir, "--sentinel", config=config)
            with running(sentinel):
                setup = SentinelSetup(master, replica, sentinel)
                wait_until(_knows_replica(setup), "sentinel sees the replica", 15)
                yield setup


def _replicates(client: Redis) -> Callable[[], bool]:
    def replicates() -> bool:
        return bool(client.info("replication").get("master_link_status") == "up")

    return replicates


def _knows_replica(setup: SentinelSetup) -> Callable[[], bool]:
    def knows() -> bool:
        with setup.sentinel.client() as client:
            replicas = client.sentinel_slaves(setup.service)
        return any(
            int(replica["port"]) == setup.replica.port
            and "s_down" not in replica["flags"]
            for replica in replicas
        )

    return knows


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from start_cluster(tmp_path_factory.mktemp("cluster"))


@pytest.fixture(scope="session")
def redis_sentinel(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SentinelSetup]:
    yield from start_sentinel(tmp_path_factory.mktemp("sentinel"))


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A private redis-server for this test alone; it may stop and start it."""
    server = RedisServer(tmp_path)
    with running(server):
        yield server


# The timeouts a site should set on the alias (check whos_online.W003).
TIMEOUTS = {"SOCKET_TIMEOUT": 0.25, "SOCKET_CONNECT_TIMEOUT": 0.25}


def cache_for(url: str, **options: Any) -> dict[str, Any]:
    """A django-redis cache alias for ``url``, with short timeouts."""
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": url,
        "OPTIONS": {**TIMEOUTS, **options},
    }


@pytest.fixture
def on_redis_server(
    settings: SettingsWrapper, redis_server: RedisServer
) -> RedisServer:
    """Keep this test's presence data on its private redis-server."""
    settings.CACHES = {**settings.CACHES, "private": cache_for(redis_server.url)}
    settings.WHOS_ONLINE_CACHE_ALIAS = "private"

    return redis_server


# The cluster WHOS_ONLINE_CONNECTION_FACTORY builds a client for; set by
# test_cluster's fixture.
cluster_in_use: list[Cluster] = []


def cluster_client() -> RedisCluster:
    """A WHOS_ONLINE_CONNECTION_FACTORY: the test cluster, with the app's
    default timeouts."""
    return cluster_in_use[-1].client(socket_timeout=0.25, socket_connect_timeout=0.25)
