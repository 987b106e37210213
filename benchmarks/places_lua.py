"""places.lua alone: µs inside Redis (``INFO commandstats``) of a guest and
of a user whose device opens a room new to them each call (since a device's
move is plain commands, store/places.py, this is the move of a device whose
guard named no rooms), and of a tab's ping renewing its place in its room,
beside floor B (a renewal ZADD into a set of 20,000), in a private
redis-server. With no web request between the calls
its figures are steadier than rooms_cost.py's, steady enough to tell apart
levers of a few µs: name commits whose Lua to measure beside the work tree's.

    .venv/bin/python benchmarks/places_lua.py [REF ...] [--rounds N]

Each REF (``main``, ``HEAD~2``, a commit, or a folder holding a prototype's
prelude.lua and places.lua) is measured in the same server as the work
tree's ``whos_online/store/lua/``, round by round in a new order.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench import ROOT, log, redis_server, scratch  # noqa: E402
from benchmarks.table import ratios  # noqa: E402
from whos_online.store.scripts import assemble  # noqa: E402

LUA = "whos_online/store/lua"
FLOOR_B = "renewal ZADD (B)"
# kind, member, place, the place it takes over, seconds, and whether each
# call is in a room new to them (a device reading thread after thread) or in
# the same room (a tab's ping, the room script's, every 45 s). A guest's
# device is "d:" (guests have no session).
READERS = {
    "guest": ("guests", "192.0.2.77", "d:", "", 300, True),
    "user": ("users", "7", "d:1f2e", "", 300, True),
    "guest's tab ping": ("guests", "192.0.2.78", "t:Yq3", "d:", 150, False),
    "user's tab ping": ("users", "8", "t:Yq4", "d:1f2f", 150, False),
}
# Before rooms were bounded per member: the rooms and members a budget held,
# so that no new room was refused.
BIG = 10**6


def source(ref: str | None) -> str:
    """places.lua with the parts of the prelude it uses, where store/scripts.py
    puts them (below the hot path), of the work tree (``None``), of a folder
    or of a commit."""

    def read(name: str) -> str:
        if ref is None or Path(ref).is_dir():
            folder = ROOT / LUA if ref is None else Path(ref)
            return (folder / f"{name}.lua").read_text("utf-8")
        shown = subprocess.run(
            ["git", "show", f"{ref}:{LUA}/{name}.lua"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return shown.stdout

    return assemble(read("places"), read("prelude"))


class Reader:
    """A member of one variant's shard, each call in a room new to them or
    each in the same room (READERS)."""

    threads = itertools.count(2 * 10**6)

    def __init__(self, client: Any, sha: str, tag: str, who: str, text: str) -> None:
        self.client, self.sha, self.start = client, sha, f"{{{tag}}}:"
        self.kind, self.member, self.place, self.takes_over, self.seconds, moving = (
            READERS[who]
        )
        self.rooms = (
            (f"thread:{n}" for n in self.threads)
            if moving
            else itertools.repeat("thread:7")
        )
        self.budgets = "room-members" in text  # before rooms were bounded per member
        self.told_now = "ARGV[10..] the room names" in text  # the caller's time
        name = "places" if self.budgets else "placed"
        if "keys.Shard.tabs" in text:  # a device's place a key of its own
            name = "tabs"
            # A user's device holds a place only once recorded.
            device = self.place.removeprefix("d:") or self.takes_over[2:]
            client.zadd(f"{self.start}devices:{self.member}", {device: time.time()})
        self.places = f"{self.start}{name}:{self.kind[0]}:{self.member}"

    def __call__(self) -> None:
        room = next(self.rooms)
        kind, member, place = self.kind, self.member, self.place
        given = [kind, member, place, self.seconds, self.takes_over]
        if self.budgets:
            args = [*given, BIG, BIG, 20, room]
        else:  # kept 301 s, 20 places, a member already in rooms: none refused
            args = [*given, 301, 20, "0", room]
        if self.told_now:  # Redis' time as the process learnt it: here, ours
            args.insert(-1, str(int(time.time())))
        keys = [self.start, self.places, f"{self.start}{kind}"]
        self.client.evalsha(self.sha, len(keys), *keys, *args)


def measure(client: Any, fn: Any, n: int, command: str) -> float:
    """µs inside Redis of one call of ``fn``, over ``n`` calls."""
    client.config_resetstat()
    for _ in range(n):
        fn()
    return float(client.info("commandstats")[f"cmdstat_{command}"]["usec"]) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("refs", nargs="*", help="commits whose Lua to measure too")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300, help="per round")
    args = parser.parse_args()
    variants = {"work tree": source(None)} | {ref: source(ref) for ref in args.refs}
    with scratch("whos-online-places-") as workdir, redis_server(workdir) as url:
        from redis import Redis

        client = Redis.from_url(url)
        now = time.time()
        client.zadd("{floor}:guests", {f"g{i}": now for i in range(20_000)})
        renewing = itertools.cycle(range(20_000))

        def zadd() -> None:
            client.zadd("{floor}:guests", {f"g{next(renewing)}": time.time()})

        cases: dict[tuple[str, str], tuple[Any, str]] = {("", FLOOR_B): (zadd, "zadd")}
        for n, (name, text) in enumerate(variants.items()):
            sha = client.script_load(text)
            for who in READERS:
                reader = Reader(client, sha, f"places-{n}", who, text)
                for _ in range(args.calls):  # rooms in use, as after a while
                    reader()
                cases[(name, who)] = (reader, "evalsha")
        log(f"{args.rounds} rounds of {args.calls} calls")
        out: dict[tuple[str, str], list[float]] = {case: [] for case in cases}
        order = list(cases)
        for r in range(args.rounds):
            random.Random(r).shuffle(order)
            for case in order:
                fn, command = cases[case]
                out[case].append(measure(client, fn, args.calls, command))
    report(out)


def report(out: dict[tuple[str, str], list[float]]) -> None:
    floor = out[("", FLOOR_B)]
    for (name, who), us in out.items():
        each = ratios(us, floor)
        label = f"{name}, {who}" if name else who
        print(
            f"{label}: {min(us):.1f} / {statistics.median(us):.1f} / {max(us):.1f} µs"
            f"  × B {min(each):.2f} / {statistics.median(each):.2f}"
            f" / {max(each):.2f}"
        )


if __name__ == "__main__":
    main()
