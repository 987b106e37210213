"""The test settings with django-spirit installed as its project template
does, and the app set up for it as docs/third-party.md says: what
tests/test_spirit.py runs with (``make test-spirit``)."""

from __future__ import annotations

from typing import Any

from tests.settings import *  # noqa: F403
from tests.settings import CACHES, INSTALLED_APPS, MIDDLEWARE, TEMPLATES
from tests.spirit_site import documented_settings

INSTALLED_APPS = [
    *INSTALLED_APPS,
    "django.contrib.humanize",
    "django.contrib.staticfiles",
    "spirit.core",
    "spirit.admin",
    "spirit.search",
    "spirit.user",
    "spirit.user.admin",
    "spirit.user.auth",
    "spirit.category",
    "spirit.category.admin",
    "spirit.topic",
    "spirit.topic.admin",
    "spirit.topic.favorite",
    "spirit.topic.moderate",
    "spirit.topic.notification",
    "spirit.topic.private",
    "spirit.topic.unread",
    "spirit.comment",
    "spirit.comment.bookmark",
    "spirit.comment.flag",
    "spirit.comment.flag.admin",
    "spirit.comment.history",
    "spirit.comment.like",
    "spirit.comment.poll",
    "djconfig",
    "haystack",
    "huey.contrib.djhuey",
    "tests.spirit_site.apps.SpiritSiteConfig",
]
MIDDLEWARE = [
    *MIDDLEWARE,
    "spirit.user.middleware.TimezoneMiddleware",
    "spirit.user.middleware.LastIPMiddleware",
    "spirit.user.middleware.LastSeenMiddleware",
    "spirit.user.middleware.ActiveUserMiddleware",
    "spirit.core.middleware.PrivateForumMiddleware",
    "djconfig.middleware.DjConfigMiddleware",
]
_DJANGO_TEMPLATES: dict[str, Any] = TEMPLATES[0]
TEMPLATES = [
    {
        **_DJANGO_TEMPLATES,
        "OPTIONS": {
            "context_processors": [
                *_DJANGO_TEMPLATES["OPTIONS"]["context_processors"],
                "django.template.context_processors.i18n",
                "djconfig.context_processors.config",
            ]
        },
    },
    *TEMPLATES[1:],
]
CACHES = {
    **CACHES,
    "st_rate_limit": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "TIMEOUT": None,
    },
}
HAYSTACK_CONNECTIONS = {
    "default": {"ENGINE": "haystack.backends.simple_backend.SimpleEngine"}
}
ROOT_URLCONF = "tests.urls_spirit"
STATIC_URL = "/static/"
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ST_SITE_URL = "http://testserver/"
# Spirit e-mails replies from a task; huey's immediate mode runs it at once.
ST_TASK_MANAGER = "huey"
HUEY = {"name": "spirit", "immediate": True}

globals().update(documented_settings())
