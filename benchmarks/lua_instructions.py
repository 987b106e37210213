"""Instructions inside redis-server of one call of places.lua, counted by
callgrind: the cost of a script where µs are within the machine's noise.
Each case runs in a redis-server of its own under valgrind, which counts
only inside the command measured (``--toggle-collect``): the work tree's
script and any REF's (see places_lua.py), for each reader of places_lua.py,
beside a renewal ZADD into a set of 20,000 (floor B).

    .venv/bin/python benchmarks/lua_instructions.py [REF ...] [--calls N]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench import log, scratch  # noqa: E402
from benchmarks.places_lua import FLOOR_B, READERS, Reader, source  # noqa: E402
from tests.redis_servers import free_port  # noqa: E402

TOTALS = re.compile(r"^(?:summary|totals): (\d+)", re.MULTILINE)


@contextlib.contextmanager
def counted_server(
    workdir: Path, command: str
) -> Iterator[tuple[Any, Callable[[], int]]]:
    """A client of a redis-server under callgrind, counting inside
    ``command``'s function, and a function that zeroes the count and later
    returns the instructions counted since."""
    from redis import Redis

    port = free_port()
    out = workdir / f"callgrind.{port}"
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    valgrind += [f"--toggle-collect={command}"]
    server = ["redis-server", "--port", str(port), "--bind", "127.0.0.1"]
    server += ["--save", "", "--appendonly", "no", "--dir", str(workdir)]
    proc = subprocess.Popen(
        [*valgrind, *server], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(600):
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        time.sleep(0.1)
    client = Redis(port=port)

    def control(flag: str) -> None:
        subprocess.run(["callgrind_control", flag, str(proc.pid)], capture_output=True)

    def since() -> int:
        for dump in workdir.glob(f"{out.name}*"):
            dump.unlink()
        control("-d")
        dumps = sorted(workdir.glob(f"{out.name}*"))
        return max(
            int(m.group(1)) for d in dumps for m in [TOTALS.search(d.read_text())] if m
        )

    try:
        control("-z")
        yield client, since
    finally:
        with contextlib.suppress(Exception):
            client.shutdown(nosave=True)
        proc.wait(timeout=60)


def floor(workdir: Path, calls: int) -> float:
    with counted_server(workdir, "zaddCommand") as (client, since):
        now = time.time()
        client.zadd("{floor}:guests", {f"g{i}": now for i in range(20_000)})
        renewing = itertools.cycle(range(20_000))
        for _ in range(300):
            client.zadd("{floor}:guests", {f"g{next(renewing)}": time.time()})
        since()
        for _ in range(calls):
            client.zadd("{floor}:guests", {f"g{next(renewing)}": time.time()})
        return since() / calls


def script(workdir: Path, text: str, who: str, calls: int) -> float:
    with counted_server(workdir, "evalShaCommand") as (client, since):
        reader = Reader(client, client.script_load(text), "places", who, text)
        for _ in range(300):  # rooms in use, as after a while
            reader()
        since()
        for _ in range(calls):
            reader()
        return since() / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("refs", nargs="*", help="commits whose Lua to count too")
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    variants = {"work tree": source(None)} | {ref: source(ref) for ref in args.refs}
    with scratch("whos-online-lua-") as workdir:
        b = floor(workdir, args.calls)
        print(f"{FLOOR_B}: {b:,.0f} instructions", flush=True)
        for name, text in variants.items():
            for who in READERS:
                n = script(workdir, text, who, args.calls)
                print(
                    f"{name}, {who}: {n:,.0f} instructions  × B {n / b:.2f}", flush=True
                )
    log("done")


if __name__ == "__main__":
    main()
