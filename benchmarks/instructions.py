"""Instructions per request, counted by valgrind's callgrind: steadier than
µs on a shared machine. Each case runs in a Python of its own under
valgrind, serves ``WARM`` requests, then ``n`` more inside
``sys.call_tracing``, a C function nothing else calls: callgrind counts only
inside it (``--toggle-collect``), so start-up and warm-up are left out.

    python -m benchmarks.instructions SITE COOKIES.json REQUESTS   # the child
"""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

WARM = 20
SITES = {"bare": "bare", "plain": "plain", "guarded": "ours"}


def site_of(case: str) -> str:
    return next((site for word, site in SITES.items() if word in case), "bare")


def count(site: str, cookies: list[dict[str, str]], requests: int) -> int:
    """Instructions a Python under callgrind runs to serve ``requests``."""
    with tempfile.TemporaryDirectory() as scratch:
        jar = Path(scratch) / "cookies.json"
        jar.write_text(json.dumps(cookies))
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={scratch}/out",
        ]
        command += ["--collect-atstart=no", "--toggle-collect=_PyEval_CallTracing"]
        command += [sys.executable, "-m", "benchmarks.instructions", site, str(jar)]
        env = os.environ | {"PYTHONHASHSEED": "0"}
        done = subprocess.run(
            [*command, str(requests)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
    return int(re.findall(r"Collected : (\d+)", done.stderr)[-1])


def measure(cases: dict[str, list[dict[str, str]]], n: int) -> dict[str, float]:
    """Instructions per request of each case (its cookies taken in turn)."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counted = pool.map(lambda case: count(site_of(case), cases[case], n), cases)
    return {
        case: instructions / n
        for case, instructions in zip(cases, counted, strict=True)
    }


def child(site: str, jar: str, requests: int) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    django.setup()
    from django.conf import settings

    from benchmarks.bench import Site, environ
    from benchmarks.figures import OURS, PLAIN, with_after_auth

    stacks: dict[str, Any] = {
        "bare": settings.STARTPROJECT,
        "plain": with_after_auth(PLAIN),
    }
    serve = Site(stacks.get(site) or with_after_auth(OURS))
    cookies = json.loads(Path(jar).read_text())

    def requests_from(start: int, n: int) -> list[dict[str, Any]]:
        taken = [dict(cookies[i % len(cookies)]) for i in range(start, start + n)]
        return [environ("/", c.pop("address", "203.0.113.9"), c) for c in taken]

    for env in requests_from(0, WARM):
        serve(env)
    counted = requests_from(WARM, requests)
    gc.collect()
    gc.disable()  # a collection would land in one case's count, not another's
    sys.call_tracing(lambda: [serve(env) for env in counted], ())


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2], int(sys.argv[3]))
