"""The example project's own settings, served by gunicorn for the load test.

Everything comes from example_project/example_project/settings.py but what a
load test must change: ``DEBUG = False``, as in production (DEBUG keeps every
SQL query in memory); a SQLite file of the run's own (``BENCH_DB``);
``BENCH_WHOS_ONLINE_MIDDLEWARE=0`` takes ``WhosOnlineMiddleware`` out of
``MIDDLEWARE`` and changes nothing else (the tag still renders on every
page); and a fast password hasher, since the clients log in before the clock
starts. ``REDIS_URL`` points at the run's private redis-server.
"""

from __future__ import annotations

import os

from example_project.settings import *  # type: ignore[import-untyped]  # noqa: F403
from example_project.settings import MIDDLEWARE

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["BENCH_DB"]}
}
if os.environ.get("BENCH_WHOS_ONLINE_MIDDLEWARE", "1") == "0":
    MIDDLEWARE = [m for m in MIDDLEWARE if not m.endswith(".WhosOnlineMiddleware")]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"django.request": {"level": "ERROR"}},
}
