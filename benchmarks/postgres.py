"""The per-request benchmark again, with the database in PostgreSQL.

SQLite runs inside the Django process, on tmpfs here, so a query costs no
round trip: the cheapest database django-online-users could have, and not
what most sites run. This runs the same cases with the sessions, the users
and django-online-users' table in a PostgreSQL server over loopback TCP.

``BENCH_POSTGRES`` (default ``postgresql://postgres@127.0.0.1:5432``) names
the server. The run creates a database of its own there and drops it
afterwards; it touches no other database. Without a server (or without
psycopg) this part is skipped and the report says so.

    python -m benchmarks.postgres RESULT.json ROUNDS CHEAP_BLOCK DEAR_BLOCK

is what benchmarks/run.py runs in a child process, with Django set up for
that database; it writes the result as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432"


def server() -> dict[str, Any]:
    url = urlsplit(os.environ.get("BENCH_POSTGRES", DEFAULT_SERVER))
    return {
        "host": url.hostname or "127.0.0.1",
        "port": url.port or 5432,
        "user": url.username or "postgres",
        "password": url.password or "",
    }


@contextmanager
def scratch_database() -> Iterator[str]:
    """A database of this run's own, dropped on the way out."""
    import psycopg

    name = f"whos_online_bench_{os.getpid()}"
    with psycopg.connect(dbname="postgres", autocommit=True, **server()) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield name
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def available() -> str | None:
    """Why this part cannot run here, or ``None`` if it can."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (requirements/bench.txt installs it)"
    try:
        with psycopg.connect(dbname="postgres", connect_timeout=2, **server()):
            return None
    except psycopg.Error as exc:
        return f"no PostgreSQL server answered ({type(exc).__name__})"


def run(redis_url: str, params: dict[str, Any], out: Path) -> dict[str, Any]:
    """Run the per-request benchmark in a child process against PostgreSQL,
    with half the rounds of the SQLite run (each request takes longer)."""
    with scratch_database() as name:
        env = {
            **os.environ,
            "BENCH_REDIS_URL": redis_url,
            "BENCH_POSTGRES_DB": name,
            "DJANGO_SETTINGS_MODULE": "benchmarks.bench_settings",
        }
        command = [
            sys.executable,
            "-m",
            "benchmarks.postgres",
            str(out),
            str(max(params["rounds"] // 2, 2)),
            str(params["cheap_block"]),
            str(params["dear_block"]),
        ]
        subprocess.run(command, cwd=ROOT, env=env, check=True)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def main() -> int:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from benchmarks import per_request

    call_command("migrate", verbosity=0)
    out, rounds, cheap, dear = sys.argv[1], *map(int, sys.argv[2:5])
    result = asdict(
        per_request.measure(rounds=rounds, cheap_block=cheap, dear_block=dear)
    )
    result["database"] = f"PostgreSQL {connection.pg_version // 10000}"
    Path(out).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
