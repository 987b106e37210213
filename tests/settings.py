"""Settings for the test suite.

Presence data goes to an in-process fakeredis unless ``REDIS_URL`` names a
real server (use a database number of its own, e.g. redis://127.0.0.1:6379/13).
Each test writes under a key prefix of its own and deletes its keys after.

The database is SQLite in memory unless ``WHOS_ONLINE_TEST_DATABASE`` names
a server: ``postgres://user@host:port/name`` or ``mysql://user@host:port/name``
(MariaDB too; the host may be a socket's path, percent-encoded).
pytest-django creates, and drops after, ``test_<name>`` on it, and touches
no other database. ``WHOS_ONLINE_TEST_CONN_MAX_AGE`` is the
connections' ``CONN_MAX_AGE`` in seconds, or ``persistent`` for ``None``
with ``CONN_HEALTH_CHECKS`` (``make test-postgres`` runs both).
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from fakeredis import FakeRedisConnection

REDIS_URL = os.environ.get("REDIS_URL", "")

SECRET_KEY = "whos-online-tests"
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
ROOT_URLCONF = "tests.urls"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.messages",
    "django.contrib.sessions",
    "whos_online",
]

MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "whos_online.middleware.WhosOnlineMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ENGINES = {
    "postgres": "django.db.backends.postgresql",
    "postgresql": "django.db.backends.postgresql",
    "mysql": "django.db.backends.mysql",
    "mariadb": "django.db.backends.mysql",
}


def database(url: str, max_age: str) -> dict[str, Any]:
    """The ``default`` database: SQLite in memory for no URL, else the
    server ``url`` names, with connections kept ``max_age`` seconds
    (``persistent``: for good, checked before each request reuses them)."""
    if not url:
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}
    parts = urlsplit(url)
    if parts.scheme not in ENGINES:
        raise ValueError(f"WHOS_ONLINE_TEST_DATABASE: no engine for {url!r}")
    # The host may be a socket, its path percent-encoded (%2Frun%2Fmysqld%2F
    # mysqld.sock), which urlsplit's hostname would lowercase.
    host, _, port = parts.netloc.rpartition("@")[2].partition(":")
    found: dict[str, Any] = {
        "ENGINE": ENGINES[parts.scheme],
        "NAME": unquote(parts.path.lstrip("/")) or "whos_online",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": unquote(host),
        "PORT": port,
    }
    if max_age == "persistent":
        found.update(CONN_MAX_AGE=None, CONN_HEALTH_CHECKS=True)
    else:
        found["CONN_MAX_AGE"] = int(max_age or 0)
    if found["ENGINE"] == "django.db.backends.mysql":
        # utf8mb4, so names in any script are kept as written.
        found["OPTIONS"] = {"charset": "utf8mb4"}
        found["TEST"] = {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"}
    return found


DATABASES = {
    "default": database(
        os.environ.get("WHOS_ONLINE_TEST_DATABASE", ""),
        os.environ.get("WHOS_ONLINE_TEST_CONN_MAX_AGE", ""),
    )
}

if DATABASES["default"]["ENGINE"] == "django.db.backends.mysql":
    try:
        import_module("MySQLdb")  # mysqlclient, where it is installed
    except ImportError:
        # PyMySQL (requirements/mysql.txt) in its place: pure Python, so it
        # installs without the client library's headers.
        import_module("pymysql").install_as_MySQLdb()

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    },
    # A site that renders its own pages with Jinja2 (tests/test_jinja2.py);
    # the app's templates are Django's, found by the backend above.
    {
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [Path(__file__).resolve().parent / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"extensions": ["whos_online.jinja2.WhosOnlineExtension"]},
    },
]

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _fake_or_real(options: dict[str, Any]) -> dict[str, Any]:
    if REDIS_URL:
        return {}
    return options


# Without REDIS_URL, FakeRedisConnection keys its in-process server by this
# host and port; nothing is sent to the address.
_LOCATION = REDIS_URL or "redis://127.0.0.1:6379/0"

CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": _LOCATION,
        "OPTIONS": {
            "SOCKET_TIMEOUT": 0.25,
            "SOCKET_CONNECT_TIMEOUT": 0.25,
            **_fake_or_real(
                {"CONNECTION_POOL_KWARGS": {"connection_class": FakeRedisConnection}}
            ),
        },
    },
    "builtin": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": _LOCATION,
        "OPTIONS": {
            "socket_timeout": 0.25,
            "socket_connect_timeout": 0.25,
            **_fake_or_real({"connection_class": FakeRedisConnection}),
        },
    },
    # Nothing listens on port 1: connections are refused at once.
    "unreachable": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {"SOCKET_TIMEOUT": 0.25, "SOCKET_CONNECT_TIMEOUT": 0.25},
    },
    "locmem": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
}

# Each test sees every change at once; the tests of snapshots shared across
# pages set their own age.
WHOS_ONLINE_SNAPSHOT_MAX_AGE = 0
