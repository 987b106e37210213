"""Turn a run's results into docs/benchmarks/README.md, headline.md and the
PNG charts. The prose and the headline and target tables are in report.md;
this module computes the named figures it quotes, every verdict on a target
included (a missed target is reported as missed, with its figure), and the
tables and charts. It reads nothing but the results, so ``run.py
--from-json`` can redo the report."""

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

from benchmarks.common import table  # noqa: E402

OURS, DOU, GREY, BLUE, PURPLE, GREEN = (
    "#0b6e4f", "#b35806", "#6e7781", "#1f77b4", "#9467bd", "#2ca02c"
)  # fmt: skip
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
# middleware case that pays the same page; then those against
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


def counts_cells(c: dict[str, Any]) -> list[str]:
    redis = f"{len(c['redis'])}" + (f" ({', '.join(c['redis'])})" if c["redis"] else "")
    return [redis, *(str(c[k]) for k in COUNTED), "yes" if c["guard_set"] else "no"]


COUNTS = ["Redis commands", "SQL", "session loads", "user loads"]


def cost_table(pr: dict[str, Any], names: list[str], ratio: str) -> str:
    """Each case's cost, spread over rounds, a ratio and its counts."""
    floor, rows = median(pr["zadd"]), []
    for name in names:
        base = pr["baselines"][name]
        q = statistics.quantiles(diffs(pr, name), n=4) if base else []
        spread = f"{us(q[0])} – {us(q[2])}" if len(q) == 3 else ""
        if ratio == "× ZADD":
            x = f"{cost(pr, name) / floor:.2f}×"
        else:
            x = f"{cost(pr, name) / median(pr['means'][base]):.2%}" if base else ""
        cells = counts_cells(pr["counts"][name])
        rows.append([LABELS[name], us(cost(pr, name)), spread, x, *cells])
    if ratio == "× ZADD":
        rows.append(["bare redis-py `ZADD` round trip (the floor)", us(floor), ""])
        rows[-1] += ["1.00×", "1 (ZADD)", "0", "0", "0", "no"]
    header = ["Variant", "µs", "IQR over rounds", ratio, *COUNTS, "sets cookie"]
    return table(header, rows)


def steps_table(rows: list[list[Any]]) -> str:
    def indent(label: str) -> str:
        return "&nbsp;" * (len(label) - len(label.lstrip())) + label.strip()

    return table(
        ["Step", "per call"], ([indent(s), f"{ns / 1000:,.2f} µs"] for s, ns in rows)
    )


def profile_table(rows: list[list[Any]]) -> str:
    cells = ([f"`{fn}`", f"{calls:g}", f"{ns:,.0f} ns"] for fn, calls, ns in rows)
    return table(["Function", "calls per request", "own time"], cells)


def scale_tables(scale: dict[str, Any]) -> dict[str, str]:
    sizes = []
    for s in scale["sizes"]:
        t = {k: us(median(v)) for k, v in s["timings"].items()}
        trips = f"{len(s['tag_redis'])} ({', '.join(s['tag_redis'])}) / {s['tag_sql']}"
        sizes.append([f"{s['size']:,}", t["tag"], trips, t["snapshot"], t["record"]])
        sizes[-1] += [t["zadd"], t["guarded"], f"{s['memory_per_member']:.0f} B"]
    prunes = []
    for p in scale["prunes"]:
        wall = {k: median(p[f"{k}_seconds"]) for k in ("prune", "zrem", "rank")}
        cells = [f"{ms(wall[k])} ({p[f'{k}_server_us'] / 1000:.1f} ms)" for k in wall]
        ratio = f"{wall['prune'] / wall['zrem']:.2f}×"
        batches = [
            f"{p[k] / 1000:.2f} ms" for k in ("median_batch_us", "longest_batch_us")
        ]
        prunes.append([f"{p['size']:,} (+{p['online']:,} online)", *cells[:2], ratio])
        prunes[-1] += [cells[2], str(p["batches"]), *batches]
    memory = [
        [
            m["kind"],
            f"`{m['example']}`",
            f"{m['size']:,}",
            f"{m['bytes_per_member']:.0f} B",
        ]
        + [f"{m['bytes_per_member'] * 1e6 / 2**20:.0f} MiB"]
        for m in scale["memory"]
    ]
    head = ["members online", "tag render", "tag round trips / SQL", "snapshot"]
    head += ["record", "bare ZADD", "guarded call", "memory per member"]
    prune_head = ["stale members", "prune (in Redis)", "ZREMRANGEBYSCORE (in Redis)"]
    prune_head += ["ratio", "same batches, plain ZREMRANGEBYRANK", "batches"]
    return {
        "scaling_table": table(head, sizes),
        "prune_table": table([*prune_head, "median batch", "longest batch"], prunes),
        "memory_table": table(
            ["kind", "example member", "members", "per member", "per million"], memory
        ),
    }


def load_table(load: dict[str, Any]) -> tuple[str, dict[str, dict[str, float]]]:
    """The load test's table, and per server: req/s, ratios, CPU, latency."""
    summary, rows = {}, []
    without = load["phases"]["without"]
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
            "errors": sum(p["errors"] for p in phases),
            **load["latency"][name],
        }
        s["cpu_ratio"] = s["cpu"] / summary["without"]["cpu"]
        rows.append([LOAD_LABELS[name][1], f"{s['rps']:,.0f}", f"{s['ratio']:.1%}"])
        rows[-1] += [f"{s[p]:.1f}" for p in ("p50", "p90", "p99")]
        rows[-1] += [f"{s['cpu'] / 1000:,.2f} ms", f"{s['cpu_ratio']:.1%}"]
        rows[-1].append(str(s["errors"]))
    header = ["Server", "req/s (median phase)", "÷ without", "p50 ms", "p90 ms"]
    header += ["p99 ms", "server CPU per request", "÷ without", "errors"]
    return table(header, rows), summary


LOAD_LABELS = {
    "without": ("without\nthe middleware", "without the middleware", GREY),
    "with": ("with it\n(guard kept)", "with it (browsers keep the guard)", OURS),
    "with-noguard": (
        "with it, guard dropped\n(every request records)",
        "with it, clients drop the guard (every request records)",
        PURPLE,
    ),
}


# Figures quoted by report.md -----------------------------------------------


def request_figures(pr: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """``{ours_user}`` and the like: each case's cost; the ratios and
    verdicts the targets need; ``prefix`` names the PostgreSQL run's."""
    c, floor = pr["counts"], median(pr["zadd"])
    a = {name: cost(pr, name) for name in pr["means"]}
    f = {name.replace("-", "_"): us(value) for name, value in a.items()}
    f |= {f"{n.replace('-', '_')}_sql": str(c[n]["sql"]) for n in c}
    for name, in_chain in UNGUARDED.items():
        key = name.replace("-", "_")
        own_sql = c[name]["sql"] - c[pr["baselines"][name]]["sql"]
        f[f"{key}_x"] = f"{a[name] / floor:.2f}×"
        f[f"{key}_x_chain"] = f"{a[name] / a[in_chain]:.2f}×"
        f[f"{key}_trips"] = f"{len(c[name]['redis'])} round trip" + (
            f", plus {own_sql} SQL (session and user)" if own_sql else ""
        )
        ok = a[name] / floor <= 1.3 and len(c[name]["redis"]) == 1 and not own_sql
        f[f"ok_{key}"] = verdict(ok)
    for ours, theirs in AGAINST_DOU.items():
        x, key = a[theirs] / max(a[ours], 1e-9), ours.replace("-", "_")
        f[f"dou_x_{key}"] = f"{x:,.0f}×" if x >= 100 else f"{x:.1f}×"
        f[f"ok_dou_{key}"] = verdict(x >= (100 if "guarded" in ours else 5))
    for who in ("user", "guest"):
        n = c[f"ours-{who}-guarded"]
        quiet = not (n["redis"] or any(n[k] for k in COUNTED))
        f[f"ours_{who}_guarded_counts"] = (
            f"{len(n['redis'])} Redis, {n['sql']} SQL, {n['session_loads']} session "
            f"and {n['user_loads']} user loads"
        )
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
    cookie = step(g, "parse_cookie(), session + guard") - step(
        g, "parse_cookie(), session only"
    )
    bare, noop = step(u, "bare ZADD"), step(u, "EVALSHA of `return 1`")
    inside, inside_zadd = (
        step(u, "inside Redis: the record script"),
        step(u, "inside Redis: ZADD"),
    )
    record = step(u, "record(): the script")
    parts = step(g, "middleware(request), user") + cookie + max(a["noop-user"], 0)
    rest = record - noop - (inside - inside_zadd)
    dou_x = a["dou-user-me"] / a["zadd-user-me"]
    return {
        "call_user": us(step(g, "middleware(request), user")),
        "call_guest": us(step(g, "middleware(request), guest")),
        "address": us(step(g, "client_address(META)")),
        "cookie": us(cookie),
        "link": us(a["noop-user"]) if a["noop-user"] > 0 else "nothing measurable",
        "chain_x": f"{a['ours-user-guarded'] / parts:.1f}×",
        "zadd_mw_x": f"{a['zadd-guest'] / median(pr['zadd']):.2f}×",
        "record": us(record),
        "bare": us(bare),
        "args": us(noop - bare),
        "noop_script": us(noop),
        "inside_more": us(inside - inside_zadd),
        "inside": us(inside),
        "inside_entry": us(step(u, "inside Redis: the record script, a guest")),
        "inside_zadd": us(inside_zadd),
        "python_rest": us(rest) if rest > 0 else "nothing measurable",
        "identify": us(step(u, "identify(request)")),
        "set_guard": us(step(u, "set_guard(")),
        "user_x": f"{a['dou-user'] / a['ours-user']:.1f}×",
        "dou_me_x": f"{dou_x:.1f}×",
        "dou_reach": "out of reach" if dou_x < 5 else "within reach",
    }


def scale_figures(scale: dict[str, Any]) -> dict[str, str]:
    sizes, p, batch = scale["sizes"], scale["prunes"][-1], scale["prune_batch"]
    tag = [median(s["timings"]["tag"]) for s in sizes]
    snap = [median(s["timings"]["snapshot"]) for s in sizes]
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
        **{
            k: f"{p[f'{k}_us'] / 1000:.1f} ms"
            for k in ("longest_batch", "median_batch")
        },
        "p99_batch": f"{p['p99_batch_us'] / 1000:.1f} ms",
        "zrem_server": f"{p['zrem_server_us'] / 1000:.1f} ms",
        "batches": str(p["batches"]),
        "ok_block": verdict(p["longest_batch_us"] / 1000 <= 5.0),
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


def bars(ax: Any, rows: list[tuple[str, float, str]], colors: list[str]) -> None:
    """Horizontal bars on a log scale, top to bottom: (label, value, text)."""
    values = [max(value, 0.1) for _, value, _ in rows]  # a log axis has no zero
    drawn = ax.barh([label for label, _, _ in rows], values, color=colors)
    for bar, value, (_, _, text) in zip(drawn, values, rows, strict=True):
        y = bar.get_y() + bar.get_height() / 2
        ax.text(value * 1.08, y, text, va="center", fontsize=8)
    ax.set(xscale="log", xlim=(None, max(values) * 4))
    ax.invert_yaxis()


def mark(ax: Any, x: float, text: str, color: str, style: str) -> None:
    ax.axvline(x, color=color, linestyle=style, linewidth=1)
    at = ax.get_xaxis_transform()
    ax.text(x, 1.01, text, color=color, fontsize=8, transform=at, ha="center")


def cost_chart(pr: dict[str, Any], names: list[str], path: Path, title: str) -> None:
    rows, colors = [], []
    for name in names:
        value = cost(pr, name)
        text = us(value) if value > 0.1 else f"≈ 0 ({us(value)})"
        rows.append((LABELS[name], value, text))
        colors.append(OURS if "ours" in name else DOU if "dou" in name else GREY)
    with chart(path, (9.5, 1.2 + 0.35 * len(rows)), title) as ax:
        bars(ax, rows, colors)
        ax.set_xlabel("µs added per request (median of interleaved rounds; log scale)")
        floor, bare = median(pr["zadd"]), median(pr["means"]["std-guest"])
        mark(ax, floor, f"bare ZADD {us(floor)}", GREY, "--")
        limit = bare / 100 if names[0].startswith("std") else 5
        text = f"1% of the bare request ({us(bare)})" if limit < 5 else "5 µs"
        mark(ax, limit, text, OURS, ":")
        ax.set_xlim(left=min(limit, *(max(v, 0.1) for _, v, _ in rows)) / 2)


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
            ax.annotate(us(values[-1]), end, (6, -3), textcoords="offset points")
        ax.set(xscale="log", yscale="log", xlim=(None, sizes[-1] * 6))
        ax.set(xlabel="members online (users set)", ylabel="µs per call (median)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)

    prunes = scale["prunes"]
    title = "Pruning stale members, next to Redis' own ZREMRANGEBYSCORE"
    with chart(out / "prune.png", (9, 4.2), title) as ax:
        for i, (key, label, color) in enumerate(PRUNE_SERIES):
            values = [
                p[key] / 1000 if key.endswith("_us") else median(p[key]) * 1000
                for p in prunes
            ]
            xs = [j + (i - 1.5) * 0.2 for j in range(len(prunes))]
            for bar, value in zip(
                ax.bar(xs, values, 0.2, label=label, color=color), values, strict=True
            ):
                ax.text(
                    bar.get_x() + 0.1,
                    value * 1.1,
                    f"{value:,.1f}",
                    ha="center",
                    fontsize=8,
                )
        ax.set_xticks(range(len(prunes)), [f"{p['size']:,} stale" for p in prunes])
        ax.set(yscale="log", ylabel="milliseconds (log scale)")
        ax.legend(fontsize=8, loc="upper left")

    memory = scale["memory"]
    with chart(out / "memory.png", (7, 3.2), "Redis memory per member online") as ax:
        rows = [
            (m["kind"], m["bytes_per_member"], f"{m['bytes_per_member']:.0f} B")
            for m in memory
        ]
        bars(ax, rows, [OURS] * len(rows))
        ax.set(xscale="linear", xlim=(0, max(r[1] for r in rows) * 1.25))
        ax.set_xlabel(f"bytes per member (MEMORY USAGE, {memory[0]['size']:,} members)")

    if load:
        title = "Example project under gunicorn"
        with chart(out / "load.png", (10, 4), title, panels=2) as (left, right):
            for i, (name, (short, label, color)) in enumerate(LOAD_LABELS.items()):
                s = load[name]
                left.bar(short, s["rps"], color=color)
                text = f"{s['rps']:,.0f}\n({s['ratio']:.1%})"
                left.text(i, s["rps"] * 1.01, text, ha="center", fontsize=8)
                xs = [j + (i - 1) * 0.27 for j in range(3)]
                values = [s[p] for p in ("p50", "p90", "p99")]
                right.bar(xs, values, 0.27, color=color, label=label)
            left.set(ylabel="requests per second (median phase)")
            left.tick_params(axis="x", labelsize=8)
            right.set_xticks(range(3), ["p50", "p90", "p99"])
            right.set(ylabel="latency, ms", title="Latency percentiles")
            right.legend(fontsize=7)


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
    ("longest_batch_us", "prune: longest single batch (Redis blocked)", GREEN),
]


class Figures(dict[str, str]):
    """Named figures for report.md; those of a part the run skipped read
    "not measured"."""

    def __missing__(self, key: str) -> str:
        if key.startswith(("pg_", "load_")):
            return "not measured"
        raise KeyError(key)


def write(results: dict[str, Any], out: Path) -> None:
    pr, pg, scale = (
        results["per_request"],
        results["per_request_postgres"],
        results["scale"],
    )
    f = Figures(results["environment"], **results["params"], **request_figures(pr))
    f |= why_figures(pr) | scale_figures(scale) | scale_tables(scale)
    summary = None
    if results["load"]:
        f["load_table"], summary = load_table(results["load"])
        w = summary["with"]
        ok = w["ratio"] >= 0.97 and 1 / w["cpu_ratio"] >= 0.97
        f |= {
            "load_ratio": f"{w['ratio']:.1%}",
            "load_rps": f"{w['rps']:,.0f}",
            "load_without": f"{summary['without']['rps']:,.0f}",
            "load_cpu": f"{w['cpu_ratio']:.1%}",
            "load_low": f"{w['low']:.1%}",
            "load_high": f"{w['high']:.1%}",
            "load_generator": f"{max(s['generator'] for s in summary.values()):.2f}",
            "load_pages": ", ".join(f"`{p}` {w}%" for p, w in results["load"]["pages"]),
            "load_users": str(results["load"]["clients"]["users"]),
            "load_guests": str(results["load"]["clients"]["guests"]),
            "load_ok": verdict(ok),
        }
    if pg.get("skipped"):
        f["pg_tables"] = f"Not measured in this run: {pg['skipped']}."
    else:
        f |= request_figures(pg, "pg_")
        tables = [cost_table(pg, MINIMAL, "× ZADD"), cost_table(pg, STACK, "÷ bare")]
        f["pg_tables"] = "\n\n".join(
            [f"{pg['database']}, {pg['rounds']} rounds:", *tables]
        )
    statements = pr["counts"]["dou-user"]["statements"]
    f |= {
        "minutes": f"{results['minutes']:.1f}",
        "mode": results["mode"],
        "rounds": str(pr["rounds"]),
        "stack_table": cost_table(pr, STACK, "÷ bare request"),
        "minimal_table": cost_table(pr, MINIMAL, "× ZADD"),
        "dou_statements": "\n".join(
            f"{i}. `{s[:110]}{'…' * (len(s) > 110)}`"
            for i, s in enumerate(statements, 1)
        ),
        "identity": table(
            ["Request", *COUNTS, "new guard set"],
            ([k, *counts_cells(c)] for k, c in pr["identity"].items()),
        ),
        "guarded_steps": steps_table(pr["breakdown"]["timed"]),
        "guarded_profile": profile_table(pr["breakdown"]["profile"]),
        "unguarded_steps": steps_table(pr["unguarded"]["timed"]),
        "unguarded_profile": profile_table(pr["unguarded"]["profile"]),
    }
    charts(results, out, summary)
    text = (Path(__file__).parent / "report.md").read_text().format_map(f)
    (out / "README.md").write_text(text)
    headline = text.split("## Headline\n\n", 1)[1].split("\n\n", 1)[0]
    (out / "headline.md").write_text(headline + "\n")
