"""The example project as `make bench-load` serves it under gunicorn: its own
settings, as a site would run them (``DEBUG`` off), with one of the cases
``LOAD_CASE`` names:

- ``without``: the site without whos_online: not installed, no middleware,
  and its template tags render nothing (benchmarks/load_tags.py), so the
  pages are the same but for the widget (the floor);
- ``app``: the example project as it is, the middleware and the widget;
- ``peer``: django-online-users 0.3's middleware instead, without a widget
  (it has none), the tags rendering nothing as in ``without``;
- ``setup``: both apps installed, for the run's ``migrate``.

``REDIS_URL`` and ``DEMO_DB_PATH`` (read by the example's settings) name the
run's private redis-server and SQLite file.
"""

from __future__ import annotations

import os

from example_project.settings import *  # type: ignore[import-untyped]  # noqa: F403
from example_project.settings import INSTALLED_APPS, MIDDLEWARE, TEMPLATES

CASE = os.environ.get("LOAD_CASE", "app")
DEBUG = False
ROOT_URLCONF = "benchmarks.load_urls"
OURS = "whos_online.middleware.WhosOnlineMiddleware"
PEER = "online_users.middleware.OnlineNowMiddleware"
NULL_TAGS = {"whos_online": "benchmarks.load_tags"}

if CASE in ("without", "peer"):
    INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "whos_online"]
    MIDDLEWARE = [name for name in MIDDLEWARE if name != OURS]
    OPTIONS = TEMPLATES[0]["OPTIONS"] | {"libraries": NULL_TAGS}
    TEMPLATES = [TEMPLATES[0] | {"OPTIONS": OPTIONS}]
if CASE == "peer":
    at = MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware")
    MIDDLEWARE = [*MIDDLEWARE[: at + 1], PEER, *MIDDLEWARE[at + 1 :]]
if CASE in ("peer", "setup"):
    INSTALLED_APPS = [*INSTALLED_APPS, "online_users"]

# The load generator stands for the one reverse proxy in front of the site:
# it sends each visitor's own address in X-Forwarded-For.
WHOS_ONLINE_PROXY_COUNT = 1
# A page that fails says why in the gunicorn's log, which the run reads.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR"}},
}

# benchmarks/streams.py counts the full garbage collections of its workers.
if os.environ.get("BENCH_GC_LOG"):
    from benchmarks.gc_log import install

    install(os.environ["BENCH_GC_LOG"])
