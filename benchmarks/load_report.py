"""docs/benchmarks/load.md from a load run's results: each case's requests/s,
p50 and p99 beside those of the site without whos_online (a), measured in
the same run, as ratios taken round by round."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchmarks.table import cell, markdown, med, ratio_text, ratios

MOST = 1.2  # p50 and p99, ÷ (a): issue 28's target
FAST = 100.0  # ms: a rate a site serves with p99 under this is within its capacity
CAPACITY = 0.8  # capacity ÷ (a)'s, at least: issue 34's target
SAME = 0.99  # requests/s ÷ (a) at least this: the same requests/s
TARGETED = ("b", "c")  # the app and its widget; (d) is the peer
FIGURES = (
    ("requests_per_s", "achieved requests/s", "/s"),
    ("p50_ms", "p50", " ms"),
    ("p99_ms", "p99", " ms"),
)
HEADER = ["Case: figure", "Measured: min / **median** / max", "(a), same run"]
HEADER += ["÷ (a): **median** (min–max)", "Target", "Verdict"]
COSTS = ["Case", "Server CPU a page", "Redis commands a page", "Redis CPU a page"]
COSTS += ["Pages not answered 2xx", "Sent late, p99", "Generator CPU a page"]


def rows(results: dict[str, Any]) -> list[list[str]]:
    """A row per case other than (a) and figure; a round that answered no
    page has no latency, and then no ratio."""
    rounds, labels = results["rounds"], results["cases"]
    floor = rounds["a"]
    body = []
    for name, label in labels.items():
        if name == "a":
            continue
        for key, figure, unit in FIGURES:
            digits = 0 if unit == "/s" else 1
            pairs = [
                (r[key], f[key])
                for r, f in zip(rounds[name], floor, strict=True)
                if r[key] is not None and f[key] is not None
            ]
            if not pairs:
                body.append([f"{label}: {figure}", "no page answered", "", "", "", ""])
                continue
            top, bottom = [p[0] for p in pairs], [p[1] for p in pairs]
            each = ratios(top, bottom)
            target, verdict = "—", ""
            if name in TARGETED:
                if key == "requests_per_s":
                    target, met = f"≥ {SAME:g}×", med(each) >= SAME
                else:
                    target, met = f"≤ {MOST:g}×", med(each) <= MOST
                verdict = "met" if met else "**missed**"
            body.append(
                [
                    f"{label}: {figure}",
                    cell(top, unit, digits),
                    cell(bottom, unit, digits),
                    ratio_text(each),
                    target,
                    verdict,
                ]
            )
    return body


def costs(results: dict[str, Any]) -> list[list[str]]:
    body = []
    for name, label in results["cases"].items():
        each = results["rounds"][name]

        def median(key: str, each: list[dict[str, Any]] = each) -> float:
            return med([r[key] for r in each])

        failed = sum(sum(r["errors"].values()) for r in each)
        due = sum(r["due"] for r in each)
        body.append(
            [
                label,
                f"{median('server_cpu_ms'):.2f} ms",
                f"{median('redis_commands'):.1f}",
                f"{median('redis_cpu_us'):.0f} µs",
                f"{failed:,} of {due:,}",
                f"{median('sent_late_p99_ms'):.1f} ms",
                f"{median('generator_cpu_ms'):.2f} ms",
            ]
        )
    return body


def _p99(rounds: list[dict[str, Any]]) -> float:
    """The median of the rounds' p99; a round that answered no page is
    slower than any."""
    return med([r["p99_ms"] if r["p99_ms"] is not None else math.inf for r in rounds])


def sweep_rows(sweep: dict[str, dict[str, list[dict[str, Any]]]]) -> list[list[str]]:
    """A row per rate swept: each case's p99, the median of its rounds."""
    body = []
    for rate in next(iter(sweep.values())):
        row = [f"{rate}/s"]
        for case in sweep.values():
            rounds = case[rate]
            silent = sum(r["p99_ms"] is None for r in rounds)
            p99 = _p99(rounds)
            text = "no page answered" if math.isinf(p99) else f"{p99:.1f} ms"
            if silent and not math.isinf(p99):
                text += f" ({silent} round{'s' * (silent > 1)} answered nothing)"
            row.append(text)
        body.append(row)
    return body


def _capacity(case: dict[str, list[dict[str, Any]]]) -> int:
    """The highest rate swept at which the case's p99 was under ``FAST``
    (0: none); a noisy round at a lower rate does not hide it."""
    return max((int(rate) for rate in case if _p99(case[rate]) < FAST), default=0)


def capacity_rows(
    sweep: dict[str, dict[str, list[dict[str, Any]]]], labels: dict[str, str]
) -> list[list[str]]:
    """Each case's capacity, and the app's against the floor's (a)."""
    floor = _capacity(sweep["a"])
    # Within capacity at the sweep's top rate, the floor's capacity is above
    # it: the ratios are then only upper bounds.
    bound = "≤ " if floor == max(int(rate) for rate in sweep["a"]) else ""
    body = []
    for name, case in sweep.items():
        found = _capacity(case)
        row = [f"{labels[name]}: highest rate with p99 < {FAST:g} ms"]
        row.append(f"{found}/s" if found else "none swept")
        if name == "a" or not floor:
            body.append([*row, "", "", ""])
            continue
        ratio = found / floor
        if ratio < CAPACITY:
            verdict = "**missed**"
        elif bound:
            verdict = "not known: (a) was within capacity at every rate swept"
        else:
            verdict = "met"
        ratio_text = f"**{bound if found else ''}{ratio:.2f}×**"
        body.append([*row, ratio_text, f"≥ {CAPACITY:g}×", verdict])
    return body


METHOD = """\
## Method

`make bench-load` (`benchmarks/load.py`) starts a redis-server of its own on
a free loopback port, a SQLite file in a scratch folder, and one gunicorn per
kind of site on free loopback ports, each serving the example project
(`example_project/`) with `DEBUG` off and gunicorn's defaults but for the
workers (benchmarks/load_settings.py):

- **(a)**, the floor: the site without whos_online. The app is not
  installed, its middleware is not in `MIDDLEWARE`, and the app's template
  tags in the example's templates render nothing (benchmarks/load_tags.py):
  the same pages, without the widget, the count, the toggle and the
  heartbeat.
- **(b)**: the example project as it is: the middleware, and on each page the
  site's widget, the count in the header, the invisible-mode toggle and the
  heartbeat for users; a thread page also lists its room.
- **(c)**: the same site, each page a thread, a room, new to the site
  (`/forum/N/`, a thread page for any number, benchmarks/load_urls.py).
- **(d)**: django-online-users 0.3's middleware in place of ours (a
  database write per logged-in user's page), the tags rendering nothing as
  in (a): it has no widget.

The visitors are logged-in users, each with a session of their own, and
guests; each has an address of their own, sent as `X-Forwarded-For` (the
load generator stands for the site's one reverse proxy:
`WHOS_ONLINE_PROXY_COUNT = 1`) and keeps the cookies each site sets, as a
browser does. Before the rounds each opens a page of each site once. In
(a), (b) and (d) visitor *i* opens, at second *k*, page *(i + k) mod 7* of
`/`, `/forum/`, the four threads `/forum/1/` to `/forum/4/` and `/about/`.

The load is open: each visitor opens a page a second, at a phase of their
own, whether or not their earlier pages were answered, each over a
connection of its own (gunicorn's sync workers close each after its
response). A page's latency runs from when it was due to the last byte of
its response, so a server that falls behind shows it in the latencies, not
as fewer pages sent (no coordinated omission). Each round runs every case
in turn, the order shifted by one each round: a warm-up of a few seconds,
then the measured window. **Achieved requests/s** is the pages answered 2xx
within the window ÷ its length; **p50 and p99** are over the pages due in
the window and answered 2xx (any others are counted in the second table).
Ratios are taken round by round against (a)'s figure of the same round,
then summarised: min / median / max.

The load generator (asyncio and the standard library: a request is one
connection, one write and a read to the end, which no HTTP client library
makes cheaper) runs on the same cores as gunicorn and Redis, as in the
study that issue 28 quotes; the second table says what it spent a page, and
how late its sends were. Server CPU is that of the gunicorn master and
workers (`/proc`), Redis' commands are those it ran (`INFO commandstats`,
those scripts run included) and its CPU that of its main thread (`INFO
cpu`), each over the round, warm-up and all, ÷ the pages sent. The machine
is shared and noisy: compare figures within one run only. The raw figures
are in `load.json`; `--quick` (in `make bench-smoke`) runs the same code
with 20 visitors for a few seconds, and its figures mean nothing;
`--from-json load.json` writes this page again from a run's figures.
"""


def write(results: dict[str, Any], out: Path) -> None:
    env, params = results["environment"], results["params"]
    users, visitors = params["users"], params["visitors"]
    head = [
        "# Under load: the example project under gunicorn",
        "",
        f"Measured by `make bench-load` on {env['date']}, a {results['mode']} "
        f"run of {results['minutes']:.1f} minutes at commit {env['commit']}; "
        f"{env['machine']}; {env['software']}. {visitors} visitors ({users} "
        f"logged-in users, {visitors - users} guests), each opening a page a "
        f"second; {params['rounds']} rounds of {params['seconds']} s measured "
        f"(after {params['warmup']} s of warm-up) of every case. The load "
        "generator runs on the same cores.",
        "",
        "## Each case beside the site without whos_online (a), same run",
        "",
        markdown(HEADER, rows(results)),
        "",
        "## What a page cost, median over rounds",
        "",
        markdown(COSTS, costs(results)),
        "",
    ]
    sweep = results.get("sweep")
    if sweep:
        rates = ", ".join(sweep["a"])
        head += [
            "## Capacity: the highest rate served with p99 under 100 ms",
            "",
            f"The same sites at {rates} visitors, each opening a page a second "
            f"(as many of them logged in as above), {params['sweep_rounds']} "
            f"rounds of {params['sweep_seconds']} s each; p99 is the median of "
            "the rounds'. A site's capacity is the highest rate at which that "
            "p99 stayed under 100 ms.",
            "",
            markdown(
                ["Rate", *(results["cases"][c] for c in sweep)], sweep_rows(sweep)
            ),
            "",
            markdown(
                ["Case", "Capacity", "÷ (a)", "Target", "Verdict"],
                capacity_rows(sweep, results["cases"]),
            ),
            "",
        ]
    for site, found in results.get("server_errors", {}).items():
        said = "; ".join(f"`{line}` ({n:,}×)" for line, n in found.items())
        head += [f"The `{site}` site's failed pages raised: {said}.", ""]
    (out / "load.md").write_text("\n".join(head) + "\n" + METHOD)
