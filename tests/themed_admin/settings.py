"""Settings of the themed admin site (see the package's docstring)."""

from __future__ import annotations

import os
from typing import Any

from fakeredis import FakeConnection

# Each theme's apps, listed before the admin, whose templates they replace,
# and the admin's app config. Unfold's default app config puts a site of its
# own in place of ``admin.site`` as it starts; its BasicAppConfig leaves
# that to the admin's, whose site has the mixin (docs/admin-editing.md).
THEMES = {
    "stock": ["tests.themed_admin.apps.EditingAdminConfig"],
    "unfold": [
        "unfold.apps.BasicAppConfig",
        "tests.themed_admin.apps.UnfoldEditingAdminConfig",
    ],
    "grappelli": ["grappelli", "tests.themed_admin.apps.EditingAdminConfig"],
    "jazzmin": ["jazzmin", "tests.themed_admin.apps.EditingAdminConfig"],
}
THEME = os.environ.get("THEMED_ADMIN", "stock")

SECRET_KEY = "themed-admin-test-site-only"
DEBUG = True
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    *THEMES[THEME],
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "whos_online",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "whos_online.middleware.WhosOnlineMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "tests.themed_admin.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("THEMED_ADMIN_DB", ":memory:"),
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
STATIC_URL = "static/"
# An embedded fakeredis, in the server's own process: nothing is sent to
# this address.
_presence: dict[str, Any] = {
    "BACKEND": "django_redis.cache.RedisCache",
    "LOCATION": "redis://127.0.0.1:6379/0",
    "OPTIONS": {
        "SOCKET_TIMEOUT": 0.25,
        "SOCKET_CONNECT_TIMEOUT": 0.25,
        "CONNECTION_POOL_KWARGS": {"connection_class": FakeConnection},
    },
}
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "presence": _presence,
}
WHOS_ONLINE_CACHE_ALIAS = "presence"
WHOS_ONLINE_ADMIN_EDITING_SECONDS = 2
# Jazzmin's dark theme follows the browser's preference, as the others do.
JAZZMIN_UI_TWEAKS = {"default_theme_mode": "auto"}
# All the form's fields on one page, as in the other themes (not in tabs).
JAZZMIN_SETTINGS = {"changeform_format": "single"}
