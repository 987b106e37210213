"""Turn a run's results into docs/benchmarks/: README.md, PNG charts and
results.json. Every verdict on a target is computed here, from the figures,
and a missed target is reported as missed with its figure."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchmarks.per_request import BY_NAME  # noqa: E402
from whos_online.presence import PRUNE_BATCH  # noqa: E402

OURS = "#0b6e4f"
THEIRS = "#b35806"
NEUTRAL = "#6e7781"

GUARDED_LIMIT_US = 5.0
UNGUARDED_LIMIT = 1.3  # × a bare ZADD round trip
LOAD_LIMIT = 0.97
PRUNE_LIMIT = 1.5  # × ZREMRANGEBYSCORE
BLOCK_LIMIT_MS = 5.0  # "a few milliseconds"
GUARDED_VS_DOU = 100.0
UNGUARDED_VS_DOU = 5.0


# Figures ---------------------------------------------------------------------


def added(pr: dict[str, Any], name: str) -> float:
    base = BY_NAME[name].baseline
    diffs = [a - b for a, b in zip(pr["means"][name], pr["means"][base], strict=True)]
    return statistics.median(diffs)


def spread(pr: dict[str, Any], name: str) -> tuple[float, float]:
    base = BY_NAME[name].baseline
    diffs = [a - b for a, b in zip(pr["means"][name], pr["means"][base], strict=True)]
    if len(diffs) < 2:
        return diffs[0], diffs[0]
    q = statistics.quantiles(diffs, n=4)
    return q[0], q[2]


def zadd(pr: dict[str, Any]) -> float:
    return statistics.median(pr["zadd"])


def verdict(ok: bool) -> str:
    return "**met**" if ok else "**missed**"


def us(value: float) -> str:
    if abs(value) >= 1000:
        return f"{value / 1000:,.2f} ms"
    if abs(value) >= 100:
        return f"{value:,.0f} µs"
    return f"{value:,.1f} µs"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def load_summary(load: dict[str, Any]) -> dict[str, dict[str, float]]:
    summary = {}
    for name, phases in load["phases"].items():
        requests = sum(p["requests"] for p in phases)
        summary[name] = {
            "rps": statistics.median(p["requests"] / p["seconds"] for p in phases),
            "errors": sum(p["errors"] for p in phases),
            "server_cpu_us": 1e6
            * sum(p["server_cpu"] for p in phases)
            / max(requests, 1),
            "generator_cores": statistics.median(
                p["generator_cpu"] / p["seconds"] for p in phases
            ),
            **load["latency"][name],
        }
    without = load["phases"]["without"]
    for name in summary:
        ratios = [
            p["requests"] / w["requests"]
            for p, w in zip(load["phases"][name], without, strict=True)
            if w["requests"]
        ]
        summary[name]["ratio"] = statistics.median(ratios) if ratios else 0.0
        summary[name]["ratio_low"] = min(ratios, default=0.0)
        summary[name]["ratio_high"] = max(ratios, default=0.0)
    for name in summary:
        summary[name]["cpu_ratio"] = (
            summary[name]["server_cpu_us"] / summary["without"]["server_cpu_us"]
        )
    return summary


# Charts ----------------------------------------------------------------------

PER_REQUEST_ROWS = [
    ("ours-user-guarded", "ours: user, guarded"),
    ("ours-guest-guarded", "ours: guest, guarded"),
    ("dou-guest", "django-online-users: guest"),
    ("zadd-guest", "one ZADD in a middleware: guest"),
    ("ours-guest", "ours: guest, unguarded"),
    ("ours-user", "ours: user, guard expired"),
    ("zadd-user-me", "one ZADD in a middleware: user (view loads user)"),
    ("ours-user-me", "ours: user, guard expired (view loads user)"),
    ("dou-user-me", "django-online-users: user (view loads user)"),
    ("ours-user-new", "ours: user, no guard yet (once a session)"),
    ("dou-user", "django-online-users: user"),
]


def chart_per_request(pr: dict[str, Any], path: Path) -> None:
    labels = [label for _, label in PER_REQUEST_ROWS]
    measured = [added(pr, name) for name, _ in PER_REQUEST_ROWS]
    values = [max(value, 0.1) for value in measured]  # a log axis has no zero
    palette = {"ours": OURS, "dou": THEIRS, "zadd": NEUTRAL}
    colors = [palette[name.split("-")[0]] for name, _ in PER_REQUEST_ROWS]
    fig, ax = plt.subplots(figsize=(9.5, 5), dpi=110)
    bars = ax.barh(labels, values, color=colors)
    ax.set_xscale("log")
    ax.invert_yaxis()
    floor = zadd(pr)
    top = ax.get_xaxis_transform()
    ax.axvline(floor, color=NEUTRAL, linestyle="--", linewidth=1)
    ax.text(
        floor,
        1.01,
        f"bare ZADD {us(floor)}",
        color=NEUTRAL,
        fontsize=8,
        transform=top,
        ha="center",
        va="bottom",
    )
    ax.axvline(GUARDED_LIMIT_US, color=OURS, linestyle=":", linewidth=1)
    ax.text(
        GUARDED_LIMIT_US,
        1.01,
        "5 µs",
        color=OURS,
        fontsize=8,
        transform=top,
        ha="center",
        va="bottom",
    )
    for bar, value, raw in zip(bars, values, measured, strict=True):
        text = us(raw) if raw > 0.1 else f"≈ 0 ({us(raw)})"
        ax.text(
            value * 1.08,
            bar.get_y() + bar.get_height() / 2,
            text,
            va="center",
            fontsize=8,
        )
    ax.set_xlabel("µs added per request (median of interleaved rounds; log scale)")
    ax.set_title("What each middleware adds to a request (lower is better)", pad=18)
    ax.set_xlim(right=max(values) * 4)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def chart_scaling(scale: dict[str, Any], path: Path) -> None:
    sizes = [s["size"] for s in scale["sizes"]]
    series = [
        ("tag", "{% whos_online %} render (1 round trip + 1 query)", OURS, "o"),
        ("snapshot", "snapshot alone (the tag's round trip)", "#1f77b4", "s"),
        ("record", "record (an unguarded request's round trip)", "#9467bd", "^"),
        ("zadd", "bare redis-py ZADD round trip", NEUTRAL, "v"),
        ("guarded", "guarded middleware call (no I/O)", "#2ca02c", "D"),
    ]
    fig, ax = plt.subplots(figsize=(9, 5.6), dpi=110)
    for name, label, color, marker in series:
        values = [statistics.median(s["timings"][name]) for s in scale["sizes"]]
        ax.plot(sizes, values, marker=marker, color=color, label=label)
        ax.annotate(
            us(values[-1]),
            (sizes[-1], values[-1]),
            textcoords="offset points",
            xytext=(6, -3),
            fontsize=8,
            color=color,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("members online (users set)")
    ax.set_ylabel("µs per call (median; log scale)")
    ax.set_title("Cost against the number online: flat lines are O(1) or O(log N)")
    ax.set_xlim(right=sizes[-1] * 6)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.13),
        ncol=2,
        frameon=False,
    )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def chart_prune(scale: dict[str, Any], path: Path) -> None:
    prunes = scale["prunes"]
    labels = [f"{p['size']:,} stale" for p in prunes]
    ours = [statistics.median(p["prune_seconds"]) * 1000 for p in prunes]
    theirs = [statistics.median(p["zrem_seconds"]) * 1000 for p in prunes]
    plain = [statistics.median(p["rank_seconds"]) * 1000 for p in prunes]
    longest = [p["longest_batch_us"] / 1000 for p in prunes]
    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=110)
    x = range(len(labels))
    width = 0.2
    groups = [
        (ours, "presence.prune() in batches: total", OURS, -1.5 * width),
        (
            theirs,
            "one ZREMRANGEBYSCORE (Redis blocked throughout)",
            NEUTRAL,
            -0.5 * width,
        ),
        (plain, "same batches, plain ZREMRANGEBYRANK: total", "#9467bd", 0.5 * width),
        (
            longest,
            "prune: longest single batch (Redis blocked)",
            "#2ca02c",
            1.5 * width,
        ),
    ]
    for values, label, color, offset in groups:
        bars = ax.bar([i + offset for i in x], values, width, label=label, color=color)
        for bar, value in zip(bars, values, strict=True):
            ax.text(
                bar.get_x() + bar.get_width() / 2,
                value * 1.1,
                f"{value:,.1f}",
                ha="center",
                fontsize=8,
            )
    ax.set_yscale("log")
    ax.set_xticks(list(x), labels)
    ax.set_ylabel("milliseconds (log scale)")
    ax.set_title("Pruning stale members, next to Redis' own ZREMRANGEBYSCORE")
    ax.set_ylim(top=max(ours + theirs) * 8)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def chart_memory(scale: dict[str, Any], path: Path) -> None:
    memory = scale["memory"]
    fig, ax = plt.subplots(figsize=(7, 3.2), dpi=110)
    labels = [m["kind"] for m in memory]
    values = [m["bytes_per_member"] for m in memory]
    bars = ax.barh(labels, values, color=OURS)
    ax.invert_yaxis()
    for bar, value in zip(bars, values, strict=True):
        ax.text(
            value + 1,
            bar.get_y() + bar.get_height() / 2,
            f"{value:.0f} B",
            va="center",
            fontsize=9,
        )
    ax.set_xlim(right=max(values) * 1.25)
    ax.set_xlabel(f"bytes per member (MEMORY USAGE, {memory[0]['size']:,} members)")
    ax.set_title("Redis memory per member online")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def chart_load(summary: dict[str, dict[str, float]], path: Path) -> None:
    names = [n for n in ("without", "with", "with-noguard") if n in summary]
    labels = {
        "without": "without\nthe middleware",
        "with": "with it\n(clients keep the guard)",
        "with-noguard": "with it, guard dropped\n(every request records)",
    }
    colors = {"without": NEUTRAL, "with": OURS, "with-noguard": "#9467bd"}
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), dpi=110)
    rps = [summary[n]["rps"] for n in names]
    bars = left.bar([labels[n] for n in names], rps, color=[colors[n] for n in names])
    for bar, name in zip(bars, names, strict=True):
        left.text(
            bar.get_x() + bar.get_width() / 2,
            bar.get_height() * 1.01,
            f"{summary[name]['rps']:,.0f}\n({summary[name]['ratio']:.1%})",
            ha="center",
            fontsize=8,
        )
    left.set_ylabel("requests per second (median phase)")
    left.set_ylim(top=max(rps) * 1.2)
    left.set_title("Example project under gunicorn")
    left.tick_params(axis="x", labelsize=8)
    width = 0.27
    for i, name in enumerate(names):
        values = [summary[name][p] for p in ("p50", "p90", "p99")]
        offsets = [j + (i - 1) * width for j in range(3)]
        label = labels[name].replace("\n", " ")
        right.bar(offsets, values, width, label=label, color=colors[name])
    right.set_xticks(range(3), ["p50", "p90", "p99"])
    right.set_ylabel("latency, ms")
    right.set_title("Latency percentiles")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# Markdown ----------------------------------------------------------------------


DOU_UNGUARDED = [
    ("ours-user", "dou-user", "guard expired, the view touches no session"),
    ("ours-user-me", "dou-user-me", "guard expired, the view loads the user"),
    ("ours-user-new", "dou-user", "no guard yet, the view touches no session"),
]


def per_request_table(pr: dict[str, Any]) -> str:
    floor = zadd(pr)
    rows = []
    for name, label in [
        ("noop-user", "a do-nothing middleware (one more link in the chain)"),
        *PER_REQUEST_ROWS,
    ]:
        low, high = spread(pr, name)
        rows.append(
            [
                label,
                us(added(pr, name)),
                f"{us(low)} – {us(high)}",
                f"{added(pr, name) / floor:.2f}×",
                *counts_cells(pr["counts"][name]),
            ]
        )
    rows.append(
        ["bare redis-py `ZADD` round trip (the floor)", us(floor), "", "1.00×"]
        + ["1 (ZADD)", "0", "0", "0", "no"]
    )
    return table(
        ["Variant", "µs added", "IQR over rounds", "× ZADD", "Redis commands"]
        + ["SQL", "session loads", "user loads", "sets guard"],
        rows,
    )


def postgres_section(pg: dict[str, Any] | None) -> str:
    if not pg or "skipped" in pg:
        why = pg["skipped"] if pg else "this run did not try"
        return f"Not measured in this run: {why}."
    return POSTGRES_TEMPLATE.format(
        database=pg.get("database", "PostgreSQL"),
        rounds=pg["rounds"],
        table=per_request_table(pg),
    )


POSTGRES_TEMPLATE = """\
The same cases, with the sessions, the users and django-online-users' table in
{database} on loopback TCP (a database of the run's own, created and dropped by it),
as most sites run Django: each SQL query is now a round trip, as each Redis command
is. {rounds} rounds; everything else as above.

{table}"""


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def counts_cells(counts: dict[str, Any]) -> list[str]:
    commands = counts["redis"]
    redis = f"{len(commands)}" + (f" ({', '.join(commands)})" if commands else "")
    return [
        redis,
        str(counts["sql"]),
        str(counts["session_loads"]),
        str(counts["user_loads"]),
        "yes" if counts["guard_set"] else "no",
    ]


def is_quiet(counts: dict[str, Any]) -> bool:
    """No Redis command, SQL query, session load or user load."""
    return not (
        counts["redis"]
        or counts["sql"]
        or counts["session_loads"]
        or counts["user_loads"]
    )


def step_rows(steps: list[list[Any]]) -> list[list[str]]:
    rows = []
    for label, ns in steps:
        indent = len(label) - len(label.lstrip())
        rows.append(["&nbsp;" * indent + label.strip(), f"{ns / 1000:,.2f} µs"])
    return rows


def profile_rows(profile: list[list[Any]]) -> list[list[str]]:
    return [[f"`{fn}`", f"{calls:g}", f"{ns:,.0f} ns"] for fn, calls, ns in profile]


def step(steps: list[list[Any]], prefix: str) -> float:
    """µs of the first breakdown step whose label starts with ``prefix``."""
    for label, ns in steps:
        if label.strip().startswith(prefix):
            return float(ns) / 1000
    return float("nan")


def why_missed(
    pr: dict[str, Any],
    a: dict[str, float],
    scale: dict[str, Any],
    pg: dict[str, Any] | None,
) -> str:
    """Where the time of each target goes, from this run's figures."""
    floor = zadd(pr)
    g = pr["breakdown"]["timed"]
    u = pr["unguarded"]["timed"]
    bare = step(u, "bare ZADD")
    noop_script = step(u, "EVALSHA of `return 1`")
    inside_script = step(u, "inside Redis: the record script")
    inside_entry = step(u, "inside Redis: the record script, a guest entering")
    inside_zadd = step(u, "inside Redis: ZADD")
    cookie = step(g, "parse_cookie(), session + guard") - step(
        g, "parse_cookie(), session only"
    )
    parts = step(g, "middleware(request), user") + cookie + max(a["noop-user"], 0)
    record = step(u, "presence.record(): the record script")
    zadd_x = a["zadd-guest"] / floor
    dou_x = a["dou-user-me"] / a["zadd-user-me"]
    values = {
        "chain_x": f"{a['ours-user-guarded'] / parts:.1f}",
        "user_guarded": us(a["ours-user-guarded"]),
        "guest_guarded": us(a["ours-guest-guarded"]),
        "call": us(step(g, "middleware(request), user")),
        "call_guest": us(step(g, "middleware(request), guest")),
        "cookie": us(cookie),
        "link": noise_or_us(a["noop-user"]),
        "address": us(step(g, "client_address(META)")),
        "zadd_mw": us(a["zadd-guest"]),
        "zadd_mw_x": f"{zadd_x:.2f}",
        "reach": (
            "so 1.3× the loop is out of reach for any middleware measured this way"
            if zadd_x > UNGUARDED_LIMIT
            else "within 1.3× of the loop in this run"
        ),
        "floor": us(floor),
        "ours_guest": us(a["ours-guest"]),
        "ours_guest_x": f"{a['ours-guest'] / a['zadd-guest']:.2f}",
        "beyond": us(a["ours-guest"] - a["zadd-guest"]),
        "record": us(record),
        "python_rest": noise_or_us(
            record - noop_script - (inside_script - inside_zadd)
        ),
        "bare": us(bare),
        "args": us(noop_script - bare),
        "noop_script": us(noop_script),
        "inside_more": us(inside_script - inside_zadd),
        "inside_script": us(inside_script),
        "inside_entry": us(inside_entry),
        "inside_zadd": us(inside_zadd),
        "identify": us(step(u, "identify(request)")),
        "set_guard": us(step(u, "set_guard(")),
        "ours_user": us(a["ours-user"]),
        "ours_new": us(a["ours-user-new"]),
        "dou_user": us(a["dou-user"]),
        "user_x": f"{a['dou-user'] / a['ours-user']:.1f}",
        "zadd_me": us(a["zadd-user-me"]),
        "ours_me": us(a["ours-user-me"]),
        "dou_me": us(a["dou-user-me"]),
        "dou_x": f"{dou_x:.1f}",
        "dou_reach": (
            "So on such a page 5× is out of reach for any round trip to Redis "
            "against SQLite in the same process, on tmpfs."
            if dou_x < UNGUARDED_VS_DOU
            else "So 5× is within reach of one round trip."
        )
        + postgres_comparison(pg),
        "prunes": " ".join(prune_story(p) for p in reversed(scale["prunes"])),
    }
    return WHY_TEMPLATE.format(**values)


WHY_TEMPLATE = """\
- **Guarded requests.** A user's guarded request adds {user_guarded} in the chain, a
  guest's {guest_guarded}. Timed alone, the whole middleware call takes {call} for a
  user and {call_guest} for a guest: each process remembers the guards it has verified,
  so a browsing visitor's guard costs a dictionary lookup rather than a MAC, and a
  guest's also needs the client address ({address}; parsing is memoised). Parsing the
  extra cookie costs {cookie} and one more link in Django's chain {link}. In the chain,
  on a fresh request, the same code costs {chain_x}× the sum of those parts timed in a
  tight loop, where its data stays hot in the CPU caches.
- **Unguarded requests against a bare `ZADD`.** A middleware that sends one bare `ZADD`
  and nothing else adds {zadd_mw} to a guest's request, {zadd_mw_x}× the {floor} of a
  `ZADD` in a tight loop, {reach}. Ours adds {ours_guest}, {ours_guest_x}× that one
  `ZADD`. Timed alone, its round trip takes {record} against {bare} for a `ZADD`:
  {args} for carrying the script's keys and arguments (an empty script with the same
  arguments takes {noop_script}), {inside_more} more work inside Redis ({inside_script}
  for the record script renewing a guest already in the window, against {inside_zadd}
  for `ZADD`; a guest entering the window, who may beat the record, costs
  {inside_entry}, since then it counts everyone online), and {python_rest} in Python
  around the call. Around it, `identify()` takes {identify} and `set_guard()`
  {set_guard}. A user whose guard has expired is named by it, so their request loads
  neither the session nor the user: {ours_user}. Only a session's first request without
  a guard (the login request has the user at hand; this is a guard cookie lost, or a
  session older than the middleware) loads both, two SQL queries: {ours_new}.
- **Against django-online-users, unguarded.** A user's request with the guard expired,
  on a page that touches no session: ours adds {ours_user} against {dou_user},
  {user_x}× less. On a page that loads the user anyway, even the one-`ZADD` middleware
  adds {zadd_me} (ours {ours_me}) against {dou_me} for django-online-users: {dou_x}×.
  {dou_reach} Every round trip costs more in a request whose view has just queried
  SQLite than in one that has not; the same `ZADD` in a middleware shows it.
- **Pruning.** {prunes}"""


def postgres_headline(pg: dict[str, Any] | None) -> list[list[str]]:
    if not pg or "skipped" in pg:
        return []
    extra_sql = pg["counts"]["dou-user-me"]["sql"] - pg["counts"]["none-user-me"]["sql"]
    return [
        [
            "… the same, with the database in PostgreSQL",
            f"+{us(added(pg, 'ours-user-me'))}: 1 Redis round trip",
            f"+{us(added(pg, 'dou-user-me'))}: {extra_sql} more SQL queries",
        ]
    ]


def postgres_comparison(pg: dict[str, Any] | None) -> str:
    if not pg or "skipped" in pg:
        return ""
    ours, theirs = added(pg, "ours-user-me"), added(pg, "dou-user-me")
    ours_open, theirs_open = added(pg, "ours-user"), added(pg, "dou-user")
    return (
        " With the database in PostgreSQL, where each of its queries is a round "
        f"trip too, django-online-users adds {us(theirs)} to that page against "
        f"{us(ours)} for ours ({theirs / ours:.1f}×), and {us(theirs_open)} against "
        f"{us(ours_open)} on a page that touches no session "
        f"({theirs_open / ours_open:.1f}×)."
    )


def noise_or_us(value: float) -> str:
    return us(value) if value > 0 else "nothing measurable"


def prune_story(p: dict[str, Any]) -> str:
    """How one prune went, by the path the prune script took."""
    size, online = f"{p['size']:,}", f"{p['online']:,}"
    single, ours = ms(median_of(p["zrem_seconds"])), ms(median_of(p["prune_seconds"]))
    longest = f"{p['longest_batch_us'] / 1000:.1f} ms"
    if p["size"] > p["online"] and p["online"] <= PRUNE_BATCH:
        return (
            f"{size} stale members with {online} online make a mostly stale set, so "
            "the prune copies the few online, `UNLINK`s the set, whose memory Redis "
            "then frees in its background thread (`ZREMRANGEBYSCORE` frees it "
            f"inline, and that is in its figure), and puts the copy in its place: "
            f"{ours} against {single} for one `ZREMRANGEBYSCORE`, in one script of "
            f"{longest}."
        )
    server_x = p["prune_server_us"] / max(p["zrem_server_us"], 1)
    return (
        f"{size} stale members with {online} online are more online than one script "
        f"may copy ({PRUNE_BATCH:,}), so they are removed {PRUNE_BATCH:,} at a time: "
        f"one `ZREMRANGEBYSCORE` removes them in {single}, blocking Redis throughout; "
        "the same batches sent as plain `ZREMRANGEBYRANK`s take "
        f"{ms(median_of(p['rank_seconds']))}, and the prune {ours} ({p['batches']} "
        f"scripts). Inside Redis the batches took {server_x:.2f}× the time of the "
        "one big removal; the rest is the round trips. A batch takes "
        f"{p['median_batch_us'] / 1000:.1f} ms inside Redis (median), "
        f"{p.get('p99_batch_us', 0) / 1000:.1f} ms at the 99th percentile; the "
        f"longest, {longest}, includes any time the OS gave Redis' core to another "
        "process on this shared machine."
    )


def median_of(values: list[float]) -> float:
    return statistics.median(values)


def write(results: dict[str, Any], out: Path) -> None:
    pr = results["per_request"]
    pg = results.get("per_request_postgres")
    scale = results["scale"]
    load = results["load"]
    env = results["environment"]
    params = results["params"]
    floor = zadd(pr)
    counts = pr["counts"]
    a = {name: added(pr, name) for name in BY_NAME if BY_NAME[name].baseline}

    chart_per_request(pr, out / "per-request.png")
    chart_scaling(scale, out / "scaling.png")
    chart_prune(scale, out / "prune.png")
    chart_memory(scale, out / "memory.png")
    summary = load_summary(load) if load else None
    if summary:
        chart_load(summary, out / "load.png")
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")

    sizes = scale["sizes"]
    tag = [median_of(s["timings"]["tag"]) for s in sizes]
    snap = [median_of(s["timings"]["snapshot"]) for s in sizes]
    # Up to 50 members the tag lists everyone, so its template grows with
    # the names; growth with N is judged from the first size with 50 names.
    full = next((i for i, s in enumerate(sizes) if s["size"] >= 50), 0)
    n_from, n_to = sizes[full]["size"], sizes[-1]["size"]
    log_growth = math.log2(n_to) / math.log2(max(n_from, 2))
    tag_growth = tag[-1] / tag[full]
    snap_growth = snap[-1] / snap[full]
    tag_trips = max(len(s["tag_redis"]) for s in sizes)
    tag_sql = max(s["tag_sql"] for s in sizes)
    prune = scale["prunes"][-1]
    prune_total = median_of(prune["prune_seconds"])
    prune_zrem = median_of(prune["zrem_seconds"])
    prune_ratio = prune_total / prune_zrem
    longest_ms = prune["longest_batch_us"] / 1000

    targets: list[list[str]] = []

    def target(name: str, measured: str, ok: bool) -> None:
        targets.append([name, measured, verdict(ok)])

    for name, who in (("ours-user-guarded", "user"), ("ours-guest-guarded", "guest")):
        c = counts[name]
        target(
            f"Guarded request ({who}): adds < 5 µs; no Redis, SQL, session, user",
            f"{us(a[name])}; {len(c['redis'])} Redis, {c['sql']} SQL, "
            f"{c['session_loads']} session and {c['user_loads']} user loads",
            a[name] < GUARDED_LIMIT_US and is_quiet(c),
        )
    for name, label, in_chain in (
        ("ours-guest", "guest", "zadd-guest"),
        ("ours-user", "user, guard expired; the view touches no session", "zadd-guest"),
        (
            "ours-user-me",
            "user, guard expired; the view loads the user anyway",
            "zadd-user-me",
        ),
        (
            "ours-user-new",
            "user, no guard yet, once a session; the view touches no session",
            "zadd-guest",
        ),
    ):
        c = counts[name]
        ratio = a[name] / floor
        own_sql = c["sql"] - counts[BY_NAME[name].baseline]["sql"]
        extra = f", plus {own_sql} SQL (session and user)" if own_sql else ""
        target(
            f"Unguarded request ({label}): ≤ 1.3× a bare ZADD, one round trip",
            f"{ratio:.2f}× ({us(a[name])} against {us(floor)}); "
            f"{len(c['redis'])} round trip{extra}. One ZADD in a middleware adds "
            f"{us(a[in_chain])} here; ours is {a[name] / a[in_chain]:.2f}× that",
            ratio <= UNGUARDED_LIMIT and len(c["redis"]) == 1 and not own_sql,
        )
    if summary:
        target(
            "Under load: ≥ 97% of the requests per second served without it",
            f"{summary['with']['ratio']:.1%} ({summary['with']['rps']:,.0f} against "
            f"{summary['without']['rps']:,.0f} req/s); server CPU per request "
            f"{summary['with']['cpu_ratio']:.1%} of without",
            summary["with"]["ratio"] >= LOAD_LIMIT
            and 1 / summary["with"]["cpu_ratio"] >= LOAD_LIMIT,
        )
    target(
        "Tag: ≤ 2 Redis round trips and ≤ 1 SQL query at every size",
        f"at most {tag_trips} round trip and {tag_sql} query, "
        f"from {sizes[0]['size']:,} to {n_to:,} online",
        tag_trips <= 2 and tag_sql <= 1,
    )
    target(
        "Tag: time grows no faster than O(log N)",
        f"{us(tag[full])} at {n_from:,} → {us(tag[-1])} at {n_to:,}: ×{tag_growth:.2f} "
        f"(log N grows ×{log_growth:.1f}; the snapshot round trip ×{snap_growth:.2f})",
        tag_growth <= log_growth,
    )
    target(
        f"Prune {prune['size']:,} stale: ≤ 1.5× Redis' own ZREMRANGEBYSCORE",
        f"{prune_ratio:.2f}× ({ms(prune_total)} against {ms(prune_zrem)})",
        prune_ratio <= PRUNE_LIMIT,
    )
    target(
        "Prune: never blocks Redis more than a few ms (≤ 5 ms) at a time",
        f"longest batch {longest_ms:.1f} ms inside Redis, median "
        f"{prune['median_batch_us'] / 1000:.1f} ms, 99th percentile "
        f"{prune.get('p99_batch_us', 0) / 1000:.1f} ms ({prune['batches']} batches); "
        f"the single ZREMRANGEBYSCORE blocks {prune['zrem_server_us'] / 1000:.1f} ms",
        longest_ms <= BLOCK_LIMIT_MS,
    )

    def against_dou(b: dict[str, float], where: str) -> None:
        x = b["dou-user"] / max(b["ours-user-guarded"], 1e-9)
        target(
            f"≥ 100× less than django-online-users{where}: guarded user",
            f"{x:,.0f}× ({us(b['dou-user'])} against {us(b['ours-user-guarded'])})",
            x >= GUARDED_VS_DOU,
        )
        for ours, theirs, label in DOU_UNGUARDED:
            x = b[theirs] / b[ours]
            target(
                f"≥ 5× less than django-online-users{where}: unguarded user, {label}",
                f"{x:.1f}× ({us(b[theirs])} against {us(b[ours])})",
                x >= UNGUARDED_VS_DOU,
            )

    against_dou(a, "")
    if pg and "skipped" not in pg:
        against_dou(
            {name: added(pg, name) for name in BY_NAME if BY_NAME[name].baseline},
            ", PostgreSQL",
        )

    extra_sql = counts["dou-user-me"]["sql"] - counts["none-user-me"]["sql"]
    headline_rows = [
        [
            "Logged-in user, browsing (guard cookie present)",
            f"**+{us(a['ours-user-guarded'])}**: no Redis, no SQL, "
            "no session or user load",
            f"+{us(a['dou-user'])}: {counts['dou-user']['sql']} SQL queries, "
            "on every request",
        ],
        [
            "Logged-in user, first request in 5 minutes",
            f"+{us(a['ours-user'])}: 1 Redis round trip, no SQL",
            f"+{us(a['dou-user'])}: {counts['dou-user']['sql']} SQL queries",
        ],
        [
            "… the same, on a page that loads the user anyway",
            f"+{us(a['ours-user-me'])}: 1 Redis round trip",
            f"+{us(a['dou-user-me'])}: {extra_sql} more SQL queries",
        ],
        *postgres_headline(pg),
        [
            "Guest, browsing (guard cookie present)",
            f"+{us(a['ours-guest-guarded'])}: no Redis, no SQL",
            f"+{us(a['dou-guest'])} (it does not count guests)",
        ],
        [
            "Guest, first request in 5 minutes",
            f"+{us(a['ours-guest'])}: 1 Redis round trip",
            f"+{us(a['dou-guest'])} (it does not count guests)",
        ],
        ["A bare redis-py `ZADD` round trip, same run (the floor)", us(floor), ""],
    ]
    if summary:
        headline_rows.append(
            [
                "Example project under gunicorn: req/s with it ÷ without",
                f"{summary['with']['ratio']:.1%}",
                "",
            ]
        )
    headline_rows += [
        [
            f"`{{% whos_online %}}` with {n_to:,} online",
            f"{us(tag[-1])}: {len(sizes[-1]['tag_redis'])} round trip, "
            f"{sizes[-1]['tag_sql']} query",
            "",
        ],
        [
            f"Prune {prune['size']:,} stale members",
            f"{ms(prune_total)} ({prune_ratio:.2f}× ZREMRANGEBYSCORE); Redis blocked "
            f"≤ {longest_ms:.1f} ms at a time",
            "",
        ],
    ]

    identity_rows = [[label, *counts_cells(c)] for label, c in pr["identity"].items()]

    scaling_rows = []
    for s in sizes:
        t = s["timings"]
        scaling_rows.append(
            [
                f"{s['size']:,}",
                us(median_of(t["tag"])),
                f"{len(s['tag_redis'])} ({', '.join(s['tag_redis'])}) / {s['tag_sql']}",
                us(median_of(t["snapshot"])),
                us(median_of(t["record"])),
                us(median_of(t["zadd"])),
                us(median_of(t["guarded"])),
                f"{s['memory_per_member']:.0f} B",
            ]
        )
    prune_rows = []
    for p in scale["prunes"]:
        total, zrem = median_of(p["prune_seconds"]), median_of(p["zrem_seconds"])
        ranks = median_of(p["rank_seconds"])
        prune_rows.append(
            [
                f"{p['size']:,} (+{p['online']:,} online)",
                f"{ms(total)} ({p['prune_server_us'] / 1000:.1f} ms)",
                f"{ms(zrem)} ({p['zrem_server_us'] / 1000:.1f} ms)",
                f"{total / zrem:.2f}×",
                f"{ms(ranks)} ({p['rank_server_us'] / 1000:.1f} ms)",
                str(p["batches"]),
                f"{p['median_batch_us'] / 1000:.2f} ms",
                f"{p['longest_batch_us'] / 1000:.2f} ms",
            ]
        )
    memory_rows = [
        [
            m["kind"],
            f"`{m['example']}`",
            f"{m['size']:,}",
            f"{m['bytes_per_member']:.0f} B",
            f"{m['bytes_per_member'] * 1e6 / 2**20:.0f} MiB",
        ]
        for m in scale["memory"]
    ]

    values = {
        "date": env["date"],
        "mode": results["mode"],
        "minutes": f"{results['minutes']:.1f}",
        "commit": env["commit"],
        "machine": (
            f"{env['cpus']} cores ({env['cpu'] or 'CPU unknown'}), {env['platform']}; "
            f"Python {env['python']}, Django {env['django']}, Redis "
            f"{env['redis_server']}, redis-py {env['redis_py']}, django-redis "
            f"{env['django_redis']}, gunicorn {env['gunicorn']}, django-online-users "
            f"{env['django_online_users']}"
        ),
        "headline": table(
            ["Added per request", "django-whos-online", "django-online-users"],
            headline_rows,
        ),
        "targets": table(["Target", "Measured", "Verdict"], targets),
        "why": why_missed(pr, a, scale, pg),
        "cheap_block": params["cheap_block"],
        "dear_block": params["dear_block"],
        "rounds": pr["rounds"],
        "per_request": per_request_table(pr),
        "postgres": postgres_section(pg),
        "dou_sql": "\n".join(
            f"{i}. `{sql[:110]}{'…' if len(sql) > 110 else ''}`"
            for i, sql in enumerate(counts["dou-user"].get("statements", []), 1)
        ),
        "identity": table(
            ["Request", "Redis commands", "SQL", "session loads", "user loads"]
            + ["new guard set"],
            identity_rows,
        ),
        "guarded_steps": table(
            ["Step", "per call"], step_rows(pr["breakdown"]["timed"])
        ),
        "guarded_profile": table(
            ["Function", "calls per request", "own time"],
            profile_rows(pr["breakdown"]["profile"]),
        ),
        "unguarded_steps": table(
            ["Step", "per call"], step_rows(pr["unguarded"]["timed"])
        ),
        "unguarded_profile": table(
            ["Function", "calls per request", "own time"],
            profile_rows(pr["unguarded"]["profile"]),
        ),
        "load": load_text(load, summary, params, env)
        if load and summary
        else ("The load test was skipped (`--skip-load`)."),
        "size_rounds": params["size_rounds"],
        "scaling": table(
            ["members online", "tag render", "tag round trips / SQL", "snapshot"]
            + ["record", "bare ZADD", "guarded call", "memory per member"],
            scaling_rows,
        ),
        "prune_repeats": params["prune_repeats"],
        "prune": table(
            ["stale members", "prune (in Redis)", "ZREMRANGEBYSCORE (in Redis)"]
            + ["ratio", "same batches, plain ZREMRANGEBYRANK", "batches"]
            + ["median batch", "longest batch"],
            prune_rows,
        ),
        "memory": table(
            ["kind", "example member", "members", "per member", "per million"],
            memory_rows,
        ),
    }
    (out / "README.md").write_text(TEMPLATE.format(**values))
    (out / "headline.md").write_text(values["headline"] + "\n")


def load_text(
    load: dict[str, Any],
    summary: dict[str, dict[str, float]],
    params: dict[str, Any],
    env: dict[str, str],
) -> str:
    labels = {
        "without": "without the middleware",
        "with": "with it (browsers keep the guard cookie)",
        "with-noguard": "with it, clients drop the guard (every request records)",
    }
    rows = []
    for name in ("without", "with", "with-noguard"):
        s = summary[name]
        rows.append(
            [
                labels[name],
                f"{s['rps']:,.0f}",
                f"{s['ratio']:.1%}",
                f"{s['p50']:.1f}",
                f"{s['p90']:.1f}",
                f"{s['p99']:.1f}",
                f"{s['server_cpu_us'] / 1000:,.2f} ms",
                f"{s['cpu_ratio']:.1%}",
                str(int(s["errors"])),
            ]
        )
    generator = max(s["generator_cores"] for s in summary.values())
    pages = ", ".join(f"`{path}` {weight}%" for path, weight in load["pages"])
    return LOAD_TEMPLATE.format(
        table=table(
            ["Server", "req/s (median phase)", "÷ without", "p50 ms", "p90 ms"]
            + ["p99 ms", "server CPU per request", "÷ without", "errors"],
            rows,
        ),
        gunicorn=env["gunicorn"],
        workers=load["gunicorn"]["workers"],
        threads=load["gunicorn"]["threads"],
        users=load["clients"]["users"],
        guests=load["clients"]["guests"],
        seconds=f"{params['load_seconds']:.0f}",
        rounds=params["load_rounds"],
        pages=pages,
        generator=f"{generator:.2f}",
        ratio_low=f"{summary['with']['ratio_low']:.1%}",
        ratio_high=f"{summary['with']['ratio_high']:.1%}",
    )


LOAD_TEMPLATE = """\
{table}

gunicorn {gunicorn}, {workers} worker × {threads} thread (gthread, keep-alive) per
server, serving the example project (its own settings, with `DEBUG = False` and a
SQLite file of the run's own). Three servers run at once, one without
`WhosOnlineMiddleware` in `MIDDLEWARE`, one with it, and one with it for the clients
that drop the guard; everything else is the same, the widget included, and they share
one Redis, so every widget lists the same people.
Each phase sends {users} logged-in clients and {guests} guests at one server for
{seconds} s. Each client has a keep-alive connection from a loopback address of its
own (so each guest is a different guest), keeps every cookie as a browser does, logged
in through the login form before the clock started, and requests page after page
without pause. Phases alternate between the servers, in the order without, with,
dropped guard, then back ({rounds} rounds). "÷ without" is the median of the per-round
ratios (they ranged from {ratio_low} to {ratio_high} for the server with it); server CPU
per request is the gunicorn workers' CPU time over the requests they served, the figure
least disturbed by other load on the machine. The target is judged met only if both
ratios are: at least 97% of the requests per second, and at most 1/0.97 = 103.1% of
the CPU per request.

Page mix: {pages}.

One worker per server, because a keep-alive connection stays with the worker that
accepted it: with two workers the split of clients between them was luck, and runs
swung between 160 and 340 req/s for the same server.

The load generator is Python on the same two cores (it used up to {generator} of a
core), and the machine is shared, so the absolute figures are this machine's, not the
project's: read the ratios."""


TEMPLATE = """\
# Benchmarks

Measured by `benchmarks/run.py` on {date}: a {mode} run of {minutes} minutes, at
commit {commit}. To run it again:

```console
make bench                                   # the full run; rewrites this page
.venv/bin/python benchmarks/run.py --quick   # a smoke run with small sizes
```

Machine: {machine}.

Redis is a private `redis-server` on loopback that the run starts and stops; the run
touches no other Redis. The machine is shared and noisy, so every
figure is a median and every comparison is between measurements interleaved in this
one run: compare figures within this page, not across runs. The raw figures are in
`results.json`.

## Headline

{headline}

## Targets

Computed from the figures below; a target that is missed says so, with its figure.

{targets}

Where the time goes, in this run (the sections below have the figures):

{why}

## Added cost per request

![µs added per request, ours and django-online-users](per-request.png)

Django's real handler (`BaseHandler.load_middleware`) over `SessionMiddleware` and
`AuthenticationMiddleware` with database sessions, in SQLite on tmpfs (its writes cost
no disk time, which favours django-online-users), without and with each middleware.
Each round runs every case as a block of fresh requests ({cheap_block} for the cheap
cases, {dear_block} for the others), in a shuffled order, and a block of bare `ZADD`s;
each request is timed alone. A case's cost is the median over {rounds} rounds of its
block's median less the median of the same round's block without any who's-online
middleware, for the same visitor and view. Medians, because the machine is shared: a
request that another process preempts is not the middleware's cost.

Guarded requests carry the guard cookie the middleware itself issued; the request
without the middleware does not carry it, so parsing it counts as our cost. "Guard
expired" requests carry a guard the middleware issued for one second, once that second
is past: what a browser sends with its first request after a guard period, since a
user's guard cookie lasts as long as the session cookie. "No guard yet" sends the
session cookie alone: a session's first request when the login was not recorded (the
login request itself is recorded and sets the guard). The view
`/` touches neither the session nor the user, as a cached page or an API might; `/me/`
reads `request.user`, as every page of the example project does (its header says who
is logged in), so there loading the session and the user is the page's cost, not the
middleware's. django-online-users 0.3 is wired as its README says (the app, its
migration and `OnlineNowMiddleware`, placed after `AuthenticationMiddleware`, since it
reads `request.user`). It counts only logged-in users; guests cost it one
`is_authenticated`.

Two rows put the floor in context: a middleware that sends one bare `ZADD` per request
and does nothing else. A round trip costs more inside a request than in a tight loop
of `ZADD`s, where the CPU caches stay warm from one round trip to the next; in a
request, Django's own work runs in between. "One ZADD in a middleware" is the floor an
unguarded request can be compared with on equal terms; the targets are judged against
the bare loop, as they were set.

{per_request}

The counts come from one untimed request per case, with `Redis.execute_command`,
`SessionStore.load` and `django.contrib.auth.get_user` wrapped and SQL captured. The
SQL django-online-users sends for a logged-in user on `/`:

{dou_sql}

### With PostgreSQL

{postgres}

### The guard knows who it was issued to

A guard is bound to the session cookie (and, for a guest, the address), so the
middleware tells that the visitor changed without asking the database:

{identity}

### Where a guarded request's time goes

Each step timed alone (median of 7 `timeit` runs) on a request that has already been
through the session and authentication middleware, the middleware called with the view
stubbed out. Timed alone, a step runs on data hot in the CPU caches; in the chain, on
a fresh request, the same code costs more, which is why the middleware's share above
is larger than the first line here.

{guarded_steps}

cProfile of the guarded middleware call, own time per request (profiling inflates
every figure; read the shares):

{guarded_profile}

### Where an unguarded guest request's time goes

The same, for the work an unguarded guest request adds: one round trip that runs the
record script, and the Python around it. "Inside Redis" is Redis' own `usec_per_call`
from `INFO commandstats`.

{unguarded_steps}

cProfile of the unguarded middleware call (view stubbed out), own time per request:

{unguarded_profile}

## Under load

![requests per second and latency, with and without the middleware](load.png)

{load}

## Growth with the number online

![cost against the number online](scaling.png)

The users set holds N members seen within the window (filled with pipelined `ZADD`s,
scored with the server's clock); the tag lists the 50 newest, whose users exist, so
below 50 online it lists everyone and renders fewer names. Each figure is the median
over {size_rounds} interleaved rounds (each the median of its calls). "record" is
`presence.record()`, the one round trip an unguarded request makes; "guarded call" is
the whole middleware call for a guarded request, which touches no Redis, measured at
each size to show it.

{scaling}

## Pruning

![prune time against ZREMRANGEBYSCORE](prune.png)

`presence.prune()`, which `manage.py prune_online` runs, on a set of N stale guests
and 1% as many still online, against one `ZREMRANGEBYSCORE` on an identical copy
(`COPY`), rotating which runs first. Each removes exactly the stale members. Times are
wall-clock medians over {prune_repeats} fills, with the time inside Redis in brackets,
from `SLOWLOG` (every command logged, on the run's own server); the longest batch is
the longest that Redis was blocked by the prune. SLOWLOG times are wall-clock inside
Redis, so on this shared machine a batch during which the OS ran something else counts
the wait: the median batch is the steadier figure, the longest is what the target is
judged on. A third copy is pruned with the same
batches as plain `ZREMRANGEBYRANK`s sent from Python, without a script: the difference
between that and the single `ZREMRANGEBYSCORE` is what removing in batches costs Redis
itself, whoever sends them.

{prune}

## Memory per member

![memory per member](memory.png)

`MEMORY USAGE key SAMPLES 0` over the number of members, each set filled with distinct
members as the app stores them (guests through `identify()`, so the configured address
privacy applies).

{memory}
"""
