"""The path a request takes through the app's modules, as it runs: for each
kind of request, the app's modules in the order its calls enter them
(``store/`` counted as one), how many moves between modules that makes, and
how many of them climb back to a higher layer (the layers import-linter
checks, from ``pyproject.toml``). What issue 33 asks to keep short.

    .venv/bin/python benchmarks/path.py [--tree DIR] [--show]

``--tree`` measures another checkout's ``whos_online`` (say a worktree of
an earlier commit) with this one's requests, so two trees compare on the
same pages; ``--show`` prints each path.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent.parent

# A navigation, as a browser sends it: the page's rooms are recorded.
OPENED = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}


def floors(tree: Path) -> dict[str, int]:
    """Module (``rooms``, ``store``) -> its layer, 0 the lowest."""
    text = (tree / "pyproject.toml").read_text("utf-8")
    start = text.index("layers = [")
    block = text[start : text.index("]", start)]
    layers = re.findall(r'"([^"]+)"', block)
    found: dict[str, int] = {}
    for height, layer in enumerate(reversed(layers)):
        for name in layer.split("|"):
            found[name.strip().removeprefix("whos_online.")] = height
    return found


def module_of(filename: str, package: str) -> str | None:
    """The app's module a code object is in (``store`` for its parts)."""
    if not filename.startswith(package):
        return None
    parts = Path(filename[len(package) :]).with_suffix("").parts
    return parts[0] if parts else None


@contextmanager
def entries(package: str) -> Iterator[list[str]]:
    """The app's modules in the order the calls made meanwhile enter them."""
    seen: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            module = module_of(frame.f_code.co_filename, package)
            if module is not None:
                seen.append(f"{module}:{frame.f_code.co_qualname}")

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


def walk(seen: list[str], height: dict[str, int]) -> tuple[list[str], int, int]:
    """The stays (consecutive entries of one module merged), the moves
    between them and the climbs among those moves."""
    known = [entry.partition(":")[0] for entry in seen]
    known = [module for module in known if module in height]
    stays = [m for i, m in enumerate(known) if i == 0 or m != known[i - 1]]
    moves = len(stays) - 1
    climbs = sum(
        1 for a, b in zip(stays, stays[1:], strict=False) if height[b] > height[a]
    )
    return stays, moves, climbs


# Each kind of request, in the order a visitor makes them: (what it is,
# the path, whether a browser opened it); a user's pages begin at "user, ".
REQUESTS = [
    ("guest, first page", "/", False),
    ("guest, guarded page, its guard first read", "/", False),
    ("guest, guarded page", "/", False),
    ("guest opens a thread", "/thread/1/", True),
    ("guest, the same thread again", "/thread/1/", True),
    ("guest opens another thread", "/thread/2/", True),
    ("user, first page", "/", False),
    ("user, guarded page, its guard first read", "/", False),
    ("user, guarded page", "/", False),
    ("user opens a thread", "/thread/1/", True),
    ("user opens another thread", "/thread/2/", True),
]


def measure(tree: Path, show: bool) -> list[tuple[str, int, int]]:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import override_settings

    import whos_online
    from benchmarks.project import with_after_auth

    package = str(Path(whos_online.__file__).parent) + os.sep
    assert package.startswith(str(tree)), package
    height = floors(tree)
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("reader")
    stack = with_after_auth("whos_online.middleware.WhosOnlineMiddleware")
    rows = []
    with override_settings(MIDDLEWARE=stack, ROOT_URLCONF=settings.ROOT_URLCONF):
        # The process's first request builds its settings and store: not
        # what each request does.
        Client(REMOTE_ADDR="192.0.2.6").get("/")
        client = Client(REMOTE_ADDR="192.0.2.7")
        for name, path, opened in REQUESTS:
            if name == "user, first page":
                client = Client(REMOTE_ADDR="192.0.2.8")
                client.force_login(user)
            with entries(package) as seen:
                response = client.get(path, headers=OPENED if opened else None)
            assert response.status_code == 200, (name, response.status_code)
            stays, moves, climbs = walk(seen, height)
            rows.append((name, moves, climbs))
            if show:
                print(f"{name}: {' > '.join(stays)}")
            if os.environ.get("PATH_FUNCTIONS"):
                print(f"{name}: {' > '.join(seen)}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=HERE)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    tree = args.tree.resolve()
    sys.path[:0] = [str(tree), str(HERE)]
    from benchmarks.bench import redis_server, scratch

    with scratch("whos-online-path-") as workdir, redis_server(workdir) as url:
        os.environ |= {"BENCH_REDIS_URL": url, "BENCH_DB": str(workdir / "db")}
        os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
        import django

        django.setup()
        rows = measure(tree, args.show)
    print("| request | moves between modules | climbs back up |")
    print("| --- | --- | --- |")
    for name, moves, climbs in rows:
        print(f"| {name} | {moves} | {climbs} |")
    print(f"| all | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows)} |")


if __name__ == "__main__":
    main()
