"""The app in the Django admin: the staff page, as "Who's online › Online
now". Who else is editing each change form is
:mod:`whos_online.admin_editing`'s (its names are here too, for imports).

:class:`~whos_online.models.OnlineNow` has no table; its admin has one page,
the changelist, which shows :func:`whos_online.staff.staff_overview` instead
of a list of objects. Any active staff user may see it, and nobody may add,
change or delete anything. Users link to their admin pages for viewers who
may see those.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils.text import capfirst

from whos_online.admin_editing import (
    ConcurrentEditingMixin,
    ConcurrentEditingSiteMixin,
    EditingAdminSite,
)
from whos_online.gate import is_active_staff
from whos_online.models import OnlineNow
from whos_online.page import viewer_of
from whos_online.staff import staff_overview

__all__ = [
    "ConcurrentEditingMixin",
    "ConcurrentEditingSiteMixin",
    "EditingAdminSite",
    "OnlineNowAdmin",
]

if TYPE_CHECKING:
    ModelAdmin = admin.ModelAdmin[OnlineNow]
else:
    ModelAdmin = admin.ModelAdmin


def is_staff(request: HttpRequest) -> bool:
    return is_active_staff(viewer_of(request))


@admin.register(OnlineNow)
class OnlineNowAdmin(ModelAdmin):
    # A page of its own, no change form: a site that gives every ModelAdmin
    # who else is editing leaves it out.
    whos_online_editing = False

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_staff(request)

    def has_view_permission(
        self, request: HttpRequest, obj: OnlineNow | None = None
    ) -> bool:
        return is_staff(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: OnlineNow | None = None
    ) -> bool:
        return False

    def has_delete_permission(
        self, request: HttpRequest, obj: OnlineNow | None = None
    ) -> bool:
        return False

    def get_urls(self) -> list[URLPattern]:
        # Only the changelist: the object pages would query a missing table.
        opts = self.opts
        return [
            path(
                "",
                self.admin_site.admin_view(self.changelist_view),
                name=f"{opts.app_label}_{opts.model_name}_changelist",
            )
        ]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> TemplateResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        request.current_app = self.admin_site.name
        context = {
            **self.admin_site.each_context(request),
            "title": capfirst(self.opts.verbose_name_plural),
            "opts": self.opts,
            "overview": staff_overview(admin_site=self._site_to_link(request)),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "whos_online/staff.html", context)

    def _site_to_link(self, request: HttpRequest) -> admin.AdminSite | None:
        """This admin site if the viewer may open users' pages in it."""
        site, user = self.admin_site, get_user_model()
        if not site.is_registered(user) or not site.get_model_admin(
            user
        ).has_view_or_change_permission(request):
            return None
        return self.admin_site
