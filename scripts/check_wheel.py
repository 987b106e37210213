"""Check that a built wheel ships what a site needs besides the code, and that
an sdist leaves out what only the repository needs.

Usage: check_wheel.py dist/*.whl dist/*.tar.gz
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "whos_online"
REQUIRED = [
    "whos_online/py.typed",
    "whos_online/templates/whos_online/whos_online.html",
    "whos_online/templatetags/whos_online.py",
    "whos_online/management/commands/prune_online.py",
    "whos_online/static/whos_online/whos_online.css",
    "whos_online/migrations/0002_visibility.py",
    # Every Lua script and every compiled catalog of the checkout, wherever
    # in the package they are.
    *sorted(
        f"whos_online/{p.relative_to(PACKAGE).as_posix()}"
        for p in PACKAGE.rglob("*.lua")
    ),
    *sorted(
        f"whos_online/{p.relative_to(PACKAGE).as_posix()}"
        for p in PACKAGE.glob("locale/*/LC_MESSAGES/django.mo")
    ),
]
# The benchmark charts and raw results, and anything compiled.
NOT_IN_SDIST = (".png", "results.json", ".pyc")
# The repository's own folders: the sdist ships the package, its tests and docs.
NOT_IN_SDIST_FOLDERS = ("example_project/", "benchmarks/", "scripts/")


def wheel_problems(path: str) -> list[str]:
    names = set(zipfile.ZipFile(path).namelist())
    missing = [f"missing: {name}" for name in REQUIRED if name not in names]
    stray = [
        f"should not be there: {name}"
        for name in sorted(names)
        if name.startswith(("tests/", "example_project/"))
    ]
    return missing + stray


def sdist_problems(path: str) -> list[str]:
    with tarfile.open(path) as sdist:
        names = sdist.getnames()
    return [
        f"should not be there: {name}"
        for name in sorted(names)
        if name.endswith(NOT_IN_SDIST)
        or name.partition("/")[2].startswith(NOT_IN_SDIST_FOLDERS)
    ]


def main(paths: list[str]) -> int:
    failed = False
    for path in paths:
        if path.endswith(".whl"):
            problems = wheel_problems(path)
            passed = (
                "templates, py.typed, commands, Lua scripts and catalogs are inside"
            )
        else:
            problems = sdist_problems(path)
            passed = "no example project, benchmark charts or results, nothing compiled"
        for problem in problems:
            print(f"{path}: {problem}")
        if not problems:
            print(f"{path}: {passed}")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
