"""Settings for the in-process benchmarks (middleware, tag, prune, memory).

benchmarks/run.py sets ``BENCH_REDIS_URL`` to its private redis-server and
``BENCH_DB`` to a SQLite file of its own. Sessions are Django's default,
database sessions. The middleware chains compared are built from
``MIDDLEWARE`` lists in benchmarks/middleware.py; the list here is only the
default.
"""

from __future__ import annotations

import os

SECRET_KEY = "whos-online-benchmarks"
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
ROOT_URLCONF = "benchmarks.bench_urls"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "whos_online",
    # The database-backed alternative, wired as its README says.
    "online_users",
]

MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "whos_online.middleware.WhosOnlineMiddleware",
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("BENCH_DB", ":memory:"),
    }
}
if os.environ.get("BENCH_POSTGRES_DB"):  # benchmarks/postgres.py
    from benchmarks.postgres import server

    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": os.environ["BENCH_POSTGRES_DB"],
            "HOST": server()["host"],
            "PORT": server()["port"],
            "USER": server()["user"],
            "PASSWORD": server()["password"],
        }
    }
SESSION_ENGINE = "django.contrib.sessions.backends.db"

CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:1/0"),
    }
}

# Sets of up to a million members are filled in the scaling benchmarks.
WHOS_ONLINE_MAX_MEMBERS = 2_000_000

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
    }
]

# Users are created by the thousand; no login is timed.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"django.request": {"level": "CRITICAL"}},
}
