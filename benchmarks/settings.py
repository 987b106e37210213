"""Settings for the in-process benchmarks (requests, the tag, prune, memory).

benchmarks/run.py sets ``BENCH_REDIS_URL`` to its private redis-server and
``BENCH_DB`` to a SQLite file of its own, or ``BENCH_POSTGRES_DB`` to a
PostgreSQL database of its own. Sessions are Django's default, database
sessions. The middleware chains compared are set per case in
benchmarks/per_request.py.
"""

from __future__ import annotations

import os

SECRET_KEY = "whos-online-benchmarks"
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
ROOT_URLCONF = "benchmarks.urls"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whos_online",
    "online_users",  # the database-backed alternative, wired as its README says
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("BENCH_DB", ":memory:"),
        # Requests go through Django's WSGI handler, which closes the
        # connection after each request unless it may persist, as sites with
        # a database server let it (else PostgreSQL's connect, not the
        # middleware, would dominate).
        "CONN_MAX_AGE": None,
    }
}
if os.environ.get("BENCH_POSTGRES_DB"):
    from benchmarks.servers import postgres

    DATABASES["default"].update(
        ENGINE="django.db.backends.postgresql",
        NAME=os.environ["BENCH_POSTGRES_DB"],
        **{key.upper(): value for key, value in postgres().items()},
    )
CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:1/0"),
    }
}
WHOS_ONLINE_MAX_MEMBERS = 2_000_000  # sets of a million are filled
TEMPLATES = [
    {"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}
]
# Users are created by the thousand; no login is timed.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"django.request": {"level": "CRITICAL"}},
}
