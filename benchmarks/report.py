"""Turn a run's results into docs/benchmarks/README.md, headline.md and the
charts. report.md holds the text, the headline and the target table; this
module computes the named figures it quotes (every verdict on a target
included: a missed target is reported as missed, with its figure), the
other tables and the charts, from the results alone (``run.py --from-json``
redoes a report)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OURS, DOU, GREY, BLUE, PURPLE, GREEN = "#0b6e4f", "#b35806", "#6e7781", "C0", "C4", "C2"
LABELS = {  # the rows of the per-request tables and charts, in order
    "noop-user": "a do-nothing middleware (one more link in the chain)",
    "ours-user-guarded": "ours: user, guarded",
    "ours-guest-guarded": "ours: guest, guarded",
    "dou-guest": "django-online-users: guest",
    "zadd-guest": "one ZADD in a middleware: guest",
    "ours-guest": "ours: guest, unguarded",
    "ours-user": "ours: user, guard expired",
    "zadd-user-me": "one ZADD in a middleware: user (view loads user)",
    "ours-user-me": "ours: user, guard expired (view loads user)",
    "dou-user-me": "django-online-users: user (view loads user)",
    "ours-user-new": "ours: user, no guard yet (once a session)",
    "dou-user": "django-online-users: user",
    "std-user": "the bare request: user",
    "std-guest": "the bare request: guest",
    "std-plain-user": "plain-cookie check: user, cookie present",
    "std-plain-guest": "plain-cookie check: guest, cookie present",
    "std-ours-user-guarded": "ours: user, guarded",
    "std-ours-guest-guarded": "ours: guest, guarded",
    "std-plain-guest-new": "one ZADD and a plain cookie: guest, no cookie yet",
    "std-ours-guest": "ours: guest, unguarded",
}
MINIMAL, STACK = list(LABELS)[:12], list(LABELS)[12:]
# Unguarded cases judged against a bare ZADD, each with the one-ZADD
# middleware that pays for the same page; and those against
# django-online-users.
UNGUARDED = {"ours-guest": "zadd-guest", "ours-user": "zadd-guest"}
UNGUARDED |= {"ours-user-me": "zadd-user-me", "ours-user-new": "zadd-guest"}
AGAINST_DOU = {"ours-user": "dou-user", "ours-user-me": "dou-user-me"}
AGAINST_DOU |= {"ours-user-new": "dou-user", "ours-user-guarded": "dou-user"}
COUNTED = ("sql", "session_loads", "user_loads")


def median(values: Iterable[float]) -> float:
    return statistics.median(values)


def diffs(pr: dict[str, Any], name: str) -> list[float]:
    """Per round: the case's median less its baseline's, in µs."""
    base = pr["means"][pr["baselines"][name]]
    return [a - b for a, b in zip(pr["means"][name], base, strict=True)]


def cost(pr: dict[str, Any], name: str) -> float:
    """µs added (median over rounds), or a baseline's own µs per request."""
    return median(diffs(pr, name) if pr["baselines"][name] else pr["means"][name])


def us(value: float) -> str:
    if abs(value) >= 1000:
        return f"{value / 1000:,.2f} ms"
    return f"{value:,.0f} µs" if abs(value) >= 100 else f"{value:,.1f} µs"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def verdict(ok: bool) -> str:
    return "**met**" if ok else "**missed**"


def step(rows: list[list[Any]], prefix: str) -> float:
    """µs of the first breakdown step whose label starts with ``prefix``."""
    found = (ns for label, ns in rows if label.strip().startswith(prefix))
    return float(next(found, math.nan)) / 1000


# Tables --------------------------------------------------------------------


def row(*cells: object) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def counts_cells(c: dict[str, Any]) -> list[str]:
    redis = f"{len(c['redis'])}" + (f" ({', '.join(c['redis'])})" if c["redis"] else "")
    return [redis, *(str(c[k]) for k in COUNTED), "yes" if c["guard_set"] else "no"]


def cost_table(pr: dict[str, Any], names: list[str], against_zadd: bool) -> str:
    """Each case's cost, its spread over rounds, a ratio and its counts."""
    floor = median(pr["zadd"])
    ratio = "× ZADD" if against_zadd else "÷ bare request"
    rows = [row("Variant", "µs", "IQR over rounds", ratio, *COUNTS, "sets cookie")]
    rows.append("|---" * 9 + "|")
    for name in names:
        base = pr["baselines"][name]
        q = statistics.quantiles(diffs(pr, name), n=4) if base else []
        spread = f"{us(q[0])} – {us(q[2])}" if len(q) == 3 else ""
        if against_zadd:
            x = f"{cost(pr, name) / floor:.2f}×"
        else:
            x = f"{cost(pr, name) / median(pr['means'][base]):.2%}" if base else ""
        cells = counts_cells(pr["counts"][name])
        rows.append(row(LABELS[name], us(cost(pr, name)), spread, x, *cells))
    if against_zadd:
        floor_row = f"| bare redis-py `ZADD` round trip (the floor) | {us(floor)} |  "
        rows.append(floor_row + "| 1.00× | 1 (ZADD) | 0 | 0 | 0 | no |")
    return "\n".join(rows)


COUNTS = ["Redis commands", "SQL", "session loads", "user loads"]


def breakdown_rows(breakdown: dict[str, Any]) -> tuple[str, str]:
    """A breakdown's steps, and its cProfile's functions."""
    # Indented steps are part of the step above them.
    steps = [
        row(s.replace("  ", "&nbsp;&nbsp;"), f"{ns / 1e3:,.2f} µs")
        for s, ns in breakdown["timed"]
    ]
    profile = [
        row(f"`{f}`", f"{n:g}", f"{ns:,.0f} ns") for f, n, ns in breakdown["profile"]
    ]
    return "\n".join(steps), "\n".join(profile)


def scale_rows(scale: dict[str, Any]) -> dict[str, str]:
    sizes, prunes, memory = [], [], []
    for s in scale["sizes"]:
        t = {k: us(median(v)) for k, v in s["timings"].items()}
        trips = f"{len(s['tag_redis'])} ({', '.join(s['tag_redis'])}) / {s['tag_sql']}"
        sizes.append(
            f"| {s['size']:,} | {t['tag']} | {trips} | {t['snapshot']} | {t['record']} "
            f"| {t['zadd']} | {t['guarded']} | {s['memory_per_member']:.0f} B |"
        )
    for p in scale["prunes"]:
        wall = {k: median(p[f"{k}_seconds"]) for k in ("prune", "zrem", "rank")}
        cells = [f"{ms(wall[k])} ({p[f'{k}_server_us'] / 1e3:.1f} ms)" for k in wall]
        ratio = f"{wall['prune'] / wall['zrem']:.2f}×"
        batches = [
            f"{p[k] / 1e3:.2f} ms" for k in ("median_batch_us", "longest_batch_us")
        ]
        size = f"{p['size']:,} (+{p['online']:,} online)"
        prunes.append(row(size, *cells[:2], ratio, cells[2], p["batches"], *batches))
    for m in scale["memory"]:
        size, mib = m["bytes_per_member"], m["bytes_per_member"] * 1e6 / 2**20
        memory.append(
            f"| {m['kind']} | `{m['example']}` | {m['size']:,} | {size:.0f} B "
            f"| {mib:.0f} MiB |"
        )
    tables = {"scaling_rows": sizes, "prune_rows": prunes, "memory_rows": memory}
    return {name: "\n".join(rows) for name, rows in tables.items()}


LOAD = {  # server: label, colour
    "without": ("without the middleware", GREY),
    "with": ("with it (browsers keep the guard)", OURS),
    "with-noguard": ("with it, clients drop the guard (every request records)", PURPLE),
}


def load_figures(load: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """The load test's rows and figures, and per server: req/s, ratios, CPU."""
    summary, rows, without = {}, [], load["phases"]["without"]
    for name, phases in load["phases"].items():
        pairs = zip(phases, without, strict=True)
        ratios = [p["requests"] / w["requests"] for p, w in pairs if w["requests"]]
        requests = max(sum(p["requests"] for p in phases), 1)
        summary[name] = s = {
            "rps": median(p["requests"] / p["seconds"] for p in phases),
            "ratio": median(ratios or [0.0]),
            "low": min(ratios, default=0.0),
            "high": max(ratios, default=0.0),
            "cpu": 1e6 * sum(p["server_cpu"] for p in phases) / requests,
            "generator": max(p["generator_cpu"] / p["seconds"] for p in phases),
            **load["latency"][name],
        }
        s["cpu_ratio"] = s["cpu"] / summary["without"]["cpu"]
        errors = sum(p["errors"] for p in phases)
        rows.append(
            f"| {LOAD[name][0]} | {s['rps']:,.0f} | {s['ratio']:.1%} | {s['p50']:.1f} "
            f"| {s['p90']:.1f} | {s['p99']:.1f} | {s['cpu'] / 1e3:,.2f} ms "
            f"| {s['cpu_ratio']:.1%} | {errors} |"
        )
    w = summary["with"]
    return {
        "load_rows": "\n".join(rows),
        "load_ratio": f"{w['ratio']:.1%}",
        "load_rps": f"{w['rps']:,.0f}",
        "load_without": f"{summary['without']['rps']:,.0f}",
        "load_cpu": f"{w['cpu_ratio']:.1%}",
        "load_low": f"{w['low']:.1%}",
        "load_high": f"{w['high']:.1%}",
        "load_generator": f"{max(s['generator'] for s in summary.values()):.2f}",
        "load_pages": ", ".join(f"`{page}` {share}%" for page, share in load["pages"]),
        "load_users": str(load["clients"]["users"]),
        "load_guests": str(load["clients"]["guests"]),
        "load_ok": verdict(w["ratio"] >= 0.97 and w["cpu_ratio"] <= 1 / 0.97),
    }, summary


# Figures quoted by report.md -----------------------------------------------


def request_figures(pr: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """``{ours_user}`` and the like (each case's cost), and the ratios and
    verdicts of the targets; ``prefix`` names the PostgreSQL run's."""
    c, floor = pr["counts"], median(pr["zadd"])
    a = {name: cost(pr, name) for name in pr["means"]}
    f = {name.replace("-", "_"): us(value) for name, value in a.items()}
    f |= {f"{n.replace('-', '_')}_sql": str(c[n]["sql"]) for n in c}
    for name, in_chain in UNGUARDED.items():
        key = name.replace("-", "_")
        own_sql = c[name]["sql"] - c[pr["baselines"][name]]["sql"]
        f[f"{key}_x"] = f"{a[name] / floor:.2f}×"
        f[f"{key}_x_chain"] = f"{a[name] / a[in_chain]:.2f}×"
        f[f"{key}_trips"] = f"{len(c[name]['redis'])} round trip"
        f[f"{key}_trips"] += f", plus {own_sql} SQL (session and user)" * bool(own_sql)
        ok = a[name] / floor <= 1.3 and len(c[name]["redis"]) == 1 and not own_sql
        f[f"ok_{key}"] = verdict(ok)
    for ours, theirs in AGAINST_DOU.items():
        x, key = a[theirs] / max(a[ours], 1e-9), ours.replace("-", "_")
        f[f"dou_x_{key}"] = f"{x:,.0f}×" if x >= 100 else f"{x:.1f}×"
        f[f"ok_dou_{key}"] = verdict(x >= (100 if "guarded" in ours else 5))
    for who in ("user", "guest"):
        n = c[f"ours-{who}-guarded"]
        loads = f"{n['session_loads']} session and {n['user_loads']} user loads"
        f[f"ours_{who}_guarded_counts"] = (
            f"{len(n['redis'])} Redis, {n['sql']} SQL, {loads}"
        )
        quiet = not (n["redis"] or any(n[k] for k in COUNTED))
        f[f"ok_ours_{who}_guarded"] = verdict(a[f"ours-{who}-guarded"] < 5 and quiet)
        share = a[f"std-ours-{who}-guarded"] / a[f"std-{who}"]
        f[f"std_share_{who}"] = f"{share:.2%}"
        f[f"std_plain_share_{who}"] = f"{a[f'std-plain-{who}'] / a[f'std-{who}']:.2%}"
        f[f"ok_std_{who}"] = verdict(share <= 0.01)
    x = a["std-ours-guest"] / a["std-plain-guest-new"]
    f |= {"std_x": f"{x:.2f}×", "ok_std_new": verdict(x <= 1.15), "floor": us(floor)}
    f["more_sql"] = str(c["dou-user-me"]["sql"] - c["none-user-me"]["sql"])
    return {f"{prefix}{k}": v for k, v in f.items()}


def why_figures(pr: dict[str, Any]) -> dict[str, str]:
    """Where the time goes: the breakdowns' steps and what they add up to."""
    g, u = pr["breakdown"]["timed"], pr["unguarded"]["timed"]
    a = {name: cost(pr, name) for name in pr["means"]}
    call, cookie = step(g, "middleware(request), user"), step(g, "parse_cookie(), s")
    cookie -= step(g, "parse_cookie(), session only")
    bare, empty = step(u, "bare ZADD"), step(u, "EVALSHA of `return 1`")
    inside, zadd = step(u, "inside Redis: the record"), step(u, "inside Redis: ZADD")
    record = step(u, "record(): the script")
    rest, dou_x = record - empty - (inside - zadd), a["dou-user-me"] / a["zadd-user-me"]
    parts = call + cookie + max(a["noop-user"], 0)
    return {
        "call_user": us(call),
        "call_guest": us(step(g, "middleware(request), guest")),
        "address": us(step(g, "client_address(META)")),
        "cookie": us(cookie),
        "link": us(a["noop-user"]) if a["noop-user"] > 0 else "nothing measurable",
        "chain_x": f"{a['ours-user-guarded'] / parts:.1f}×",
        "zadd_mw_x": f"{a['zadd-guest'] / median(pr['zadd']):.2f}×",
        "record": us(record),
        "bare": us(bare),
        "args": us(empty - bare),
        "noop_script": us(empty),
        "inside_more": us(inside - zadd),
        "inside": us(inside),
        "inside_entry": us(step(u, "inside Redis: the record script, a guest")),
        "inside_zadd": us(zadd),
        "python_rest": us(rest) if rest > 0 else "nothing measurable",
        "identify": us(step(u, "identify(request)")),
        "set_guard": us(step(u, "set_guard(")),
        "user_x": f"{a['dou-user'] / a['ours-user']:.1f}×",
        "dou_me_x": f"{dou_x:.1f}×",
        "dou_reach": "out of reach" if dou_x < 5 else "within reach",
    }


def scale_figures(scale: dict[str, Any]) -> dict[str, str]:
    sizes, p, batch = scale["sizes"], scale["prunes"][-1], scale["prune_batch"]
    tag, snap = ([median(s["timings"][k]) for s in sizes] for k in ("tag", "snapshot"))
    # Up to 50 members the tag lists everyone, so its template grows with the
    # names; growth with N is judged from the first size with 50 names.
    i = next((i for i, s in enumerate(sizes) if s["size"] >= 50), 0)
    log_growth = math.log2(sizes[-1]["size"]) / math.log2(max(sizes[i]["size"], 2))
    trips, sql = (
        max(len(s["tag_redis"]) for s in sizes),
        max(s["tag_sql"] for s in sizes),
    )
    prune, zrem = median(p["prune_seconds"]), median(p["zrem_seconds"])
    return {
        "tag_trips": str(trips),
        "tag_sql": str(sql),
        "ok_tag_trips": verdict(trips <= 2 and sql <= 1),
        "first_size": f"{sizes[0]['size']:,}",
        "from_size": f"{sizes[i]['size']:,}",
        "last_size": f"{sizes[-1]['size']:,}",
        "tag_from": us(tag[i]),
        "tag_last": us(tag[-1]),
        "tag_growth": f"×{tag[-1] / tag[i]:.2f}",
        "log_growth": f"×{log_growth:.1f}",
        "snap_growth": f"×{snap[-1] / snap[i]:.2f}",
        "ok_tag_growth": verdict(tag[-1] / tag[i] <= log_growth),
        "prune_size": f"{p['size']:,}",
        "prune": ms(prune),
        "zrem": ms(zrem),
        "prune_x": f"{prune / zrem:.2f}×",
        "ok_prune": verdict(prune / zrem <= 1.5),
        "longest_batch": f"{p['longest_batch_us'] / 1000:.1f} ms",
        "median_batch": f"{p['median_batch_us'] / 1000:.1f} ms",
        "p99_batch": f"{p['p99_batch_us'] / 1000:.1f} ms",
        "zrem_server": f"{p['zrem_server_us'] / 1000:.1f} ms",
        "batches": str(p["batches"]),
        "ok_block": verdict(p["longest_batch_us"] <= 5000),
        "prunes": " ".join(prune_story(q, batch) for q in reversed(scale["prunes"])),
    }


def prune_story(p: dict[str, Any], batch: int) -> str:
    """How one prune went, by the path the prune script took."""
    size, online = f"{p['size']:,} stale members", f"{p['online']:,} online"
    ours, single = ms(median(p["prune_seconds"])), ms(median(p["zrem_seconds"]))
    longest = f"{p['longest_batch_us'] / 1000:.1f} ms"
    if p["online"] <= batch:
        return (
            f"{size} with {online} make a mostly stale set, so the prune copies the "
            "few online, `UNLINK`s the set (Redis frees it in its background thread; "
            "`ZREMRANGEBYSCORE` frees it inline, in its figure) and puts the copy in "
            f"its place: {ours} against {single}, in one script of {longest}."
        )
    return (
        f"{size} with {online} are more online than one script may copy "
        f"({batch:,}), so they are removed {batch:,} at a time: {ours} in "
        f"{p['batches']} scripts against {single} for one `ZREMRANGEBYSCORE`, "
        "which blocks Redis throughout; the same batches as plain "
        f"`ZREMRANGEBYRANK`s take {ms(median(p['rank_seconds']))}. Inside Redis "
        f"the batches took {p['prune_server_us'] / max(p['zrem_server_us'], 1):.2f}× "
        "the time of the one big removal; the rest is round trips. The longest "
        f"batch, {longest}, includes any time the OS gave Redis' core to another "
        "process."
    )


# Charts --------------------------------------------------------------------


@contextmanager
def chart(
    path: Path, size: tuple[float, float], title: str, panels: int = 1
) -> Iterator[Any]:
    fig, axes = plt.subplots(1, panels, figsize=size, dpi=110)
    yield axes
    (axes[0] if panels > 1 else axes).set_title(title, pad=18)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def bars(ax: Any, rows: list[tuple[str, float, str, str]], log: bool = True) -> None:
    """Horizontal bars, top to bottom: (label, value, text, colour)."""
    values = [max(value, 0.1) for _, value, _, _ in rows]  # a log axis has no zero
    drawn = ax.barh([r[0] for r in rows], values, color=[r[3] for r in rows])
    gap, room = (1.08, 4) if log else (1.02, 1.25)
    for bar, value, row in zip(drawn, values, rows, strict=True):
        y = bar.get_y() + bar.get_height() / 2
        ax.text(value * gap, y, row[2], va="center", fontsize=8)
    ax.set(xscale="log" if log else "linear", xlim=(None, max(values) * room))
    ax.invert_yaxis()


def columns(
    ax: Any, ticks: list[str], series: list[tuple[str, list[float], str]], log: bool
) -> None:
    """Grouped columns, each with its value: (label, a value per tick, colour);
    room above them for the legend."""
    width = 0.8 / len(series)
    for i, (label, values, color) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(ticks))]
        ax.bar(xs, values, width, label=label, color=color)
        for x, value in zip(xs, values, strict=True):
            ax.text(x, value * 1.03, f"{value:,.1f}", ha="center", fontsize=7)
    ax.set_xticks(range(len(ticks)), ticks)
    ax.set_yscale("log" if log else "linear")
    ax.set_ylim(top=ax.get_ylim()[1] * (10 if log else 1.4))
    ax.legend(fontsize=7, loc="upper left")


def cost_chart(pr: dict[str, Any], names: list[str], path: Path, title: str) -> None:
    rows = []
    for name in names:
        value = cost(pr, name)
        text = us(value) if value > 0.1 else f"≈ 0 ({us(value)})"
        color = OURS if "ours" in name else DOU if "dou" in name else GREY
        rows.append((LABELS[name], value, text, color))
    floor, bare = median(pr["zadd"]), median(pr["means"]["std-guest"])
    limit = bare / 100 if names[0].startswith("std") else 5
    text = f"1% of the bare request ({us(bare)})" if limit < 5 else "5 µs"
    marks = [(floor, f"bare ZADD {us(floor)}", GREY, "--"), (limit, text, OURS, ":")]
    with chart(path, (9.5, 1.2 + 0.35 * len(rows)), title) as ax:
        bars(ax, rows)
        for x, text, color, style in marks:
            ax.axvline(x, color=color, linestyle=style, linewidth=1)
            at = ax.get_xaxis_transform()
            ax.text(x, 1.01, text, color=color, fontsize=8, transform=at, ha="center")
        ax.set_xlim(left=min(limit, *(max(r[1], 0.1) for r in rows)) / 2)
        ax.set_xlabel("µs added per request (median of interleaved rounds; log scale)")


def charts(results: dict[str, Any], out: Path, load: dict[str, Any] | None) -> None:
    pr, scale = results["per_request"], results["scale"]
    title = "What each middleware adds to a request (lower is better)"
    cost_chart(pr, MINIMAL[1:], out / "per-request.png", title)
    title = "What it adds to a request through the startproject stack"
    cost_chart(pr, STACK[2:], out / "startproject.png", title)
    title = "Cost against the number online: flat lines are O(1) or O(log N)"
    with chart(out / "scaling.png", (9, 5.6), title) as ax:
        sizes = [s["size"] for s in scale["sizes"]]
        for name, label, color, marker in SCALING_SERIES:
            values = [median(s["timings"][name]) for s in scale["sizes"]]
            ax.plot(sizes, values, marker=marker, color=color, label=label)
            end = (sizes[-1], values[-1])
            ax.annotate(us(end[1]), end, (6, -3), textcoords="offset points")
        ax.set(xscale="log", yscale="log", xlim=(None, sizes[-1] * 6))
        ax.set(xlabel="members online (users set)", ylabel="µs per call (median)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    prunes = scale["prunes"]
    title = "Pruning stale members, next to Redis' own ZREMRANGEBYSCORE"
    with chart(out / "prune.png", (9, 4.2), title) as ax:
        series = [
            (label, [median(p[k]) * 1e3 for p in prunes], color)
            for k, label, color in PRUNE_SERIES
        ]
        longest = [p["longest_batch_us"] / 1000 for p in prunes]
        series.append(("prune: longest single batch (Redis blocked)", longest, GREEN))
        columns(ax, [f"{p['size']:,} stale" for p in prunes], series, log=True)
        ax.set_ylabel("milliseconds (log scale)")
    memory = scale["memory"]
    with chart(out / "memory.png", (7, 3.2), "Redis memory per member online") as ax:
        per = [(m["kind"], m["bytes_per_member"]) for m in memory]
        bars(ax, [(kind, size, f"{size:.0f} B", OURS) for kind, size in per], log=False)
        ax.set_xlabel(f"bytes per member (MEMORY USAGE, {memory[0]['size']:,} members)")
    if load:
        title = "Example project under gunicorn: req/s (÷ without) and latency"
        with chart(out / "load.png", (10, 4), title, panels=2) as (left, right):
            series = [
                (f"{label}: {load[n]['ratio']:.1%}", [load[n]["rps"]], color)
                for n, (label, color) in LOAD.items()
            ]
            columns(left, ["requests per second (median phase)"], series, log=False)
            series = [
                (label, [load[n][p] for p in ("p50", "p90", "p99")], color)
                for n, (label, color) in LOAD.items()
            ]
            columns(right, ["p50 ms", "p90 ms", "p99 ms"], series, log=False)


SCALING_SERIES = [
    ("tag", "{% whos_online %} render (1 round trip + 1 query)", OURS, "o"),
    ("snapshot", "snapshot alone (the tag's round trip)", BLUE, "s"),
    ("record", "record (an unguarded request's round trip)", PURPLE, "^"),
    ("zadd", "bare redis-py ZADD round trip", GREY, "v"),
    ("guarded", "guarded middleware call (no I/O)", GREEN, "D"),
]
PRUNE_SERIES = [
    ("prune_seconds", "presence.prune() in batches: total", OURS),
    ("zrem_seconds", "one ZREMRANGEBYSCORE (Redis blocked throughout)", GREY),
    ("rank_seconds", "same batches, plain ZREMRANGEBYRANK: total", PURPLE),
]


class Figures(dict[str, str]):
    """report.md's named figures; a part the run skipped reads "not measured"."""

    def __missing__(self, key: str) -> str:
        if key.startswith(("pg_", "load_")):
            return "not measured"
        raise KeyError(key)


def write(results: dict[str, Any], out: Path) -> None:
    pr, pg, scale = (
        results[k] for k in ("per_request", "per_request_postgres", "scale")
    )
    f = Figures(results["environment"], **results["params"], **request_figures(pr))
    f |= why_figures(pr) | scale_figures(scale) | scale_rows(scale)
    summary = None
    if results["load"]:
        load, summary = load_figures(results["load"])
        f |= load
    if pg.get("skipped"):
        f["pg_tables"] = f"Not measured in this run: {pg['skipped']}."
    else:
        f |= request_figures(pg, "pg_")
        tables = [cost_table(pg, MINIMAL, True), cost_table(pg, STACK, False)]
        f["pg_tables"] = "\n\n".join(
            [f"{pg['database']}, {pg['rounds']} rounds:", *tables]
        )
    statements = pr["counts"]["dou-user"]["statements"]
    identity = [row(k, *counts_cells(c)) for k, c in pr["identity"].items()]
    guarded, unguarded = (
        breakdown_rows(pr["breakdown"]),
        breakdown_rows(pr["unguarded"]),
    )
    f |= {
        "minutes": f"{results['minutes']:.1f}",
        "mode": results["mode"],
        "rounds": str(pr["rounds"]),
        "stack_table": cost_table(pr, STACK, against_zadd=False),
        "minimal_table": cost_table(pr, MINIMAL, against_zadd=True),
        "dou_statements": "\n".join(
            f"{i}. `{s[:110]}{'…' * (len(s) > 110)}`"
            for i, s in enumerate(statements, 1)
        ),
        "identity_rows": "\n".join(identity),
        "guarded_steps": guarded[0],
        "guarded_profile": guarded[1],
        "unguarded_steps": unguarded[0],
        "unguarded_profile": unguarded[1],
    }
    charts(results, out, summary)
    text = (Path(__file__).parent / "report.md").read_text().format_map(f)
    (out / "README.md").write_text(text)
    headline = text.split("## Headline\n\n", 1)[1].split("\n\n", 1)[0]
    (out / "headline.md").write_text(headline + "\n")
