from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

THEMES = ("light", "dark")


def refresh(request: HttpRequest) -> dict[str, int]:
    """``refresh_seconds``: how often the widgets refresh in place."""
    return {"refresh_seconds": int(getattr(settings, "DEMO_REFRESH_SECONDS", 15))}


def theme(request: HttpRequest) -> dict[str, str]:
    """``theme``: the demo's own light or dark look, chosen with ?theme= and
    kept in the session; the widget is meant to fit either without help."""
    session = getattr(request, "session", None)
    chosen = request.GET.get("theme")
    if session is None:
        return {"theme": chosen if chosen in THEMES else THEMES[0]}
    if chosen in THEMES:
        session["demo_theme"] = chosen
    return {"theme": session.get("demo_theme", THEMES[0])}
