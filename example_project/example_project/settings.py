"""Settings for the django-whos-online demo. Not for production: DEBUG is on
and the secret key is public.

Presence data goes to the Redis server named by the ``REDIS_URL`` environment
variable, e.g. ``REDIS_URL=redis://127.0.0.1:6379/0 make demo``. Without it
the demo runs on an embedded in-process Redis (fakeredis), so it needs no
server at all, but who is online is forgotten when the server stops.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent

# Serve the whos_online of this checkout, even where it is not pip-installed.
# (Index 1: after the directory of manage.py, before site-packages.)
if str(BASE_DIR.parent) not in sys.path:
    sys.path.insert(1, str(BASE_DIR.parent))

SECRET_KEY = "django-insecure-whos-online-demo-only-never-use-this-key"
DEBUG = True
ALLOWED_HOSTS = ["localhost", "127.0.0.1"]

INSTALLED_APPS = [
    # Listed before staticfiles so that the demo's runserver (which says at
    # startup when Redis is only embedded) takes precedence over that of
    # staticfiles, which it extends.
    "demo",
    # django.contrib.admin, whose site shows on every change form who else
    # has its object open, and who of them is editing it (log in as admin
    # and as editor in two browsers).
    "demo.apps.DemoAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "whos_online",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The widget and the staff page in the browser's language (Accept-Language).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After AuthenticationMiddleware, so it can tell users from guests.
    "whos_online.middleware.WhosOnlineMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "example_project.urls"
WSGI_APPLICATION = "example_project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "demo.context_processors.refresh",
                "demo.context_processors.theme",
            ],
        },
    }
]

# DEMO_DB_PATH puts the database elsewhere (the browser test uses a fresh one).
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("DEMO_DB_PATH") or BASE_DIR / "db.sqlite3",
    }
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en-us"
# The languages whos_online ships translations for; the demo's own pages are
# in English.
LANGUAGES = [
    ("en", "English"),
    ("de", "Deutsch"),
    ("es", "Español"),
    ("fr", "Français"),
    ("pt-br", "Português (Brasil)"),
    ("ru", "Русский"),
    # Right to left: the admin in Hebrew (the app's words in English until a
    # Hebrew catalog ships), to see that its notices read right to left.
    ("he", "עברית"),
]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"

LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Who's online keeps its data in the Redis behind a django-redis (or Django's
# own RedisCache) alias of CACHES. It gets an alias of its own, "presence":
# cache.clear() on the page cache then cannot wipe who is online. Short
# timeouts keep a slow Redis from holding pages (check whos_online.W003).
REDIS_URL = os.environ.get("REDIS_URL", "")

_presence: dict[str, Any] = {
    "BACKEND": "django_redis.cache.RedisCache",
    "OPTIONS": {"SOCKET_TIMEOUT": 0.25, "SOCKET_CONNECT_TIMEOUT": 0.25},
}
if REDIS_URL:
    _presence["LOCATION"] = REDIS_URL
else:
    from fakeredis import FakeConnection

    # fakeredis keeps one in-process server per host and port; nothing is
    # sent to this address, and no Redis needs to listen there.
    _presence["LOCATION"] = "redis://127.0.0.1:6379/0"
    _presence["OPTIONS"]["CONNECTION_POOL_KWARGS"] = {
        "connection_class": FakeConnection
    }
CACHES = {
    # The page cache of the news page (cache_page).
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "presence": _presence,
}
WHOS_ONLINE_CACHE_ALIAS = "presence"

# Printed once when the development server starts (see the demo app's
# runserver command); empty when a real Redis is used.
EMBEDDED_REDIS_NOTICE = (
    ""
    if REDIS_URL
    else "No REDIS_URL set: using an embedded in-process Redis (fakeredis); "
    "presence is lost when the server stops. "
    "Set REDIS_URL=redis://127.0.0.1:6379/0 to use a real server."
)

# Seconds between the widgets' refreshes in place; the browser test shortens it.
DEMO_REFRESH_SECONDS = int(os.environ.get("DEMO_REFRESH_SECONDS", "15"))

# carol is counted as online but listed, and her status shown, to staff only
# (log in as admin to see her marked hidden). See demo/presence.py.
WHOS_ONLINE_IS_HIDDEN = "demo.presence.is_hidden"

# Links to a member's page (members/<username>/) get the member's online
# badge, on every page, from {% whos_online_decorate %} in the base template.
WHOS_ONLINE_DECORATE = {"profiles": {"member": "username"}}

# Each change form asks who else has it open every 10 seconds (the admin's
# site shows it: demo.apps.DemoAdminConfig); the browser test shortens it.
WHOS_ONLINE_ADMIN_EDITING_SECONDS = int(os.environ.get("DEMO_EDITING_SECONDS", "10"))

# Every other setting of the app is at its default: a visitor counts as
# online for 15 minutes and as away after 5, the heartbeat pings every minute.
# docs/settings.md lists them all.
