from __future__ import annotations

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class DemoConfig(AppConfig):
    name = "demo"
    verbose_name = "Who's online demo"


class DemoAdminConfig(admin_apps.AdminConfig):
    """Django's admin, whose default site shows on every change form who
    else has its object open (docs/admin-editing.md): listed in
    ``INSTALLED_APPS`` in place of ``django.contrib.admin``."""

    default = False  # not the app config of "demo"
    default_site = "whos_online.admin_editing.EditingAdminSite"
