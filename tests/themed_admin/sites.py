from __future__ import annotations

from unfold.sites import UnfoldAdminSite  # type: ignore[import-untyped, unused-ignore]

from whos_online.admin_editing import ConcurrentEditingSiteMixin


class UnfoldEditingSite(ConcurrentEditingSiteMixin, UnfoldAdminSite):  # type: ignore[misc, unused-ignore]
    """Unfold's admin site, showing who else is editing."""


def unfold_user_admin() -> None:
    """The users' admin as Unfold's documentation has it, with its forms."""
    from django.contrib import admin
    from django.contrib.auth.admin import UserAdmin
    from django.contrib.auth.models import User
    from unfold.admin import ModelAdmin  # type: ignore[import-untyped, unused-ignore]
    from unfold.forms import (  # type: ignore[import-untyped, unused-ignore]
        AdminPasswordChangeForm,
        UserChangeForm,
        UserCreationForm,
    )

    class UnfoldUserAdmin(UserAdmin, ModelAdmin):  # type: ignore[misc, type-arg, unused-ignore]
        form = UserChangeForm
        add_form = UserCreationForm
        change_password_form = AdminPasswordChangeForm

    admin.site.unregister(User)
    admin.site.register(User, UnfoldUserAdmin)
