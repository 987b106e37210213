"""docs/benchmarks/README.md and headline.md from a run's results: each
figure of issue 19 beside its floor, as ratios taken round by round."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

ONLINE = 1_000_000
PAGE_VIEWS = ONLINE / 60  # one page view a minute per visitor
# Pages a web server process serves a second (a Django process behind
# gunicorn serves some tens to a few hundred); with WHOS_ONLINE_SNAPSHOT_MAX_AGE
# each process asks Redis for at most one snapshot per that many seconds.
PAGES_PER_PROCESS = 100
SNAPSHOT_MAX_AGE = 2.0
AWAY_AFTER = 300  # WHOS_ONLINE_AWAY_AFTER's default

METHOD = """\
## Method

`make bench` (`benchmarks/run.py`) starts a redis-server of its own on a free
loopback port and measures, in one process and one run:

- **Requests** go through Django's `WSGIHandler`, as a WSGI server calls it,
  with `startproject`'s middleware: alone (the bare request), with a
  middleware that only checks a plain cookie (floor A; without the cookie it
  sends one `ZADD` and sets the cookie: floor C, the seed design), or with
  `WhosOnlineMiddleware` after `AuthenticationMiddleware`. Each round runs a
  block of requests of every case, in a shuffled order; each request is
  timed beside a bare one (which goes first alternates), and the case's
  figure for the round is the median of those differences, so a burst of
  noise from elsewhere on the machine hits both. Ratios are taken within
  each round, then summarised: min / median / max over the rounds. Where
  floor A measures below 1% of a bare request it is within this machine's
  noise and counts as 1%.
- **Sets** hold 100,000 users and 100,000 guests seen in the last 14
  minutes, filled with plain pipelines by `benchmarks/layout.py`, the one
  file that knows the key layout (docs/data-model.md). "At the cap" is the
  same data with `WHOS_ONLINE_MAX_MEMBERS` set to 100,000 (the run checks
  `api.counts().is_estimate`), "below" with it at 1,000,000.
- **Time inside Redis** is the sum of `SLOWLOG` durations (logging every
  command) of the commands the app sent, not those a script ran (Redis
  counts both), per operation; floor B is a renewal `ZADD` into the
  100,000 guests (`INFO commandstats`' `usec_per_call` after `CONFIG
  RESETSTAT` agrees, and is kept in results.json). **Core µs** is Redis'
  main-thread CPU (`INFO cpu`) per operation, its reading and writing
  included, measured in a second pass without the SLOWLOG: what a core
  spends, and what the capacity line multiplies.
- **Records per second** are what one Redis core serves to 50 clients of
  `redis-benchmark`, one command at a time, replaying the exact command a
  record sent: the record script, with no guard to vouch for a renewal, for
  a guest or user online ("returning") and for a new guest each call
  ("entering").
- **Prune** removes 1,000,000 stale users (then guests) with
  `call_command("prune_online")`, against one `ZREMRANGEBYSCORE` on a copy;
  the order alternates each round.
- **Instructions** are callgrind's count per request (only with valgrind
  installed): one Python serves every case, a warm-up first, then 200
  requests of each inside `sys.call_tracing`, which nothing else calls, so
  callgrind counts only there and dumps a profile per case. "A new visitor
  each request" gives every request a guard the process has not seen: a
  process that has seen 100,000 visitors is in that state whenever it
  remembers fewer than that.
- **Capacity**: core µs per operation × its rate at 1,000,000 online, each
  viewing a page a minute: a renewal per visitor per
  `WHOS_ONLINE_GUARD_SECONDS`, a heartbeat per visitor per
  `WHOS_ONLINE_AWAY_AFTER` less `WHOS_ONLINE_HEARTBEAT_SECONDS` (a heartbeat
  renews only then; every visitor counted, as if all were logged in with a
  page open), and a snapshot per
  `WHOS_ONLINE_SNAPSHOT_MAX_AGE` (2 s) per web server process, each process
  serving 100 pages a second (the widget's row gives the cost of a snapshot
  with none shared, as on a site that sets it to 0).
- **Renewals and heartbeats** come from visitors whose guard ran out (guards
  of 1 s, heartbeats every 2 s, while they are measured), as a browsing
  visitor comes back every guard period. A browser keeps a user's guard
  cookie as long as the session's, but drops a guest's with its guard
  period: a guest who browses on comes back without it, which is "record
  guest returning" (the record script, for a member online), and what the
  capacity line counts for guests. "record guest renewal" is a guest whose
  guard ran out while the browser still sent it.

The machine is shared and noisy: compare figures within one run only. The
raw figures are in `results.json`; `--quick` (`make bench-smoke`) runs the
same code at small sizes, and its figures mean nothing. `--from-json
results.json` writes this page again from a run's figures.

No longer measured here (in the history before this harness, commit
db24a8a): django-online-users side by side, the example project under
gunicorn, the requests again on PostgreSQL, memory per member, sharding on
a three-master cluster (`make bench-scaling`), and the charts.
"""


def med(values: list[float]) -> float:
    return statistics.median(values)


def cell(values: list[float], unit: str = " µs", digits: int = 1) -> str:
    if len(values) == 1:
        return f"{values[0]:,.{digits}f}{unit}"
    low, mid, high = min(values), med(values), max(values)
    return f"{low:,.{digits}f} / **{mid:,.{digits}f}** / {high:,.{digits}f}{unit}"


def ratio(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}×"
    return f"**{med(values):.2f}×** ({min(values):.2f}–{max(values):.2f})"


def per_round(top: list[float], bottom: list[float]) -> list[float]:
    return [a / b if b > 0 else float("inf") for a, b in zip(top, bottom, strict=True)]


def rows(results: dict[str, Any]) -> tuple[list[list[str]], dict[str, Any]]:
    """The table's rows (figure, measured, floor, ratio, target, verdict),
    and the derived figures results.json keeps."""
    out: list[list[str]] = []
    derived: dict[str, Any] = {}

    def row(
        name: str,
        top: list[float],
        bottom: list[float],
        floor: str,
        unit: str = " µs",
        most: float = 0,
        least: float = 0,
    ) -> None:
        """``most``: the ratio's target; ``least``: the figure's own."""
        ratios = per_round(top, bottom)
        met = med(ratios) <= most if most else med(top) >= least
        target = f"≤ {most:g}×" if most else f"≥ {least:,.0f}{unit}"
        derived[name] = {"ratio_median": med(ratios), "met": met}
        digits = {"/s": 0, " s": 3}.get(unit, 1)
        floor = f"{floor}: {cell(bottom, unit, digits)}"
        verdict = "met" if met else "**missed**"
        out.append(
            [name, cell(top, unit, digits), floor, ratio(ratios), target, verdict]
        )

    measured = results["redis"].items()
    redis = {name: [r["us"] for r in rounds] for name, rounds in measured}
    core = {name: med([r["core_us"] for r in rounds]) for name, rounds in measured}
    b, zadd = redis["ZADD renewal (floor B)"], "renewal ZADD (B)"
    for name in (
        "guest renewal",
        "guest returning",
        "guest entering",
        "user renewal",
        "user entering",
    ):
        if f"record {name}" in redis:  # runs before "guest returning" lack it
            row(
                f"record {name}: µs inside Redis",
                redis[f"record {name}"],
                b,
                zadd,
                most=3,
            )
    rate = results["throughput"]
    names = ("guest returning", "guest entering", "user returning")
    for name in names if rate else ():
        top, bottom = rate[f"record {name}"], rate["ZADD renewal (floor B)"]
        row(f"record {name}: per second, one core", top, bottom, zadd, "/s", least=6e4)
    at, below = redis["widget at the cap"], redis["widget below the cap"]
    row("widget read at the cap: µs inside Redis", at, below, "below the cap", most=1.1)
    raw = results["requests"]["raw"]
    bare = {kind: raw[f"bare {kind}"] for kind in ("guest", "user")}

    def added(name: str, floored: bool = False) -> list[float]:
        """µs over the bare request; ``floored``: at least 1% of it."""
        base = bare["user" if "user" in name else "guest"]
        pairs = zip(raw[name], base, strict=True)
        return [max(a, b / 100) if floored else a for a, b in pairs]

    many = next(name for name in raw if "distinct" in name)
    for name in ("guarded guest", "guarded user", many):
        kind = "user" if "user" in name else "guest"
        floor_a = added(f"plain cookie, {kind} (floor A)", floored=True)
        row(
            f"{name}: µs added to a request",
            added(name),
            floor_a,
            "plain cookie (A)",
            most=2,
        )
    for kind in ("guest", "user"):
        room, guarded = (
            added(f"guarded {kind}, room page"),
            added(f"guarded {kind}", True),
        )
        row(
            f"guarded {kind}, room page: µs added",
            room,
            guarded,
            f"guarded {kind}, plain page",
            most=1.1,
        )
    for name in [n for n in raw if n.startswith("unguarded guest")]:
        seed = added(
            "one ZADD + plain cookie, guest (floor C), " + name.split(", ", 1)[1]
        )
        row(f"{name}: µs added", added(name), seed, "seed design (C)", most=1.15)
    size = f"{results['params']['prune_size']:,}"
    for kind in ("users", "guests"):
        ours, zrem = (
            results["prune"][f"{step}, {kind}"]
            for step in ("prune_online", "ZREMRANGEBYSCORE")
        )
        for figure, unit, what in (
            ("seconds", " s", ""),
            ("us", " µs", " inside Redis"),
        ):
            row(
                f"prune {size} stale {kind}: {unit.strip()}{what}",
                [r[figure] for r in ours],
                [r[figure] for r in zrem],
                "one ZREMRANGEBYSCORE",
                unit,
                most=2,
            )
    counted = results.get("instructions")
    for name in (
        "guarded guest",
        "guarded user",
        "guarded guest, a new visitor each request",
    ):
        if counted and name in counted:
            kind = "user" if "user" in name else "guest"
            base = counted[f"bare {kind}"]
            floor = max(counted[f"plain cookie, {kind} (floor A)"] - base, base / 100)
            row(
                f"{name}: instructions added",
                [counted[name] - base],
                [floor],
                "plain cookie (A)",
                "",
                most=2,
            )
    derived["capacity"] = capacity(core, results["params"])
    derived["guarded_commands"] = results["requests"].get("redis_commands") or {
        name: med([r["commands"] for r in results["redis"][name]])
        for name in ("guarded request", "guarded room page")
    }
    return out, derived


def capacity(core: dict[str, float], params: dict[str, Any]) -> dict[str, Any]:
    """Redis cores for presence at 1,000,000 online (see the method)."""
    guard, heartbeat = (
        params.get("guard_seconds", 300),
        params.get("heartbeat_seconds", 60),
    )
    # A browser keeps a user's guard cookie, so a user is renewed; it drops a
    # guest's with its guard period, so a guest comes back without it.
    guest = core.get("record guest returning", core["record guest renewal"])
    record = max(guest, core["record user renewal"])
    rates = {
        "records": ONLINE / guard,
        "widget renders": min(
            PAGE_VIEWS, PAGE_VIEWS / PAGES_PER_PROCESS / SNAPSHOT_MAX_AGE
        ),
        # A heartbeat renews only when the user's status could turn "away"
        # before the next one: every AWAY_AFTER - HEARTBEAT_SECONDS.
        "heartbeats": ONLINE / max(AWAY_AFTER - heartbeat, heartbeat),
    }
    out: dict[str, Any] = {"rates": rates}
    for label, widget in (
        ("below the cap", "widget below the cap"),
        ("at the cap", "widget at the cap"),
    ):
        costs = {
            "records": record,
            "widget renders": core[widget],
            "heartbeats": core["heartbeat"],
        }
        out[label] = {name: rates[name] * costs[name] / 1e6 for name in rates}
    return out


def markdown(header: list[str], body: list[list[str]]) -> str:
    lines = [header, ["---"] * len(header), *body]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def write(results: dict[str, Any], out: Path) -> None:
    table, derived = rows(results)
    results["derived"] = derived
    env, params, bare = results["environment"], results["params"], results["requests"]
    header = ["Figure", "Measured: min / **median** / max", "Floor, same run"]
    header += ["Ratio: **median** (min–max)", "Target", "Verdict"]
    cap = derived["capacity"]
    cores = {
        label: sum(cap[label].values()) for label in ("below the cap", "at the cap")
    }
    parts = ", ".join(f"{name} {cap['at the cap'][name]:.2f}" for name in cap["rates"])
    verdict = "met" if cores["at the cap"] <= 1 else "**missed**"
    capacity_line = (
        "**1,000,000 online, a page view a minute each: "
        f"{cores['at the cap']:.2f} Redis cores** at the default cap ({parts}); "
        f"{cores['below the cap']:.2f} were every set below its cap. "
        f"Target: ≤ 1 core ({verdict})."
    )
    commands = derived["guarded_commands"]
    head = [
        "# Benchmarks",
        "",
        f"Measured by `make bench` on {env['date']}, a {results['mode']} run of "
        f"{results['minutes']:.1f} minutes at commit {env['commit']}; "
        f"{env['machine']}; {env['software']}. Rounds: {params['rounds']} of "
        f"requests, {params['redis_rounds']} of Redis time, "
        f"{params['prune_rounds']} of prune.",
        "",
        "## Issue 19's figures, each beside its floor",
        "",
        markdown(header, table),
        "",
        capacity_line,
        "",
        "Redis commands per request: "
        + ", ".join(f"{name} {sent:.2f}" for name, sent in commands.items())
        + ". The bare "
        "request (startproject stack, a view that touches nothing), median: "
        f"guest {bare['bare']['bare guest']['median']:.1f} µs, "
        f"user {bare['bare']['bare user']['median']:.1f} µs.",
        "",
        "## Per operation, in Redis",
        "",
        operations(results, cap),
        "",
    ]
    for figure, tool in (
        ("instructions", "valgrind"),
        ("throughput", "redis-benchmark"),
    ):
        if not results.get(figure):
            head += [f"Not measured: {figure} ({tool} is not installed).", ""]
    (out / "README.md").write_text("\n".join(head) + "\n" + METHOD)
    (out / "headline.md").write_text(headline(table, capacity_line))


def operations(results: dict[str, Any], cap: dict[str, Any]) -> str:
    """Each operation's median µs inside Redis, core µs and commands."""
    rates = {"record guest returning": "records", "record user renewal": "records"}
    rates |= {"heartbeat": "heartbeats", "widget below the cap": "widget renders"}
    rates |= {"widget at the cap": "widget renders"}
    body = []
    for name, rounds in results["redis"].items():
        us, core, sent = (
            med([r[k] for r in rounds]) for k in ("us", "core_us", "commands")
        )
        rate = f"{cap['rates'][rates[name]]:,.0f}" if name in rates else ""
        body.append([name, f"{us:.1f}", f"{core:.1f}", f"{sent:.2f}", rate])
    header = ["Operation", "µs inside Redis", "Core µs", "Commands sent"]
    return markdown([*header, "Per second at 1,000,000 online"], body)


HEADLINE = [
    "guarded guest: µs added to a request",
    "guarded user: µs added to a request",
    "distinct: µs added to a request",
    "guarded guest: instructions added",
    "guarded guest, room page: µs added",
    "unguarded guest",
    "record guest renewal: µs inside Redis",
    "record guest returning: µs inside Redis",
    "record user renewal: µs inside Redis",
    "record guest returning: per second",
    "widget read at the cap",
    "stale users: s",
]


def headline(table: list[list[str]], capacity_line: str) -> str:
    """The README's table: the figures a user meets, floors beside them."""
    body = [r[:4] for r in table if any(w in r[0] for w in HEADLINE)]
    header = ["What", "django-whos-online", "Its floor, same run", "Ratio"]
    return markdown(header, body) + "\n\n" + capacity_line + "\n"
