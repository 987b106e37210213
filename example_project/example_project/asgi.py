"""ASGI config for the example project: ``application`` for an ASGI server
(``uvicorn example_project.asgi:application``), under which the widgets get
their changes pushed by the live stream (``whos-online/stream/``) instead of
polling for them. With ``DEBUG`` on it serves the static files too, as
``runserver`` does, so the demo needs nothing in front of it."""

from __future__ import annotations

import os

from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

application = get_asgi_application()
if settings.DEBUG:
    application = ASGIStaticFilesHandler(application)
