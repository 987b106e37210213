"""docs/benchmarks/streams.md from benchmarks/streams.py's figures."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from benchmarks.streams import DEADLINE
from benchmarks.streams_clients import OPENING, POLL_SECONDS

ROWS = (
    ("kb_per_stream", "Worker memory an open stream (RSS growth ÷ N)", "KiB", 1),
    ("threads_after", "Worker threads with N streams open (all workers)", "", 0),
    ("opening_s", f"Seconds to open the N streams ({OPENING} at a time)", "s", 1),
    ("quiet_cpu_ms_per_s", "Worker CPU, all open, nothing happening", "ms/s", 2),
    ("cpu_ms_per_join", "Worker CPU a join event (fan-out to N)", "ms", 1),
    ("cpu_ms_per_join_net", "… less the quiet rate", "ms", 1),
    ("delay_p50_ms", "Record → event at a client, p50", "ms", 0),
    ("delay_p99_ms", "Record → event at a client, p99", "ms", 0),
    ("delay_max_ms", "Record → event at a client, max", "ms", 0),
    ("full_collections", "Full garbage collections among the joins", "", 0),
    ("full_collection_ms", "… each, median", "ms", 0),
    ("ended", "Streams the worker ended (dropped)", "", 0),
    ("events_missed", f"Events not at a client within {DEADLINE:.0f} s", "", 0),
    ("poll_cpu_ms_per_request", "Polling: worker CPU a fragment request", "ms", 2),
    ("poll_p50_ms", "Polling: fragment latency p50", "ms", 1),
)


def spread(values: list[float], unit: str, digits: int) -> str:
    def f(value: float) -> str:
        return f"{value:,.{digits}f}"

    values = [v for v in values if v is not None]
    if not values:
        return "—"
    unit = f" {unit}" if unit else ""
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{f(low)} / **{f(mid)}** / {f(high)}{unit}"


def heading(column: str) -> str:
    """``10000`` (one worker) or ``10000@2`` (two), as a column's heading."""
    n, _, workers = column.partition("@")
    return f"N = {int(n):,}" + (f", {workers} workers" if workers else "")


def median(rounds: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in rounds if r[key] is not None))


def write(results: dict[str, Any], out: Path) -> None:
    env, params = results["environment"], results["params"]
    sizes = list(results["rounds"])
    lines = ["# Live presence: open streams against polling tabs", ""]
    lines += [
        f"Measured by `{results['command']}` on {env['date']}, a "
        f"{results['mode']} run of {results['minutes']:.1f} minutes at commit "
        f"{env['commit']}; {env['machine']}; {env['software']}. "
        f"{params['rounds']} rounds of each N, a fresh worker each; "
        f"{params['joins']} joins a round; polling measured for "
        f"{params['poll']} s a round. "
        + (
            "The worker on a core of its own; the clients and Redis on the others."
            if params.get("pinned")
            else "The clients, the workers and Redis share the same cores."
        ),
        "",
        "## Streams, min / **median** / max over rounds",
        "",
        "| Figure | " + " | ".join(heading(n) for n in sizes) + " |",
        "| --- | " + " | ".join("---" for _ in sizes) + " |",
    ]
    for key, label, unit, digits in ROWS:
        cells = [
            spread([r.get(key) for r in results["rounds"][n]], unit, digits)
            for n in sizes
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", f"## Against N tabs polling every {POLL_SECONDS} s (medians)", ""]
    lines += [
        "| N | Polling: requests/s | Polling: worker CPU | Streams: worker CPU, "
        "quiet | Streams: a join | Joins a minute at which streams cost as much |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for n in sizes:
        rounds = results["rounds"][n]
        streams, _, workers = n.partition("@")
        rate = int(streams) / POLL_SECONDS
        polling = rate * median(rounds, "poll_cpu_ms_per_request")  # ms/s
        quiet = median(rounds, "quiet_cpu_ms_per_s")
        join = median(rounds, "cpu_ms_per_join")
        even = (polling - quiet) / join * 60 if join else float("inf")
        behind = polling > 1e3 * int(workers or 1)
        over = "; more than the workers have, so they fell behind" if behind else ""
        lines.append(
            f"| {heading(n)[4:]} | {rate:,.1f}/s saved | {polling:,.0f} ms/s "
            f"({polling / 10:,.1f}% of a core{over}) | {quiet:,.2f} ms/s | "
            f"{join:,.1f} ms | {even:,.0f} |"
        )
    lines += [
        "",
        "Polling's CPU is N ÷ 30 requests a second times the worker's CPU a "
        "fragment request, measured by requesting it at that rate, open-loop, "
        "with no stream open. The streams send no request while open; their "
        f"cost is the quiet rate (over {params['quiet']} s; a keep-alive "
        "comment goes to each every 15 s) plus the "
        "fan-out of each join or leave. The last column is the rate of joins "
        "and leaves at which the streams would cost the worker as much CPU as "
        "polling does; below it they cost less. Where polling needs more "
        "CPU than the workers have, they fell behind and their CPU a request, "
        "measured saturated, is higher than it would be on enough workers. "
        "With several workers, memory, threads and CPU are all the workers' "
        "together.",
        "",
    ]
    if results.get("server_errors"):
        lines += ["## Errors in the worker's log", ""]
        for name, text in results["server_errors"].items():
            lines += [f"`{name}`:", "", "```", text.strip(), "```", ""]
    lines += ["## Method", "", _method(), ""]
    (out / "streams.md").write_text("\n".join(lines))


def _method() -> str:
    from benchmarks import streams

    doc = streams.__doc__ or ""
    return doc.split("\n\n", 2)[2].strip()
