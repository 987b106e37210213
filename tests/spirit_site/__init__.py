"""A django-spirit forum with the app, set up exactly as docs/third-party.md
says (tests/test_spirit.py, tests/settings_spirit.py): its settings are the
ones the page shows, and its AppConfig runs the page's notification recipe
as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "third-party.md"


def documented(heading: str) -> str:
    """The first Python block of the section of docs/third-party.md under
    ``heading`` (a ``##`` or ``###`` title)."""
    section = DOC.read_text().split(f"{heading}\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def documented_settings() -> dict[str, Any]:
    """The ``WHOS_ONLINE_`` settings the page gives a Spirit site."""
    namespace: dict[str, Any] = {}
    exec(documented("### Settings"), namespace)
    return {k: v for k, v in namespace.items() if k.startswith("WHOS_ONLINE_")}
