"""docs/benchmarks/README.md and headline.md from a run's results: each
figure of issue 28 beside its floor measured in the same run, as ratios
taken round by round."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from benchmarks.capacity import capacity, capacity_line
from benchmarks.pages_report import METHOD as PAGES_METHOD
from benchmarks.pages_report import page_rows
from benchmarks.table import Row, Table, markdown, med

SEED_USER = "one ZADD + plain cookie, user (floor C)"

# The pages of benchmarks/together.py, each timed above an empty page.
LISTING = "a listing of 50 rows, N viewing each"
PLAIN_ROWS = "the same 50 rows"
FORM = "an admin change form, who else is editing"
DJANGOS_FORM = "Django's own change form"
ASK = "an ask of an open change form"

PEER = "django-online-users 0.3"

METHOD = """\
## Method

`make bench` (`benchmarks/run.py`) starts a redis-server of its own on a free
loopback port and measures, in one process and one run:

- **Floors are the ones measured in the same run**, never replaced. A ratio
  is taken within each round, then summarised: min / median / max over the
  rounds. Where a floor cannot be divided by meaningfully (its median is
  not above twice its rounds' median absolute deviation, nor, for an
  instruction count, above how far two counts of the bare request differ:
  it is within this machine's noise) the ratio column says so and gives no
  ratio; a round whose floor is not above zero gives none either.
- **Requests** go through Django's `WSGIHandler`, as a WSGI server calls it,
  with `startproject`'s middleware: alone (the bare request), with a
  middleware that only checks a plain cookie (floor A; without the cookie it
  sends one `ZADD` of the user's primary key, their user loaded, or the
  guest's address, and sets the cookie: floor C, the seed design), with
  `WhosOnlineMiddleware` after `AuthenticationMiddleware`, or with the
  peer's, django-online-users 0.3's `OnlineNowMiddleware` (a database write
  per logged-in request). Each round runs a block of requests of every case,
  in a shuffled order; each request is timed beside a bare one for the same
  page (which goes first alternates), and the case's figure for the round is
  the median of those differences.
- **Instructions** are callgrind's count per request (only with valgrind
  installed): one Python serves every case, each warmed up with the
  others first and again just before its 200 requests are counted inside
  `sys.call_tracing`, which nothing else calls, so callgrind counts only
  there and dumps a profile per case (the process re-learns Redis' clock
  every 5 s, as a server with steady traffic does, not after seconds spent
  counting other cases). Each case's
  figure is its count less the bare request's, against floor A's count less
  the bare request's. "A visitor not seen" gives each counted request a
  guard the process has not seen, after 4,200 other distinct visitors
  filled what it remembers (4,096). "Browsing pages" is a guarded guest
  going through four pages in no room (`/`, `/forum/`, `/members/`,
  `/about/`) in turn, where the other guarded rows ask one page again and
  again. "A new thread each page" is a logged-in
  reader with a room page's guard opening a room new to them each request;
  its floor is the seed design recording a logged-in user (floor C: their
  session and user loaded, one `ZADD`), as moving a user between rooms
  loads their user, to know their session still authenticates them.
- **The widget** is a page rendering `{% whos_online %}` for a guarded
  guest, against a plain template that lists the same names (one query for
  the same users) and the same counts; each is timed beside the same empty
  page, so each figure is what the listing adds to a page.
"""
METHOD += PAGES_METHOD
METHOD += """\
- **Sets** hold 100,000 users and 100,000 guests seen in the last 14
  minutes, filled with plain pipelines by `benchmarks/layout.py`, the one
  file that knows the key layout (docs/data-model.md). "At the cap" is the
  same data with `WHOS_ONLINE_MAX_MEMBERS` set to 100,000 (the run checks
  `api.counts().is_estimate`), "below" with it at 1,000,000.
- **Time inside Redis** comes from `INFO commandstats` after `CONFIG
  RESETSTAT`: the µs Redis spent executing the commands the app sent,
  per operation. A script's µs already hold those of the commands it runs
  (commandstats lists those too, under their own names: results.json keeps
  every command's calls and µs, `evalsha` beside the `zadd` it ran), so
  they are not counted twice. No SLOWLOG: logging every command costs Redis
  time of its own. Floor B is a renewal `ZADD` into the 100,000 guests.
  **Core µs** is Redis' main-thread CPU (`INFO cpu`) over the same calls:
  command time plus reading requests, writing replies and the event loop's
  system calls, which move with load.
- **Reading thread after thread**: a guarded guest or user whose browser
  keeps its cookies opens a room page (`/thread/N/`) new to them each
  request: all its Redis time, against floor B. The run checks the last
  room each reader opened holds them (a refusal would cost less); a device
  is in the rooms of its latest page only, so each move also takes the
  reader out of the room before.
- **Records per second** are what one Redis core serves to 50 clients of
  `redis-benchmark`, one command at a time, replaying the exact command a
  record sent.
- **Prune** removes 1,000,000 stale users (then guests) with
  `call_command("prune_online")`, against one `ZREMRANGEBYSCORE` on a copy;
  the order alternates each round. The longest block is the longest single
  command (`p100` of `INFO latencystats`, two significant digits).
- **Capacity**: command µs per operation (commandstats, as above; not the
  core µs) × its rate at 1,000,000 online, each opening a page a minute,
  every page a thread new to them: a thread page per visitor a minute, a
  record per visitor per `WHOS_ONLINE_GUARD_SECONDS`, a heartbeat per
  visitor per `WHOS_ONLINE_AWAY_AFTER` less `WHOS_ONLINE_HEARTBEAT_SECONDS`
  (every visitor counted as logged in with a page open), and a snapshot per
  `WHOS_ONLINE_SNAPSHOT_MAX_AGE` (2 s) per web server process, each serving
  100 pages a second. It leaves out what a core spends outside commands
  (reading, writing, system calls): the line gives the core µs figure too.
- **Renewals and heartbeats** come from visitors whose guard ran out (guards
  of 1 s, heartbeats every 2 s, while they are measured). A guest's guard
  cookie is kept for the window, though it spares records for the guard
  period only: a guest who browses on comes back with it, run out, which is
  "record guest returning" (all the Redis time of that request).

The machine is shared and noisy: compare figures within one run only. The
raw figures are in `results.json`; `--quick` (`make bench-smoke`) runs the
same code at small sizes, and its figures mean nothing. `--from-json
results.json` writes this page again from a run's figures. The example
project under load, served by gunicorn to 200 visitors with the app and
without, is measured apart, by `make bench-load`: [load.md](load.md).
"""


def build(results: dict[str, Any]) -> Table:
    t = Table()
    redis = {n: [r["us"] for r in rs] for n, rs in results["redis"].items()}
    b, zadd = redis["ZADD renewal (floor B)"], "renewal ZADD (B)"
    targets = {"guest returning": 3, "guest reading thread after thread": 5}
    targets["user reading thread after thread"] = 5
    for name in (
        "guest entering",
        "user entering",
        "guest returning",
        "guest renewal",
        "user renewal",
    ):
        if f"record {name}" in redis:
            most = targets.get(name, 0)
            t.add(
                f"record {name}: µs inside Redis",
                redis[f"record {name}"],
                b,
                zadd,
                most=most,
            )
    for name in (
        "guest reading thread after thread",
        "user reading thread after thread",
    ):
        if name in redis:
            t.add(f"{name}: µs inside Redis", redis[name], b, zadd, most=targets[name])
    rate = results["throughput"]
    for name in ("guest returning", "guest entering", "user returning") if rate else ():
        top, bottom = rate[f"record {name}"], rate["ZADD renewal (floor B)"]
        t.add(f"record {name}: per second, one core", top, bottom, zadd, "/s")
    at, below = redis["widget at the cap"], redis["widget below the cap"]
    t.add("widget read at the cap: µs inside Redis", at, below, "below the cap")
    raw = results["requests"]["raw"]
    if "widget page" in raw:
        t.add(
            "the widget: µs added to a page",
            raw["widget page"],
            raw["plain listing page"],
            "a plain template, same names and figures",
            most=1.2,
        )
    if "together" in results:
        working_together(t, results["together"])
    parsers = [n.split(", ", 1)[1] for n in raw if n.startswith("unguarded guest")]
    for parser in parsers:
        seed = raw[f"one ZADD + plain cookie, guest (floor C), {parser}"]
        t.add(
            f"unguarded guest, {parser}: µs added",
            raw[f"unguarded guest, {parser}"],
            seed,
            "seed design (C)",
            most=1.3,
        )
    thread = "guarded user, a new thread each page"
    if thread in raw and SEED_USER in raw:
        t.add(
            f"{thread}: µs added",
            raw[thread],
            raw[SEED_USER],
            "seed design (C) recording a user",
            most=1.5,
        )
    plain = {k: raw[f"plain cookie, {k} (floor A)"] for k in ("guest", "user")}
    for name in raw:
        if name.startswith(("guarded", "peer")) and "thread" not in name:
            kind = "user" if "user" in name else "guest"
            t.add(
                f"{peer_name(name)}: µs added to a request",
                raw[name],
                plain[kind],
                "plain cookie (A)",
            )
    size = f"{results['params']['prune_size']:,}"
    for kind in ("users", "guests"):
        ours, zrem = (
            results["prune"][f"{step}, {kind}"]
            for step in ("prune_online", "ZREMRANGEBYSCORE")
        )
        for figure, unit, what, limit in (
            ("seconds", " s", "", 0.1),
            ("us", " µs", " inside Redis", 0.0),
        ):
            t.add(
                f"prune {size} stale {kind}: {unit.strip()}{what}",
                [r[figure] for r in ours],
                [r[figure] for r in zrem],
                "one ZREMRANGEBYSCORE",
                unit,
                limit,
            )
        if "longest_us" in ours[0]:
            longest = [r["longest_us"] / 1000 for r in ours]
            t.add(
                f"prune {size} stale {kind}: longest block",
                longest,
                [r["longest_us"] / 1000 for r in zrem],
                "one ZREMRANGEBYSCORE",
                " ms",
                cap=10,
            )
    counted = results.get("instructions") or {}
    limits = {"guarded guest": 2.5, "guarded user": 3.0}
    limits["guarded guest, a visitor not seen"] = 4
    limits["guarded guest, browsing pages"] = 2.5
    limits["guarded user, a new thread each page"] = 1.5
    seed = counted.get(SEED_USER)
    for name in counted:
        if name.startswith(("bare", "plain", "one ZADD")):
            continue
        kind = "user" if "user" in name else "guest"
        # The bare request counted first and last: their mean, and how far
        # apart they are (runs before this have it counted once).
        bare = [counted[f"bare {kind}"], counted.get(f"bare {kind}, again")]
        base = statistics.mean(b for b in bare if b is not None)
        noise = abs(bare[0] - bare[1]) if bare[1] is not None else 0
        floor, what = counted[f"plain cookie, {kind} (floor A)"], "plain cookie (A)"
        if "new thread" in name and seed is not None:  # a record: the seed's
            floor, what = seed, "seed design (C) recording a user"
        # Pages other than the bare request's, where counted bare too: their
        # URLs' resolving is no cost of ours.
        same_pages = counted.get(f"bare {kind}, {name.partition(', ')[2]}", base)
        t.add(
            f"{peer_name(name)}: instructions added",
            [counted[name] - same_pages],
            [floor - base],
            what,
            "",
            limits.get(name, 0),
            noise,
        )
    page_rows(t, results.get("pages"))
    return t


def working_together(t: Table, found: dict[str, Any]) -> None:
    """A listing's rows with how many view each, an admin change form with
    who else is editing, and its asks: µs above an empty page, each beside
    what it adds to, with its round trips and queries."""
    raw, counted = found["raw"], found["counted"]
    for case, floor, what in (
        (LISTING, PLAIN_ROWS, "the same rows without counts"),
        (FORM, DJANGOS_FORM, "Django's own change form"),
        (ASK, DJANGOS_FORM, "Django's own change form"),
    ):
        cost = counted[case]
        trips, queries = cost["round_trips"], cost["queries"]
        paid = f"{trips} Redis round trip{'' if trips == 1 else 's'}"
        paid += f", {queries} quer{'y' if queries == 1 else 'ies'}"
        t.add(
            f"{case} ({paid}): µs",
            raw[case],
            raw[floor],
            what,
        )


def peer_name(name: str) -> str:
    return name.replace("peer ", f"{PEER}, ")


HEADER = ["Figure", "Measured: min / **median** / max", "Floor, same run"]
HEADER += ["Ratio: **median** (min–max)", "Target", "Verdict"]


def write(results: dict[str, Any], out: Path) -> None:
    table = build(results)
    cap = capacity(results)
    results["derived"] = table.derived | {"capacity": cap}
    env, params, req = results["environment"], results["params"], results["requests"]
    line = capacity_line(cap)
    commands = req.get("redis_commands", {})
    head = [
        "# Benchmarks",
        "",
        f"Measured by `make bench` on {env['date']}, a {results['mode']} run of "
        f"{results['minutes']:.1f} minutes at commit {env['commit']}; "
        f"{env['machine']}; {env['software']}. Rounds: {params['rounds']} of "
        f"requests, {params['redis_rounds']} of Redis time, "
        f"{params['prune_rounds']} of prune.",
        "",
        "## Issue 28's figures, each beside its floor measured in the same run",
        "",
        markdown(HEADER, table.rows),
        "",
        line,
        "",
        "Redis commands per request: "
        + ", ".join(f"{name} {n:.2f}" for name, n in commands.items())
        + ". The bare request (startproject stack, a view that touches "
        f"nothing), median: guest {req['bare']['bare guest']['median']:.1f} µs, "
        f"user {req['bare']['bare user']['median']:.1f} µs.",
        "",
        "## Per operation, in Redis",
        "",
        operations(results),
        "",
    ]
    for figure, tool in (
        ("instructions", "valgrind"),
        ("throughput", "redis-benchmark"),
    ):
        if not results.get(figure):
            head += [f"Not measured: {figure} ({tool} is not installed).", ""]
    if results.get("instructions") and not results.get("pages"):
        head += ["Not measured: the pages (a run made before they were added).", ""]
    if "peer" not in " ".join(results.get("instructions") or req["raw"]):
        head += [
            f"Not measured: {PEER} ({results.get('peer_error', 'not installed')}).",
            "",
        ]
    (out / "README.md").write_text("\n".join(head) + "\n" + METHOD)
    (out / "headline.md").write_text(headline(table.rows, line))


def operations(results: dict[str, Any]) -> str:
    """Each operation's median µs inside Redis, core µs and commands sent,
    and what Redis ran for it (a script's own commands too), first round."""
    body = []
    for name, rounds in results["redis"].items():
        us, core, sent = (
            med([r[k] for r in rounds]) for k in ("us", "core_us", "commands")
        )
        ran = sorted(
            rounds[0].get("per_command", {}).items(), key=lambda c: -c[1]["us"]
        )
        text = ", ".join(f"{cmd} {c['calls']:g}× {c['us']:.1f} µs" for cmd, c in ran)
        body.append([name, f"{us:.1f}", f"{core:.1f}", f"{sent:.2f}", text])
    header = ["Operation", "µs inside Redis", "Core µs", "Commands sent"]
    return markdown([*header, "Run by Redis: calls and µs each (commandstats)"], body)


HEADLINE = (
    "guarded guest: instructions",
    "guarded user: instructions",
    "browsing pages: instructions",
    "a visitor not seen: instructions",
    "record guest entering: µs",
    "record user entering: µs",
    "record guest returning: µs",
    "reading thread after thread",
    "a new thread each page",
    "unguarded guest, redis-py",
    "the widget",
    "whole page with the app, guest, as shipped",
    "whole page with the app, user, as shipped",
    "widget page, guest, as shipped",
    "widget page, user, as shipped",
    "stale users: s",
    "stale users: longest",
    f"{PEER}, guest: instructions",
    f"{PEER}, user: instructions",
)


def headline(rows: list[Row], line: str) -> str:
    """The README's table: the figures a reader asks about, floors beside."""
    body = [
        [r.name, r.measured, r.floor, r.ratio, r.target]
        for key in HEADLINE
        for r in rows
        if key in r.name
    ]
    header = ["What", "django-whos-online", "Its floor, same run", "Ratio", "Target"]
    return markdown(header, body) + "\n\n" + line + "\n"
