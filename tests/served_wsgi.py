"""The example project's WSGI application with its static files served, as
``runserver`` and its ASGI application (with ``DEBUG`` on) serve them: what
tests/test_browser_live.py runs under gunicorn, so its pages look and run
as under the other two servers."""

from __future__ import annotations

from importlib import import_module

from django.contrib.staticfiles.handlers import StaticFilesHandler

application = StaticFilesHandler(import_module("example_project.wsgi").application)
