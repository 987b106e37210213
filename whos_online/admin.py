"""The app in the Django admin: the staff page, as "Who's online › Online
now", and who else is editing each change form (:class:`ConcurrentEditingMixin`).

:class:`~whos_online.models.OnlineNow` has no table; its admin has one page,
the changelist, which shows :func:`whos_online.staff.staff_overview` instead
of a list of objects. Any active staff user may see it, and nobody may add,
change or delete anything. Users link to their admin pages for viewers who
may see those.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.admin.sites import all_sites
from django.contrib.admin.utils import quote, unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.template.loader import render_to_string, select_template
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.cache import add_never_cache_headers
from django.utils.safestring import mark_safe
from django.utils.text import capfirst

from whos_online import editing
from whos_online.conf import conf
from whos_online.editing import Others, Save
from whos_online.gate import is_active_staff
from whos_online.models import OnlineNow
from whos_online.staff import staff_overview

if TYPE_CHECKING:
    ModelAdmin = admin.ModelAdmin[OnlineNow]
    AnyModelAdmin = admin.ModelAdmin[Any]
else:
    ModelAdmin = AnyModelAdmin = admin.ModelAdmin


def is_staff(request: HttpRequest) -> bool:
    return is_active_staff(request.user)


@admin.register(OnlineNow)
class OnlineNowAdmin(ModelAdmin):
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
        user_admin = self.admin_site._registry.get(get_user_model())
        if user_admin is None or not user_admin.has_view_or_change_permission(request):
            return None
        return self.admin_site


OPENED = "whos_online_opened"
"""The form field of the history entry a change form was opened at."""
OVERWRITE = "whos_online_overwrite"
"""The form field a staff member ticks to save over someone else's save."""


class ConcurrentEditingMixin(AnyModelAdmin):
    """Who else is editing this: each change form shows the other staff who
    have the same object open, and which of them are editing it rather than
    viewing it, kept current while the form is open; a save over someone
    else's save since the form was opened is refused, with a warning, until
    the staff member ticks "Save over their changes".

    Put it first among a ModelAdmin's bases, or set
    ``WHOS_ONLINE_ADMIN_EDITING = True`` for every ModelAdmin of the site.
    """

    def get_urls(self) -> list[URLPattern]:
        opts = self.opts
        presence = path(
            "<path:object_id>/presence/",
            self.admin_site.admin_view(self.presence_view),
            name=f"{opts.app_label}_{opts.model_name}_presence",
        )
        return [presence, *super().get_urls()]

    def presence_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """What the change form's script asks every few seconds: POST
        ``editing=1`` while the form has unsaved changes, ``leaving=1`` as
        it closes, and ``opened``, the history entry it was opened at."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        pk = unquote(object_id)
        mark = request.POST.get("opened", "")
        obj = self.get_object(request, pk)
        if obj is None:
            if not self.has_view_or_change_permission(request):
                raise PermissionDenied
            save = editing.save_since(request.user, self.model, pk, mark)
            return self._presence(Others(available=True, save=save), 404)
        if not self.has_view_or_change_permission(request, obj):
            raise PermissionDenied
        if request.POST.get("leaving") == "1":
            editing.leave(request, obj)
            return self._never_cached(HttpResponse(status=204))
        editing.stay(request, obj, editing=request.POST.get("editing") == "1")
        others = editing.others_here(request.user, obj)
        save = editing.save_since(request.user, self.model, str(obj.pk), mark)
        return self._presence(replace(others, save=save))

    def get_form(
        self,
        request: HttpRequest,
        obj: Any | None = None,
        change: bool = False,
        **kwargs: Any,
    ) -> Any:
        # ``change`` is passed on by keyword, as Django passes it: some
        # ModelAdmins (UserAdmin) take it only among their keyword arguments.
        form = super().get_form(request, obj, change=change, **kwargs)
        if not change or obj is None or request.method != "POST":
            return form
        if request.POST.get(OVERWRITE) == "1":
            return form
        mark = request.POST.get(OPENED, "")
        save = editing.save_since(request.user, self.model, str(obj.pk), mark)
        return form if save is None else self._refusing(form, save)

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Any | None = None,
    ) -> HttpResponse:
        response = super().render_change_form(
            request, context, add, change, form_url, obj
        )
        if add or obj is None or not isinstance(response, TemplateResponse):
            return response
        editing.enter(request, obj)
        form = context["adminform"].form
        sent = request.POST.get(OPENED, "") if request.method == "POST" else ""
        opened = int(sent) if sent.isdigit() else editing.history_mark()
        refused: Save | None = getattr(form, "whos_online_save", None)
        response.context_data = {
            **(response.context_data or {}),
            "whos_online_parent": select_template(_names(response.template_name)),
            "whos_online_editing": {
                "others": editing.others_here(request.user, obj),
                "model": self.opts.verbose_name,
                "opened": opened,
                "refused": refused,
                "script": {
                    "url": self._presence_url(obj),
                    "seconds": conf.ADMIN_EDITING_SECONDS,
                    # The saves the page does not tell of already.
                    "after": opened if refused is None else refused.entry,
                },
            },
        }
        response.template_name = "whos_online/admin/change_form.html"
        return response

    def _presence_url(self, obj: Any) -> str:
        opts = self.opts
        return reverse(
            f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_presence",
            args=[quote(obj.pk)],
        )

    def _presence(self, others: Others, status: int = 200) -> HttpResponse:
        context = {"others": others, "model": self.opts.verbose_name}
        html = render_to_string("whos_online/admin/editing_notice.html", context)
        answer = {
            "available": others.available,
            "html": html,
            "editing": others.editing,
            "saved": others.save is not None,
        }
        return self._never_cached(JsonResponse(answer, status=status))

    @staticmethod
    def _never_cached(response: HttpResponse) -> HttpResponse:
        add_never_cache_headers(response)
        return response

    def _refusing(self, form: Any, save: Save) -> Any:
        """``form``, refusing to save with the warning of ``save``."""
        context = {"save": save, "model": self.opts.verbose_name}
        # The reason, then the box to tick to save over it, in the form's
        # errors: an error Django shows above the form, as for any other.
        warning = render_to_string("whos_online/admin/refusal.html", context)

        class Refusing(form):  # type: ignore[misc]
            whos_online_save = save

            def clean(self) -> Any:
                super().clean()
                raise ValidationError(mark_safe(warning), code="saved-since")

        Refusing.__name__ = Refusing.__qualname__ = form.__name__
        return Refusing


def _names(template: Any) -> list[str]:
    return [template] if isinstance(template, str) else list(template)


def add_editing_presence(sites: Iterable[admin.AdminSite]) -> None:
    """With ``WHOS_ONLINE_ADMIN_EDITING``, give every ModelAdmin of
    ``sites`` :class:`ConcurrentEditingMixin`, as if each had opted in."""
    if not conf.ADMIN_EDITING:
        return
    for site in sites:
        for model_admin in site._registry.values():
            if not isinstance(model_admin, (ConcurrentEditingMixin, OnlineNowAdmin)):
                model_admin.__class__ = _with_editing(type(model_admin))


def add_editing_presence_everywhere() -> None:
    """:func:`add_editing_presence` for every admin site, once the admin
    modules of every app are imported (asked by the app's ``ready()``)."""
    admin.autodiscover()
    add_editing_presence(all_sites)


@functools.cache
def _with_editing(cls: type[Any]) -> type[Any]:
    namespace = {"__module__": cls.__module__}
    return type(cls.__name__, (ConcurrentEditingMixin, cls), namespace)
