"""A site that put the middleware in MIDDLEWARE but forgot the app."""

from __future__ import annotations

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "whos_online"]
