"""Settings for the in-process benchmarks, and their URLconf.

run.py sets ``BENCH_REDIS_URL`` to its private redis-server and ``BENCH_DB``
to a SQLite file of its own, or ``BENCH_POSTGRES_DB`` to a PostgreSQL
database of its own. Each case sets its own ``MIDDLEWARE``. Of the two
views, ``/`` touches neither the session nor the user, like a cached page,
so whatever a middleware loads is its own cost; ``/me/`` reads
``request.user``, as every page of the example project does.
"""

from __future__ import annotations

import os

from django.http import HttpRequest, HttpResponse
from django.urls import path

SECRET_KEY = "whos-online-benchmarks"
ALLOWED_HOSTS = ["*"]
USE_TZ = True
ROOT_URLCONF = __name__
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
INSTALLED_APPS = ["django.contrib.auth", "django.contrib.contenttypes"]
INSTALLED_APPS += ["django.contrib.sessions", "django.contrib.messages", "whos_online"]
INSTALLED_APPS += ["online_users"]  # the database-backed alternative
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("BENCH_DB", ":memory:"),
        # The WSGI handler closes the connection after each request unless
        # it may persist, as sites with a database server let it.
        "CONN_MAX_AGE": None,
    }
}
if os.environ.get("BENCH_POSTGRES_DB"):
    from benchmarks.servers import postgres

    DATABASES["default"] |= {key.upper(): value for key, value in postgres().items()}
    DATABASES["default"]["NAME"] = os.environ["BENCH_POSTGRES_DB"]
    DATABASES["default"]["ENGINE"] = "django.db.backends.postgresql"
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
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
QUIET = {"django.request": {"level": "CRITICAL"}}
LOGGING = {"version": 1, "disable_existing_loggers": False, "loggers": QUIET}


def plain(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b"ok")


def me(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b"user" if request.user.is_authenticated else b"guest")


urlpatterns = [path("", plain), path("me/", me)]
