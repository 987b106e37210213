"""The example project's own settings, served by gunicorn for the load test.

Everything comes from example_project/example_project/settings.py; only what
a load test must change is changed here:

- ``DEBUG = False``, as in production (DEBUG keeps every SQL query in memory);
- the database is a SQLite file of the run's own (``BENCH_DB``);
- ``BENCH_WHOS_ONLINE_MIDDLEWARE=0`` takes ``WhosOnlineMiddleware`` out of
  ``MIDDLEWARE`` and changes nothing else: the tag still renders on every
  page, so the two servers differ only by the middleware;
- logins use a fast password hasher, because the simulated clients log in
  before the clock starts and PBKDF2 would only slow the setup.

``REDIS_URL`` (read by the example settings) points at the run's private
redis-server.
"""

from __future__ import annotations

import os

from example_project.settings import *  # noqa: F403
from example_project.settings import MIDDLEWARE

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["BENCH_DB"],
    }
}
if os.environ.get("BENCH_WHOS_ONLINE_MIDDLEWARE", "1") == "0":
    MIDDLEWARE = [
        m for m in MIDDLEWARE if m != "whos_online.middleware.WhosOnlineMiddleware"
    ]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"django.request": {"level": "ERROR"}},
}
