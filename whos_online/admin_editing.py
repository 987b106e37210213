"""Who else is editing, on the admin's change forms: the ModelAdmin mixin
(:class:`ConcurrentEditingMixin`) and, for a whole admin site, a site that
gives it to every ModelAdmin registered with it
(:class:`ConcurrentEditingSiteMixin`, :class:`EditingAdminSite`).

Nothing here registers anything or touches ``admin.site``, so a project's
admin app config may name :class:`EditingAdminSite` as its ``default_site``.
The data is :mod:`whos_online.editing`'s; this module is its admin views.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.handlers.asgi import ASGIRequest
from django.db.models.base import ModelBase
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseBase,
    HttpResponseNotAllowed,
    HttpResponseNotFound,
    JsonResponse,
)
from django.template.loader import render_to_string, select_template
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.cache import add_never_cache_headers
from django.utils.http import urlencode
from django.utils.safestring import mark_safe

from whos_online import editing, streams
from whos_online.conf import get_config
from whos_online.editing import MAX_MARK, Others, Save
from whos_online.page import viewer_of

if TYPE_CHECKING:
    AnyModelAdmin = admin.ModelAdmin[Any]
    AnySite = admin.AdminSite
else:
    AnyModelAdmin = admin.ModelAdmin
    AnySite = object

OPENED = "whos_online_opened"
"""The form field of the change form's mark: what it was opened from."""
OVERWRITE = "whos_online_overwrite"
"""The form field a staff member ticks to save over someone else's save."""


class ConcurrentEditingMixin(AnyModelAdmin):
    """Who else is editing this: each change form shows the other staff who
    have the same object open, and which of them are editing it rather than
    viewing it, kept current while the form is open; a save over a save
    since the form was opened (someone else's, or the staff member's own in
    another tab) is refused, with a warning, until the staff member ticks
    "Save over their changes".

    Put it first among a ModelAdmin's bases, or register the ModelAdmin with
    a site that has :class:`ConcurrentEditingSiteMixin`.
    """

    def get_urls(self) -> list[URLPattern]:
        opts = self.opts
        name = f"{opts.app_label}_{opts.model_name}_presence"
        presence = path(
            "<path:object_id>/presence/",
            self.admin_site.admin_view(self.presence_view),
            name=name,
        )
        stream = path(
            "<path:object_id>/presence/stream/",
            self.admin_site.admin_view(self.presence_stream_view),
            name=f"{name}_stream",
        )
        return [stream, presence, *super().get_urls()]

    def presence_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """What the change form's script asks every few seconds: POST
        ``opened``, the form's mark (which names its tab), ``editing=1``
        while the form has unsaved changes (an ask without it, as they are
        undone, leaves the editing room), and ``leaving=1`` as it closes."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        pk, viewer = unquote(object_id), viewer_of(request)
        sent = request.POST.get("opened", "")
        obj = self.get_object(request, pk)
        if obj is None:
            if not self.has_view_or_change_permission(request):
                raise PermissionDenied
            form = editing.opened(viewer, self.model, pk, sent)
            save = None
            if form is not None:  # who deleted it, told to a form of ours
                save = editing.save_since(viewer, self.model, pk, form, None)
            return self._presence(Others(available=True, save=save), 404)
        if not self.has_view_or_change_permission(request, obj):
            raise PermissionDenied
        form = editing.opened(viewer, self.model, obj.pk, sent)
        if form is None:  # no mark the site made for this staff member
            return _never_cached(HttpResponseBadRequest())
        if request.POST.get("leaving") == "1":
            editing.leave(request, obj, form.tab)
            return _never_cached(HttpResponse(status=204))
        changed = request.POST.get("editing") == "1"
        editing.stay(request, obj, form.tab, editing=changed)
        others = editing.others_here(viewer, obj)
        now = editing.fingerprint(obj)
        save = editing.save_since(viewer, self.model, obj.pk, form, now)
        return self._presence(replace(others, save=save))

    def presence_stream_view(
        self, request: HttpRequest, object_id: str
    ) -> HttpResponseBase:
        """Under ASGI, what the change form's script follows to ask at once
        when what its staff member may learn of the others (or of the
        object) changed: an event saying only that, after a change of the
        object's rooms (``streams.nudges``). What it shows still comes
        from its asks."""
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET"])
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            if not self.has_view_or_change_permission(request):
                raise PermissionDenied
            return HttpResponseNotFound()
        if not self.has_view_or_change_permission(request, obj):
            raise PermissionDenied
        rooms = editing.rooms_of(obj)
        if rooms is None:
            return HttpResponse(status=204)
        seen = functools.partial(self._seen, request, obj.pk)
        return streams.nudges(request, (rooms.viewing, rooms.editing), seen)

    def _seen(self, request: HttpRequest, pk: Any) -> str | None:
        """The digest of what the viewer of a stream may learn now of the
        others and of the object; ``None`` once it is gone for them."""
        obj = self.get_object(request, pk)
        if obj is None or not self.has_view_or_change_permission(request, obj):
            return None
        return editing.digest(editing.others_here(viewer_of(request), obj), obj)

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
        sent = request.POST.get(OPENED)
        # A post without the field was not made from the change form (a
        # script, a test's client): it saves as Django would. Ticking the
        # box is the one way for a form of ours past the check.
        if sent is None or request.POST.get(OVERWRITE) == "1":
            return form
        # Django's change view runs this inside the save's transaction.
        save = editing.save_over(viewer_of(request), obj, sent)
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
        refused: Save | None = getattr(
            context["adminform"].form, "whos_online_save", None
        )
        carried, shown = self._marks(request, obj, refused)
        others = editing.others_here(viewer_of(request), obj)
        script = {
            "url": self._presence_url(obj),
            "seconds": get_config().admin_editing_seconds,
            "mark": shown,
        }
        if isinstance(request, ASGIRequest):  # under WSGI a stream holds a worker
            script["stream"] = self._stream_url(obj, editing.digest(others, obj))
        response.context_data = {
            **(response.context_data or {}),
            "whos_online_parent": select_template(_names(response.template_name)),
            "whos_online_editing": {
                "others": others,
                "model": self.opts.verbose_name,
                "opened": carried,
                "refused": refused,
                "script": script,
            },
        }
        response.template_name = "whos_online/admin/change_form.html"
        return response

    def _marks(
        self, request: HttpRequest, obj: Any, refused: Save | None
    ) -> tuple[str, str]:
        """The mark the form carries to its save, and the one its asks send
        (of the state the page shows, in a tab of its own): the same state
        unless the page tells of a save already."""
        tab, user = editing.new_tab(), viewer_of(request)
        if request.method != "POST":  # ``obj`` is as stored: the form shows it
            mark = editing.form_mark(user, obj, tab)
            return mark, mark
        sent = request.POST.get(OPENED, "")
        if refused is not None:  # asked again until the box is ticked
            kept = sent if len(sent) <= MAX_MARK else ""
            return kept, editing.form_mark(user, obj, tab, refused.seen)
        form = editing.opened(user, self.model, obj.pk, sent)
        if form is not None:  # sent back for another reason: still what it saw
            return sent, editing.form_mark(user, obj, tab, form.fingerprint)
        # ``obj`` holds what was posted: the form now shows what is stored.
        stored = editing.stored_fingerprint(self.model, obj.pk) or ""
        mark = editing.form_mark(user, obj, tab, stored)
        return mark, mark

    def _presence_url(self, obj: Any, suffix: str = "") -> str:
        opts = self.opts
        name = f"{opts.app_label}_{opts.model_name}_presence{suffix}"
        return reverse(f"{self.admin_site.name}:{name}", args=[quote(obj.pk)])

    def _stream_url(self, obj: Any, shown: str) -> str:
        """The stream of the notice of a page that shows ``shown``."""
        url = self._presence_url(obj, "_stream")
        return f"{url}?{urlencode({'shown': shown})}"

    def _presence(self, others: Others, status: int = 200) -> HttpResponse:
        context = {"others": others, "model": self.opts.verbose_name}
        html = render_to_string("whos_online/admin/editing_notice.html", context)
        answer = {
            "available": others.available,
            "html": html,
            "editing": others.editing,
            "saved": others.save is not None,
        }
        return _never_cached(JsonResponse(answer, status=status))

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


def _never_cached(response: HttpResponse) -> HttpResponse:
    add_never_cache_headers(response)
    return response


def _names(template: Any) -> list[str]:
    return [template] if isinstance(template, str) else list(template)


class ConcurrentEditingSiteMixin(AnySite):
    """For an admin site: every ModelAdmin registered with it, whenever,
    gets :class:`ConcurrentEditingMixin`, as if it had opted in. The site
    registers a subclass of each ModelAdmin class; no instance is changed.
    A ModelAdmin with ``whos_online_editing = False`` is left as it is."""

    def register(
        self,
        model_or_iterable: ModelBase | Iterable[ModelBase],
        admin_class: type[AnyModelAdmin] | None = None,
        **options: Any,
    ) -> None:
        given = admin_class or admin.ModelAdmin
        super().register(model_or_iterable, with_editing(given), **options)


class EditingAdminSite(ConcurrentEditingSiteMixin, admin.AdminSite):
    """Django's admin site, with who else is editing on every change form:
    name it as ``default_site`` of the project's admin app config."""


@functools.cache
def with_editing(cls: type[AnyModelAdmin]) -> type[AnyModelAdmin]:
    """``cls`` with :class:`ConcurrentEditingMixin` first among its bases
    (``cls`` itself if it has it, or says ``whos_online_editing = False``)."""
    if issubclass(cls, ConcurrentEditingMixin) or not getattr(
        cls, "whos_online_editing", True
    ):
        return cls
    namespace = {"__module__": cls.__module__, "__doc__": cls.__doc__}
    return type(cls.__name__, (ConcurrentEditingMixin, cls), namespace)
