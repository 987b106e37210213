"""Instructions per request, counted by valgrind's callgrind: steadier than
µs on a shared machine. One Python under valgrind serves every case: a
warm-up of each, then ``n`` requests of each inside ``sys.call_tracing``, a
C function nothing else calls, so callgrind counts only inside it
(``--toggle-collect``) and writes one profile per case (``--dump-after``).
One process, as for the µs: the same caches, connections and memory layout.

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
from pathlib import Path
from typing import Any

WARM = 20
SITES = {"bare": "bare", "plain": "plain", "guarded": "ours"}


def measure(cases: dict[str, list[dict[str, str]]], n: int) -> dict[str, float]:
    """Instructions per request of each case (its cookies taken in turn)."""
    with tempfile.TemporaryDirectory() as scratch:
        jar = Path(scratch) / "cases.json"
        sites = [next((SITES[w] for w in SITES if w in case), "bare") for case in cases]
        jar.write_text(json.dumps(list(zip(sites, cases.values(), strict=True))))
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
    totals = [int(re.findall(r"^totals: (\d+)", part, re.M)[0]) for part in parts]
    return {case: total / n for case, total in zip(cases, totals, strict=True)}


def child(jar: str, n: int) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    django.setup()
    from django.conf import settings

    from benchmarks.bench import Site, environ
    from benchmarks.project import OURS, PLAIN, with_after_auth

    stacks = {"bare": settings.STARTPROJECT, "plain": with_after_auth(PLAIN)}
    sites = {
        name: Site(stacks.get(name) or with_after_auth(OURS)) for name in SITES.values()
    }
    cases = [
        (sites[site], cookies) for site, cookies in json.loads(Path(jar).read_text())
    ]

    def requests(cookies: list[dict[str, str]], start: int, n: int) -> list[Any]:
        taken = [dict(cookies[i % len(cookies)]) for i in range(start, start + n)]
        return [environ("/", c.pop("address", "203.0.113.9"), c) for c in taken]

    for site, cookies in cases:
        for env in requests(cookies, 0, WARM):
            site(env)
    counted = [(site, requests(cookies, WARM, n)) for site, cookies in cases]
    gc.collect()
    gc.disable()  # a collection would land in one case's count, not another's
    for site, environs in counted:
        sys.call_tracing(lambda s=site, e=environs: [s(env) for env in e], ())


if __name__ == "__main__":
    child(sys.argv[1], int(sys.argv[2]))
