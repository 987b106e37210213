"""The test settings, with TEMPLATES exactly as docs/jinja2.md shows them
for django-jinja, and django-jinja installed as its documentation asks:
what `python -m django check` boots in tests/test_django_jinja.py."""

from __future__ import annotations

from tests.django_jinja_site import documented_templates
from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "django_jinja"]
TEMPLATES = documented_templates()
STATIC_URL = "/static/"
