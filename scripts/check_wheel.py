"""Check that a built wheel ships what a site needs besides the code."""

from __future__ import annotations

import sys
import zipfile

REQUIRED = [
    "whos_online/py.typed",
    "whos_online/templates/whos_online/whos_online.html",
    "whos_online/templatetags/whos_online.py",
    "whos_online/management/commands/prune_online.py",
]


def main(path: str) -> int:
    names = set(zipfile.ZipFile(path).namelist())
    missing = [name for name in REQUIRED if name not in names]
    stray = sorted(n for n in names if n.startswith(("tests/", "example_project/")))
    for name in missing:
        print(f"missing from {path}: {name}")
    for name in stray:
        print(f"should not be in {path}: {name}")
    if missing or stray:
        return 1
    print(f"{path}: templates, py.typed and commands are inside")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
