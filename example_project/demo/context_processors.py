from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def refresh(request: HttpRequest) -> dict[str, int]:
    """``refresh_seconds``: how often the widgets refresh in place."""
    return {"refresh_seconds": int(getattr(settings, "DEMO_REFRESH_SECONDS", 15))}
