"""What ``{% load whos_online %}`` offers, for sites that render with Jinja2.

Add the extension to the Jinja2 environment, with Django's Jinja2 backend::

    TEMPLATES = [
        {
            "BACKEND": "django.template.backends.jinja2.Jinja2",
            "APP_DIRS": True,
            "OPTIONS": {"extensions": ["whos_online.jinja2.WhosOnlineExtension"]},
        },
        {"BACKEND": "django.template.backends.django.DjangoTemplates", ...},
    ]

or with django-jinja, after its own extensions (``"extensions":
DEFAULT_EXTENSIONS + ["whos_online.jinja2.WhosOnlineExtension"]``, from
``django_jinja.builtins``; docs/jinja2.md), or call :func:`install` on an
environment of your own. Templates then have the tags
as functions (``{{ whos_online(limit=10) }}``, ``{{ online_count("guests") }}``)
and the filters as filters (``{{ user|online_status }}``).

Each function is the Django tag itself, given a Django ``Context`` made of
the Jinja2 context's ``request`` and ``csrf_token``; what it renders is the
app's own Django template (``whos_online/*.html``, overridable as for any
Django site), rendered by the site's ``DjangoTemplates`` engine. So a Jinja2
page shows exactly what a Django page shows, to the same viewer.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Model
from django.template import Context, Engine
from jinja2 import Environment, pass_context
from jinja2.ext import Extension
from jinja2.runtime import Context as JinjaContext
from markupsafe import Markup

from whos_online.rendered import (
    box_html,
    count_text,
    decorate_html,
    heartbeat_html,
    minutes_since,
    people_html,
    tally_html,
    visibility_html,
    window_html,
)
from whos_online.statuses import UserPresence
from whos_online.store import Counts
from whos_online.templatetags import whos_online as tags


def _django(context: JinjaContext) -> Context:
    """The Django context a tag reads: the viewer's request and CSRF token."""
    return Context(
        {"request": context.get("request"), "csrf_token": context.get("csrf_token")}
    )


def _render(template_name: str, values: dict[str, Any]) -> Markup:
    """One of the app's Django templates, as an inclusion tag renders it."""
    template = Engine.get_default().get_template(template_name)
    return Markup(template.render(Context(values)))


@pass_context
def whos_online(
    context: JinjaContext,
    limit: int | None = None,
    room: str | Model | None = None,
    refresh: int = 0,
    heading: int = 2,
) -> Markup:
    """``{{ whos_online() }}``: the widget; the arguments of ``{% whos_online %}``."""
    values = tags.whos_online(_django(context), limit, room, refresh, heading)
    return Markup(box_html(values))


@pass_context
def online_count(
    context: JinjaContext, kind: str = "people", room: str | Model | None = None
) -> int:
    """``{{ online_count() }}``, ``{{ online_count("guests") }}``: as
    ``{% online_count %}``, a site-wide count marked for the refresh script."""
    return tags.online_count(_django(context), kind, room)


@pass_context
def page_room(context: JinjaContext) -> str | None:
    """``{% set room = page_room() %}``: the room this page is in, or ``None``."""
    return tags.page_room(_django(context))


@pass_context
def presence_list(context: JinjaContext, users: Any) -> list[UserPresence]:
    """``{% for row in presence_list(members) %}``: each user's status and
    last seen, as this viewer may see them, in one round trip."""
    return tags.presence_list(_django(context), users)


@pass_context
def room_counts(context: JinjaContext, items: Any) -> list[tuple[Any, Counts]]:
    """``{% for topic, here in room_counts(topics) %}``: how many are in
    each row's room, as this viewer may learn it, in one round trip."""
    return tags.room_counts(_django(context), items)


def online_badge(user: Any) -> Markup:
    """``{{ online_badge(user) }}``: the status dot of ``{% online_badge %}``."""
    return Markup(tags.online_badge(user))


@pass_context
def whos_online_heartbeat(context: JinjaContext) -> Markup:
    """``{{ whos_online_heartbeat() }}``: keeps a logged-in user's status exact."""
    values = tags.whos_online_heartbeat(_django(context))
    return Markup(heartbeat_html(values))


@pass_context
def whos_online_beacon(
    context: JinjaContext, room: str | Model | None = None
) -> Markup:
    """``{{ whos_online_beacon() }}``: records visitors of cached pages."""
    values = tags.whos_online_beacon(_django(context), room)
    return _render("whos_online/beacon.html", values)


def whos_online_decorate(refresh: int = 0) -> Markup:
    """``{{ whos_online_decorate() }}``: badges and "N viewing" on pages
    whose templates the site does not own."""
    values = tags.whos_online_decorate(refresh)
    return Markup(decorate_html(values))


def whos_online_stylesheet() -> Markup:
    """``{{ whos_online_stylesheet() }}``: the ``<link>`` of the app's
    stylesheet."""
    return Markup(tags.whos_online_stylesheet())


@pass_context
def room_token(context: JinjaContext, room: str | Model) -> str:
    """``data-whos-online-viewing="{{ room_token(topic) }}"``: an element
    that ``whos_online_decorate()`` fills with "N viewing"."""
    return tags.room_token(_django(context), room)


@pass_context
def whos_online_visibility(context: JinjaContext) -> Markup:
    """``{{ whos_online_visibility() }}``: the "Appear offline" button."""
    values = tags.whos_online_visibility(_django(context))
    return Markup(visibility_html(values))


@pass_context
def who_is_online_page(context: JinjaContext) -> Markup:
    """``{{ who_is_online_page() }}``: the public page's content, for a Jinja2
    template named ``whos_online/who_is_online.html`` that puts it in the
    site's layout (the page's view gives it ``roster``)."""
    return _render(
        "whos_online/who_is_online_content.html",
        {
            "roster": context.get("roster"),
            "board": context.get("board"),
            "request": context.get("request"),
        },
    )


GLOBALS = {
    "whos_online": whos_online,
    "online_count": online_count,
    "page_room": page_room,
    "presence_list": presence_list,
    "room_counts": room_counts,
    "online_badge": online_badge,
    "whos_online_heartbeat": whos_online_heartbeat,
    "whos_online_beacon": whos_online_beacon,
    "whos_online_visibility": whos_online_visibility,
    "whos_online_decorate": whos_online_decorate,
    "whos_online_stylesheet": whos_online_stylesheet,
    "room_token": room_token,
    "who_is_online_page": who_is_online_page,
}

FILTERS = {
    "online_status": tags.online_status,
    "last_seen": tags.last_seen,
    "last_seen_label": tags.last_seen_label,
    "minutes_since": minutes_since,
    "count_text": count_text,
    "people_html": people_html,
    "tally_html": tally_html,
    "window_html": window_html,
}


def install(environment: Environment) -> Environment:
    """Give ``environment`` the functions and filters; returns it."""
    environment.globals.update(GLOBALS)
    environment.filters.update(FILTERS)
    return environment


class WhosOnlineExtension(Extension):
    """``"extensions": ["whos_online.jinja2.WhosOnlineExtension"]``: the
    same as :func:`install`, for settings that name extensions."""

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        install(environment)


def environment(**options: Any) -> Environment:
    """``"environment": "whos_online.jinja2.environment"``: a Jinja2
    environment with the functions and filters, for a site that has no
    environment function of its own."""
    return install(Environment(**options))
