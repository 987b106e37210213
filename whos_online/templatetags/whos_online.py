from __future__ import annotations

from typing import Any

from django import template

from whos_online.roster import online_roster

register = template.Library()


@register.inclusion_tag("whos_online/whos_online.html")
def whos_online(limit: int | None = None) -> dict[str, Any]:
    """The "Who's online" widget.

    ``{% whos_online %}`` lists up to ``WHOS_ONLINE_MAX_NAMES`` users;
    ``{% whos_online limit=10 %}`` lists up to ten.
    """
    return {"roster": online_roster(limit)}
