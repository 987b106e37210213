from __future__ import annotations

from django.contrib.admin.apps import AdminConfig


class EditingAdminConfig(AdminConfig):
    """Django's admin with the site docs/admin-editing.md names."""

    default_site = "whos_online.admin_editing.EditingAdminSite"


class UnfoldEditingAdminConfig(AdminConfig):
    """Under django-unfold, its site with the mixin, as docs/admin-editing.md
    says (with ``unfold.apps.BasicAppConfig``, which leaves ``admin.site``
    to this)."""

    default_site = "tests.themed_admin.sites.UnfoldEditingSite"
