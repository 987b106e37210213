"""The floor's ``{% load whos_online %}``: the example's templates with each
of the app's tags they use rendering nothing, for the site without the app
(benchmarks/load_settings.py)."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.simple_tag(name="whos_online")
@register.simple_tag(name="online_count")
@register.simple_tag(name="whos_online_visibility")
@register.simple_tag(name="whos_online_heartbeat")
@register.simple_tag(name="whos_online_beacon")
@register.simple_tag(name="whos_online_decorate")
@register.simple_tag(name="whos_online_stylesheet")
@register.simple_tag(name="online_badge")
def nothing(*args: Any, **kwargs: Any) -> str:
    return ""


@register.simple_tag
def page_room() -> None:
    return None


@register.simple_tag
def presence_list(users: Any) -> list[Any]:
    return []
