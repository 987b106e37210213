"""An admin site whose groups use ``ConcurrentEditingMixin``, as a site that
opts in per ModelAdmin does, and one that gives it to every ModelAdmin
(tests/test_admin_editing.py); the default admin's groups have neither."""

from __future__ import annotations

from django.contrib.admin import AdminSite
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User

from whos_online.admin import ConcurrentEditingMixin, EditingAdminSite

site = AdminSite(name="editing_admin")


class EditedGroupAdmin(ConcurrentEditingMixin, GroupAdmin):
    pass


site.register(Group, EditedGroupAdmin)


class EditedUserAdmin(ConcurrentEditingMixin, UserAdmin):  # type: ignore[type-arg]
    """A ModelAdmin whose ``get_form`` takes no ``change`` argument of its own."""


site.register(User, EditedUserAdmin)


# Django's own ModelAdmin, as a third-party app would register it.
every = EditingAdminSite(name="every_admin")
every.register(Group, GroupAdmin)
