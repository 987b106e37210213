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
Case = tuple[str, list[dict[str, str]]]


def measure(cases: dict[str, Case], n: int) -> dict[str, float]:
    """Instructions per request of each case: a site (``bare``, ``plain``,
    ``ours``, ``peer``) and its requests' cookies, taken in turn (``address``
    and ``path`` among them say those); a case of more than ``WARM + n``
    distinct requests warms up with all but its last ``n``."""
    with tempfile.TemporaryDirectory() as scratch:
        jar = Path(scratch) / "cases.json"
        jar.write_text(json.dumps(list(cases.values())))
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
    from benchmarks.project import OURS, PEER, PLAIN, with_after_auth

    stacks = {"bare": settings.STARTPROJECT, "plain": with_after_auth(PLAIN)}
    stacks |= {"ours": with_after_auth(OURS), "peer": with_after_auth(PEER)}
    cases = json.loads(Path(jar).read_text())
    sites = {name: Site(stacks[name]) for name in {site for site, _ in cases}}

    def requests(cookies: list[dict[str, str]], start: int, n: int) -> list[Any]:
        taken = [dict(cookies[i % len(cookies)]) for i in range(start, start + n)]
        return [
            environ(c.pop("path", "/"), c.pop("address", "203.0.113.9"), c)
            for c in taken
        ]

    counted = []
    for site, cookies in cases:
        warm = max(WARM, len(cookies) - n)
        for env in requests(cookies, 0, warm):
            sites[site](env)
        counted.append((sites[site], requests(cookies, warm, n)))
    gc.collect()
    gc.disable()  # a collection would land in one case's count, not another's
    for site, environs in counted:
        sys.call_tracing(lambda s=site, e=environs: [s(env) for env in e], ())


if __name__ == "__main__":
    child(sys.argv[1], int(sys.argv[2]))
