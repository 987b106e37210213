"""Instructions per request, counted by valgrind's callgrind: steadier than
µs on a shared machine. One Python under valgrind serves every case: a
warm-up of each, then ``n`` requests of each inside ``sys.call_tracing``, a
C function nothing else calls, so callgrind counts only inside it
(``--toggle-collect``) and writes one profile per case (``--dump-after``).
One process, as for the µs: the same caches, connections and memory layout.
Every case is warmed up first, and each again just before its count. A
case with settings of its own (``override_settings``) is counted after the
others, inside its settings: a change of settings builds the app's store
(and its process's state) again.

Redis' ``INFO commandstats`` is read around each case's count, outside it:
what Redis ran for the counted requests (a guarded page's snapshots).

    python -m benchmarks.instructions CASES.json REQUESTS   # the child
"""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Any, NamedTuple

WARM = 20


class Case(NamedTuple):
    """A site (``bare``, ``plain``, ``ours``, ``peer``) and its requests'
    cookies, taken in turn (``address`` and ``path`` among them say those);
    ``settings``, if any, in force while it is warmed up and counted;
    ``warm``: requests before those counted (a page, slow under valgrind,
    needs fewer than a request that costs little); ``counted``: how many are
    counted, if not the run's number (a page is some thirty times as slow as
    a request, and its count as steady after fewer)."""

    site: str
    cookies: list[dict[str, str]]
    settings: dict[str, Any] | None = None
    warm: int = WARM
    counted: int | None = None


class Counted(NamedTuple):
    """Per case: instructions per request, and the calls of each command
    Redis ran during its counted requests (a script's own commands too)."""

    instructions: dict[str, float]
    redis: dict[str, dict[str, int]]


def measure(
    cases: dict[str, Case], n: int, listing: dict[str, Any] | None = None
) -> Counted:
    """Instructions per request of each case; a case of more than ``WARM +
    n`` distinct requests warms up with all but its last ``n``. ``listing``:
    what the plain listing page shows (``project.LISTING``)."""
    # Those with settings last, as the child counts them.
    order = sorted(cases, key=lambda name: cases[name].settings is not None)
    with tempfile.TemporaryDirectory() as scratch:
        jar = Path(scratch) / "cases.json"
        taken = [cases[name] for name in order]
        jar.write_text(json.dumps({"cases": taken, "listing": listing or {}}))
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={scratch}/out",
        ]
        command += ["--collect-atstart=no", "--toggle-collect=_PyEval_CallTracing"]
        command += ["--dump-after=_PyEval_CallTracing"]
        command += [sys.executable, "-m", "benchmarks.instructions", str(jar), str(n)]
        env = os.environ | {"PYTHONHASHSEED": "0"}
        subprocess.run(command, capture_output=True, env=env, check=True)
        parts = [Path(scratch, f"out.{i + 1}").read_text() for i in range(len(cases))]
        ran = json.loads(Path(scratch, "redis.json").read_text())
    totals = [int(re.findall(r"^totals: (\d+)", part, re.M)[0]) for part in parts]
    return Counted(
        {
            case: total / (cases[case].counted or n)
            for case, total in zip(order, totals, strict=True)
        },
        dict(zip(order, ran, strict=True)),
    )


def child(jar: str, n: int) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    django.setup()
    from django.conf import settings
    from django.test.utils import override_settings

    from benchmarks import project
    from benchmarks.bench import Site
    from benchmarks.project import OURS, PEER, PLAIN, with_after_auth
    from whos_online import state

    # Under valgrind a request takes some fifty times as long as natively,
    # so a count of fifty guarded requests straddled the process's refresh
    # of Redis' clock (every 5 s) in one run and not in the next: about 7,000
    # instructions a request either way, for a refresh a native server makes
    # once in thousands of requests. The counts leave it out.
    state.CLOCK_REFRESH_SECONDS = 10.0**9

    stacks = {"bare": settings.STARTPROJECT, "plain": with_after_auth(PLAIN)}
    stacks |= {"ours": with_after_auth(OURS), "peer": with_after_auth(PEER)}
    given = json.loads(Path(jar).read_text())
    project.LISTING.update(given["listing"])
    cases = [Case(*case) for case in given["cases"]]
    sites = {name: Site(stacks[name]) for name in {case.site for case in cases}}
    ran: list[dict[str, int]] = []
    for case in [case for case in cases if case.settings is None]:
        warmed(case, sites[case.site], n)  # every case, for a process in its stride
    gc.disable()  # a collection would land in one case's count, not another's
    for case in cases:
        # Each case warmed up again just before its count: its caches as a
        # server with steady traffic would have them, not as other cases left
        # them.
        given = override_settings(**case.settings) if case.settings else nullcontext()
        with given:  # a store built again for settings of the case's own
            environs = warmed(case, sites[case.site], n)
            gc.collect()
            ran.append(count(sites[case.site], environs))
    Path(jar).with_name("redis.json").write_text(json.dumps(ran))


def warmed(case: Case, site: Any, n: int) -> list[dict[str, Any]]:
    """The case's requests to count (``n`` unless it says), after its
    warm-up."""
    n = case.counted or n
    warm = max(case.warm, len(case.cookies) - n)
    for env in requests(case.cookies, 0, warm):
        site(env)
    return requests(case.cookies, warm, n)


def requests(cookies: list[dict[str, str]], start: int, n: int) -> list[Any]:
    from benchmarks.bench import environ

    taken = [dict(cookies[i % len(cookies)]) for i in range(start, start + n)]
    return [
        environ(c.pop("path", "/"), c.pop("address", "203.0.113.9"), c) for c in taken
    ]


def count(site: Any, environs: list[dict[str, Any]]) -> dict[str, int]:
    """Count the requests (callgrind dumps a profile after each); the calls
    of each command Redis ran meanwhile."""
    from django_redis import get_redis_connection

    from benchmarks.bench import IGNORED

    client = get_redis_connection("presence")
    client.config_resetstat()
    sys.call_tracing(lambda: [site(env) for env in environs], ())
    stats = client.info("commandstats")
    ran = {key.removeprefix("cmdstat_"): int(v["calls"]) for key, v in stats.items()}
    return {name: calls for name, calls in ran.items() if not name.startswith(IGNORED)}


if __name__ == "__main__":
    child(sys.argv[1], int(sys.argv[2]))
