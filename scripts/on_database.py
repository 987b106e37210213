"""Run a command against a PostgreSQL or MySQL/MariaDB server, starting one
where none answers; `make test-postgres` and `make test-mysql` run the fast
suite through it.

Usage: on_database.py postgres|mysql [--own-server] -- COMMAND...

COMMAND runs once for each connection lifetime, with
``WHOS_ONLINE_TEST_DATABASE`` naming the server (tests/settings.py reads it)
and ``WHOS_ONLINE_TEST_CONN_MAX_AGE`` set to ``0`` (a connection a request),
then ``persistent`` (kept, and checked before reuse). The tests use a
database named ``whos_online``: pytest-django creates ``test_whos_online``
and drops it after, and touches no other.

Where the server is:

1. ``WHOS_ONLINE_TEST_DATABASE``, when set: that server, started by nobody.
2. The machine's own, when it answers on its usual port as the usual
   administrator with no password (postgres@127.0.0.1:5432,
   root@127.0.0.1:3306); a Debian cluster or MariaDB that is installed but
   stopped is started first, when run as root, and left running.
3. Otherwise, or with ``--own-server``, a throwaway server of its own: a new
   data directory in a temporary folder, on a free loopback port (PostgreSQL)
   or a socket in that folder (MySQL/MariaDB), open to all without a
   password, stopped and deleted when COMMAND is done. Run as root on a
   machine without the server, it installs Debian's package first.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

NAME = "whos_online"
LIFETIMES = ("0", "persistent")
POSTGRES = f"postgres://postgres@127.0.0.1:5432/{NAME}"
MYSQL = f"mysql://root@127.0.0.1:3306/{NAME}"
# Debian's MariaDB socket: root may log in through it as root, where
# TCP wants a password.
MYSQL_SOCKET = "/run/mysqld/mysqld.sock"
WAIT = 60.0


def say(message: str) -> None:
    print(f"on_database: {message}", file=sys.stderr, flush=True)


def is_root() -> bool:
    return os.geteuid() == 0


def answers(engine: str, url: str) -> bool:
    """Whether the server ``url`` names lets its user in (without a
    database: the test database does not exist yet)."""
    parts = urlsplit(url)
    where = parts.netloc.rpartition("@")[2]
    host, _, port = where.partition(":")
    user = unquote(parts.username or "")
    try:
        if engine == "postgres":
            import psycopg

            psycopg.connect(
                host=unquote(host),
                port=int(port or 5432),
                user=user,
                password=unquote(parts.password or ""),
                dbname="postgres",
                connect_timeout=3,
            ).close()
        else:
            import pymysql

            place = unquote(host)
            where_to: dict[str, Any] = (
                {"unix_socket": place}
                if place.startswith("/")
                else {"host": place, "port": int(port or 3306)}
            )
            pymysql.connect(
                user=user,
                password=unquote(parts.password or ""),
                connect_timeout=3,
                **where_to,
            ).close()
    except Exception:  # noqa: BLE001 - any failure: it does not answer
        return False
    return True


def wait_for(check: Callable[[], bool], seconds: float = WAIT) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.25)
    return check()


def apt_install(package: str) -> None:
    say(f"installing {package} with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", package],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# PostgreSQL


def machines_postgres() -> str | None:
    """The machine's own server, started if it is a stopped Debian cluster."""
    if answers("postgres", POSTGRES):
        return POSTGRES
    clusters = sorted(glob.glob("/etc/postgresql/*/main"))
    if clusters and is_root() and shutil.which("pg_ctlcluster"):
        version = Path(clusters[-1]).parent.name
        say(f"no PostgreSQL answers: starting Debian's cluster {version}/main")
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "start"],
            check=False,
        )
        if wait_for(lambda: answers("postgres", POSTGRES)):
            return POSTGRES
        say("it still lets no postgres in on 127.0.0.1:5432 without a password")
    return None


def postgres_bin(name: str) -> str | None:
    found = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda path: int(Path(path).parent.parent.name.split(".")[0]),
    )
    return found[-1] if found else shutil.which(name)


@contextlib.contextmanager
def own_postgres() -> Iterator[str]:
    if postgres_bin("initdb") is None and is_root():
        apt_install("postgresql")
    initdb, pg_ctl = postgres_bin("initdb"), postgres_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise SystemExit("on_database: no PostgreSQL to start (initdb, pg_ctl)")
    folder = Path(tempfile.mkdtemp(prefix="whos_online_postgres_"))
    # PostgreSQL will not run as root: as root, its files are postgres'.
    as_user: list[str] = []
    if is_root():
        owner = pwd.getpwnam("postgres")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", free_port()
    try:
        subprocess.run(
            [*as_user, initdb, "-D", str(data), "-U", "postgres", "-A", "trust"]
            + ["-E", "UTF8", "--no-sync"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        # No fsync: the data is thrown away after.
        options = f"-h 127.0.0.1 -p {port} -k {folder} -F"
        subprocess.run(
            [*as_user, pg_ctl, "-D", str(data), "-l", str(folder / "log")]
            + ["-o", options, "-w", "start"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        say(f"started a PostgreSQL of its own on 127.0.0.1:{port} ({folder})")
        yield f"postgres://postgres@127.0.0.1:{port}/{NAME}"
    finally:
        subprocess.run(
            [*as_user, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(folder, ignore_errors=True)


# MySQL and MariaDB


def machines_mysql() -> str | None:
    """The machine's own server, started if it is an installed MariaDB."""
    through_socket = f"mysql://root@{quote(MYSQL_SOCKET, safe='')}/{NAME}"
    for url in (MYSQL, through_socket):
        if answers("mysql", url):
            return url
    daemon = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
    if not is_root() or not os.access(daemon, os.X_OK):
        return None
    say("no MySQL or MariaDB answers: starting the machine's MariaDB")
    subprocess.run(
        ["start-stop-daemon", "--start", "--oknodo", "--background"]
        + ["--exec", daemon],
        check=False,
    )
    for url in (MYSQL, through_socket):
        if wait_for(lambda url=url: answers("mysql", url), WAIT / 2):
            return url
    say("it lets no root in without a password, on 127.0.0.1:3306 or its socket")
    return None


def mysql_daemon() -> str | None:
    for name in ("mariadbd", "mysqld"):
        found = shutil.which(name) or f"/usr/sbin/{name}"
        if os.access(found, os.X_OK):
            return found
    return None


@contextlib.contextmanager
def own_mysql() -> Iterator[str]:
    if mysql_daemon() is None and is_root():
        apt_install("mariadb-server")
    daemon = mysql_daemon()
    if daemon is None:
        raise SystemExit("on_database: no MySQL or MariaDB to start")
    folder = Path(tempfile.mkdtemp(prefix="whos_online_mysql_"))
    data, sock, pid_file = folder / "data", folder / "mysqld.sock", folder / "pid"
    common = ["--no-defaults", f"--datadir={data}"]
    if is_root():
        common.append("--user=root")
    mariadb = "mariadbd" in daemon
    install = shutil.which("mariadb-install-db") if mariadb else None
    if install:
        setup = [
            install,
            *common,
            "--skip-test-db",
            "--auth-root-authentication-method=normal",
        ]
    else:
        setup = [daemon, *common, "--initialize-insecure"]
    subprocess.run(setup, check=True, stdout=subprocess.DEVNULL)
    # No grant tables: anyone may do anything, through the socket only.
    server = subprocess.Popen(
        [daemon, *common, f"--socket={sock}", f"--pid-file={pid_file}"]
        + ["--skip-networking", "--skip-grant-tables", f"--log-error={folder / 'log'}"]
        + ["--innodb-flush-log-at-trx-commit=0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"mysql://root@{quote(str(sock), safe='')}/{NAME}"
    try:
        if not wait_for(lambda: answers("mysql", url)):
            raise SystemExit(
                f"on_database: the server did not start ({folder / 'log'})"
            )
        say(f"started a {Path(daemon).name} of its own on {sock}")
        yield url
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def server(engine: str, own: bool) -> Iterator[str]:
    given = os.environ.get("WHOS_ONLINE_TEST_DATABASE")
    if given and not own:
        if not given.startswith("postgres" if engine == "postgres" else "m"):
            raise SystemExit(f"on_database: {given} is no {engine} server")
        yield given
        return
    machines = (
        None
        if own
        else (machines_postgres if engine == "postgres" else machines_mysql)()
    )
    if machines is not None:
        yield machines
        return
    with (own_postgres if engine == "postgres" else own_mysql)() as url:
        yield url


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("engine", choices=["postgres", "mysql"])
    parser.add_argument("--own-server", action="store_true")
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("no command to run (after --)")
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    failed = 0
    with server(args.engine, args.own_server) as url:
        for lifetime in LIFETIMES:
            say(f"{url}, CONN_MAX_AGE {lifetime}: {shlex.join(command)}")
            env = {
                **os.environ,
                "WHOS_ONLINE_TEST_DATABASE": url,
                "WHOS_ONLINE_TEST_CONN_MAX_AGE": lifetime,
            }
            started = time.monotonic()
            code = subprocess.run(command, env=env, check=False).returncode
            took = time.monotonic() - started
            say(f"CONN_MAX_AGE {lifetime}: exit {code} in {took:.0f} s")
            failed = failed or code
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
