"""Another revision of ``whos_online`` against this checkout, side by side.

    make bench-compare REV=67e4a28
    .venv/bin/python benchmarks/compare.py 67e4a28 [--against REV] [--rounds N]

REV (and ``--against``, else this working tree) is checked out into a
temporary ``git worktree``. Python imports one ``whos_online`` at a time, so
each side runs in a worker process of its own: ``whos_online`` from its
tree, everything else from this checkout's benchmarks/ (stacks.py knows no
internals of the app), with a SQLite file and a Redis database of its own on
one private redis-server. Each round the parent asks the workers, in a
shuffled order, for a block of each case, every request through
``WSGIHandler`` alternated with one of its baseline (the same stack without
the middleware); a case adds the median of its requests less the baseline
request beside each. Figures are medians over rounds, ratios medians of
per-round ratios: the machine is noisy, so only figures of one run compare.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import servers  # noqa: E402
from benchmarks.common import ROOT, log  # noqa: E402

# label, case, baseline; the cases are stacks.CASES.
ROWS = [
    ("guarded user, startproject stack", "std-ours-user-guarded", "std-user"),
    ("guarded guest, startproject stack", "std-ours-guest-guarded", "std-guest"),
    ("guarded user, minimal chain", "ours-user-guarded", "none-user"),
    ("guarded guest, minimal chain", "ours-guest-guarded", "none-guest"),
    ("unguarded guest, startproject stack", "std-ours-guest", "std-guest"),
    ("one ZADD + a plain cookie, guest", "std-plain-guest-new", "std-guest"),
]
DEAR = {"std-ours-guest", "std-plain-guest-new"}  # a round trip each


def worker(tree: str) -> None:
    """Answer the parent's lines: ``renew`` (the guards), or ``CASE BASE N``
    with N requests of each, alternated, as µs: the median of CASE's, of
    BASE's, and of each CASE request's less the BASE request's beside it."""
    sys.path.insert(0, tree)
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    import whos_online
    from benchmarks.stacks import BY_NAME, World, start_response
    from whos_online.conf import conf

    assert whos_online.__file__.startswith(tree), whos_online.__file__
    world, clock = World(conf.GUARD_COOKIE_NAME), time.perf_counter

    def alternated(names: list[str], n: int) -> list[float]:
        cases = [BY_NAME[name] for name in names]
        calls = [world.handlers[case.stack, case.extra] for case in cases]
        environs = [[world.environ(case) for case in cases] for _ in range(n)]
        times: list[list[float]] = [[], []]
        for i, pair in enumerate(environs):
            for j in (0, 1) if i % 2 else (1, 0):  # each goes first half the time
                start = clock()
                calls[j](pair[j], start_response).close()
                times[j].append(clock() - start)
        less = [a - b for a, b in zip(*times, strict=True)]
        return [statistics.median(t) * 1e6 for t in (*times, less)]

    for _, *names in ROWS:
        alternated(names, 20)  # scripts loaded, code paths hot
    gc.collect()
    gc.freeze()
    print(json.dumps(whos_online.__file__), flush=True)
    for line in sys.stdin:
        words = line.split()
        answer: list[float] | None = None
        if words == ["renew"]:
            world.renew_guards()
        else:
            gc.disable()
            answer = alternated(words[:2], int(words[2]))
            gc.enable()
        print(json.dumps(answer), flush=True)


class Side:
    def __init__(self, label: str, tree: Path, env: dict[str, str]) -> None:
        self.label = label
        command = [sys.executable, __file__, "--worker", str(tree)]
        self.proc = subprocess.Popen(
            command, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        log(f"{label}: whos_online from {self.ask('')}")

    def ask(self, line: str) -> Any:
        assert self.proc.stdin and self.proc.stdout
        if line:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the worker of {self.label} stopped")
        return json.loads(answer)

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait()


@contextmanager
def checked_out(rev: str | None, into: Path) -> Iterator[tuple[str, Path]]:
    """``rev`` in a temporary worktree (``None``: this working tree)."""
    if rev is None:
        yield "this tree", ROOT
        return
    git = ["git", "-C", str(ROOT)]
    subprocess.run([*git, "worktree", "add", "--detach", str(into), rev], check=True)
    try:
        yield rev, into
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(into)], check=True)


Figures = dict[str, dict[str, list[list[float]]]]


def measure(sides: list[Side], rounds: int, block: int) -> Figures:
    """Per side and row, each round's [case µs, baseline µs, added µs]."""
    figures: Figures = {side.label: {row[0]: [] for row in ROWS} for side in sides}
    rng = random.Random(5)
    for number in range(rounds):
        for side in sides:
            side.ask("renew")
        jobs = [(side, row) for side in sides for row in ROWS]
        rng.shuffle(jobs)
        for side, (label, case, base) in jobs:
            n = block // 5 if case in DEAR else block
            figures[side.label][label].append(side.ask(f"{case} {base} {n}"))
        log(f"round {number + 1} of {rounds}")
    return figures


def report(figures: Figures) -> str:
    """Added µs per row, each side's, and new ÷ old; then the ratios of
    issue 13 for each side. Each is the median over rounds."""
    sides, med = list(figures), statistics.median

    def column(side: str, label: str, i: int) -> list[float]:
        return [figures[side][label][r][i] for r in range(len(figures[side][label]))]

    def ratio(top: list[float], bottom: list[float]) -> float:
        return med([a / b for a, b in zip(top, bottom, strict=True) if b > 0] or [0])

    def line(label: str, *cells: str) -> str:
        return f"{label:<42}" + "".join(f"{cell:>22}" for cell in cells)

    lines = [line("µs added per request", *sides, "new ÷ old")]
    for label, _, _ in ROWS:
        old, new = (column(side, label, 2) for side in sides)
        cells = f"{med(old):+.2f}", f"{med(new):+.2f}", f"{ratio(new, old):.2f}×"
        lines.append(line(label, *cells))
    lines.append("")
    for label, _, _ in ROWS[:4]:
        shares = (ratio(column(s, label, 2), column(s, label, 1)) for s in sides)
        lines.append(line(f"{label} ÷ bare", *(f"{x:.2%}" for x in shares)))
    unguarded, plain = ROWS[4][0], ROWS[5][0]
    x = (ratio(column(s, unguarded, 2), column(s, plain, 2)) for s in sides)
    lines.append(
        line("unguarded guest ÷ ZADD + plain cookie", *(f"{v:.2f}×" for v in x))
    )
    for label, _, base in ROWS[:4]:
        bare = (f"{med(column(s, label, 1)):.1f}" for s in sides)
        lines.append(line(f"bare request, {base} (µs)", *bare))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", nargs="?", help="the old revision")
    parser.add_argument("--against", help="the new revision (default: this tree)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--block", type=int, default=500, help="requests per block")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker)
    if not args.rev:
        parser.error("give the revision to compare against, e.g. 67e4a28")
    scratch = Path(tempfile.mkdtemp(prefix="whos-online-compare-"))
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, scratch, ignore_errors=True)
        redis_url = stack.enter_context(servers.redis_server(scratch))
        sides = []
        for db, rev in enumerate((args.rev, args.against)):
            label, tree = stack.enter_context(checked_out(rev, scratch / f"tree{db}"))
            env = os.environ | {"BENCH_DB": str(scratch / f"{db}.sqlite3")}
            env["BENCH_REDIS_URL"] = f"{redis_url.rpartition('/')[0]}/{db}"
            sides.append(Side(f"{label} ({'old' if db == 0 else 'new'})", tree, env))
            stack.callback(sides[-1].close)
        figures = measure(sides, args.rounds, args.block)
    print(report(figures))


if __name__ == "__main__":
    main()
