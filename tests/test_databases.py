"""The database the suite runs on: SQLite in memory by default, or the server
``WHOS_ONLINE_TEST_DATABASE`` names (`make test-postgres`, `make
test-mysql`), through scripts/on_database.py, which runs the suite once with
``CONN_MAX_AGE`` 0 and once with persistent connections.

An sdist ships no scripts/, so the script's tests are skipped there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.db import connection

from tests.settings import database
from whos_online import visibility
from whos_online.models import Visibility

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "on_database.py"


def test_without_a_url_the_suite_runs_on_sqlite_in_memory() -> None:
    assert database("", "") == {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": ":memory:",
    }


def test_a_postgres_url_names_the_server_and_the_database() -> None:
    found = database("postgres://postgres:s%40cret@127.0.0.1:5432/whos_online", "")
    assert found == {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "whos_online",
        "USER": "postgres",
        "PASSWORD": "s@cret",
        "HOST": "127.0.0.1",
        "PORT": "5432",
        "CONN_MAX_AGE": 0,
    }


def test_persistent_connections_are_checked_before_reuse() -> None:
    found = database("postgresql://postgres@db/whos_online", "persistent")
    assert (found["CONN_MAX_AGE"], found["CONN_HEALTH_CHECKS"]) == (None, True)
    assert database("postgres://db/x", "600")["CONN_MAX_AGE"] == 600


def test_a_mysql_socket_keeps_its_path_as_written() -> None:
    found = database("mysql://root@%2Ftmp%2FWhos%2Fmysqld.sock/whos_online", "")
    assert found["ENGINE"] == "django.db.backends.mysql"
    assert (found["HOST"], found["PORT"]) == ("/tmp/Whos/mysqld.sock", "")
    assert found["OPTIONS"] == {"charset": "utf8mb4"}


def test_a_url_without_a_database_name_uses_whos_online() -> None:
    assert database("mariadb://root@127.0.0.1", "")["NAME"] == "whos_online"


def test_a_url_of_another_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="no engine"):
        database("oracle://system@db/x", "")


def test_this_run_uses_the_database_the_environment_names() -> None:
    expected = database(
        os.environ.get("WHOS_ONLINE_TEST_DATABASE", ""),
        os.environ.get("WHOS_ONLINE_TEST_CONN_MAX_AGE", ""),
    )
    configured = django_settings.DATABASES["default"]
    # NAME is the test database's by now.
    compared = ["ENGINE", "HOST", "PORT", "USER", "CONN_MAX_AGE", "CONN_HEALTH_CHECKS"]
    assert {key: configured.get(key) for key in compared} == {
        key: expected.get(key, configured.get(key)) for key in compared
    }


# Two requests at once, each with a connection of its own, as on a site.


def at_once(*calls: Callable[[], bool]) -> list[bool]:
    """Each call in a thread of its own, with a database connection of its
    own, all let go at the same moment; what each returned."""
    both = threading.Barrier(len(calls))
    returned: list[bool] = []

    def run(call: Callable[[], bool]) -> None:
        try:
            both.wait()
            returned.append(call())
        finally:
            connection.close()  # this thread's own

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return returned


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="SQLite in memory, shared between threads, refuses a second writer "
    "at once ('database table is locked') where a server waits for the first",
)
def test_two_first_choices_at_once_are_both_kept() -> None:
    """A user's first two choices, made at the same moment from two devices:
    neither has a row to update, both insert, and neither is lost nor
    refused."""
    for attempt in range(5):
        user = User.objects.create(username=f"twice{attempt}")
        kept = at_once(
            partial(visibility.set_invisible, user, True),
            partial(visibility.set_hide_last_seen, user, True),
        )
        row = Visibility.objects.get(user=user)
        assert kept == [True, True]
        assert (row.invisible, row.hide_last_seen) == (True, True)


# scripts/on_database.py, with a server given: it starts none.

needs_script = pytest.mark.skipif(
    not SCRIPT.exists(), reason="the sdist leaves out the repository's scripts"
)


@pytest.fixture
def on_database() -> ModuleType:
    spec = importlib.util.spec_from_file_location("on_database", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def what_each_run_saw(tmp_path: Path) -> list[str]:
    """A command that notes the database and lifetime it was given."""
    note = (
        "import json, os, sys; open(sys.argv[1], 'a').write(json.dumps("
        "[os.environ['WHOS_ONLINE_TEST_DATABASE'],"
        " os.environ['WHOS_ONLINE_TEST_CONN_MAX_AGE']]) + '\\n')"
    )
    return [sys.executable, "-c", note, str(tmp_path / "runs")]


@needs_script
def test_the_command_runs_with_each_connection_lifetime(
    on_database: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = "postgres://postgres@127.0.0.1:1/whos_online"
    monkeypatch.setenv("WHOS_ONLINE_TEST_DATABASE", given)
    assert on_database.main(["postgres", "--", *what_each_run_saw(tmp_path)]) == 0
    runs = [json.loads(line) for line in (tmp_path / "runs").read_text().splitlines()]
    assert runs == [[given, "0"], [given, "persistent"]]


@needs_script
def test_a_failed_run_fails_the_whole(
    on_database: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WHOS_ONLINE_TEST_DATABASE", "mysql://root@127.0.0.1:1/x")
    command = [sys.executable, "-c", "raise SystemExit(3)"]
    assert on_database.main(["mysql", "--", *command]) == 3


@needs_script
def test_a_server_of_the_other_engine_is_refused(
    on_database: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WHOS_ONLINE_TEST_DATABASE", "mysql://root@127.0.0.1:1/x")
    with pytest.raises(SystemExit, match="no postgres server"):
        on_database.main(["postgres", "--", "true"])


@needs_script
def test_without_a_command_it_says_so(on_database: ModuleType) -> None:
    with pytest.raises(SystemExit):
        on_database.main(["postgres"])


@needs_script
def test_a_server_that_does_not_answer_is_told_apart(on_database: ModuleType) -> None:
    # Nothing listens on port 1.
    assert not on_database.answers("postgres", "postgres://postgres@127.0.0.1:1/x")
    assert not on_database.answers("mysql", "mysql://root@127.0.0.1:1/x")
