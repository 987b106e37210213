"""The benchmark project's settings: ``startproject``'s middleware, and
``whos_online`` set up as its README says (views in project.py).

``BENCH_REDIS_URL`` names the private redis-server run.py starts and
``BENCH_DB`` a SQLite file of the run's own. ``presence`` reads replies with
redis-py's own parser, ``presence-hiredis`` (when hiredis is installed) with
hiredis'; a case picks one with ``WHOS_ONLINE_CACHE_ALIAS``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SECRET_KEY = "whos-online-benchmarks"
ALLOWED_HOSTS = ["*"]
USE_TZ = True
ROOT_URLCONF = "benchmarks.project"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
INSTALLED_APPS = [
    "django.contrib.admin",  # for an admin change form (together.py)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whos_online",
]
try:  # the peer measured beside us (requirements/bench.txt)
    import online_users  # type: ignore[import-untyped]  # noqa: F401

    INSTALLED_APPS.append("online_users")
    PEER_ERROR = ""
except ImportError as error:
    PEER_ERROR = f"cannot be imported: {error}"
AUTH = "django.contrib.auth.middleware.AuthenticationMiddleware"
STARTPROJECT = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    AUTH,
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
MIDDLEWARE = STARTPROJECT  # each stack builds its own handler (bench.py)
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("BENCH_DB", ":memory:"),
        "CONN_MAX_AGE": None,  # as a site with a database server keeps it
    }
}
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:1/0")
PARSERS = {"presence": "redis._parsers.resp2._RESP2Parser"}
try:
    import hiredis  # noqa: F401

    PARSERS["presence-hiredis"] = "redis._parsers.hiredis._HiredisParser"
except ImportError:
    pass
LOCMEM = "django.core.cache.backends.locmem.LocMemCache"
CACHES: dict[str, Any] = {"default": {"BACKEND": LOCMEM}}
for alias, parser in PARSERS.items():
    CACHES[alias] = {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "OPTIONS": {"PARSER_CLASS": parser},
    }
WHOS_ONLINE_CACHE_ALIAS = "presence"
WHOS_ONLINE_GUARD_COOKIE_NAME = "whos_online"
# Sets of 100,000 stay below the cap but for the case that sets it to them.
WHOS_ONLINE_MAX_MEMBERS = 1_000_000
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [Path(__file__).resolve().parent / "templates"],  # bench/: /home/
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
STATIC_URL = "static/"  # as startproject's
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"django.request": {"level": "CRITICAL"}},
}
WHOS_ONLINE_GUARD_SECONDS = 300  # the defaults, which the capacity line uses
WHOS_ONLINE_HEARTBEAT_SECONDS = 60
