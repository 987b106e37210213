"""A site that renders with django-jinja, set up exactly as docs/jinja2.md
says (tests/test_django_jinja.py, tests/settings_django_jinja.py): its
TEMPLATES are the ones the page shows, run as written, with this folder as
BASE_DIR, so its templates are in templates/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent
DOC = BASE_DIR.parent.parent / "docs" / "jinja2.md"


def documented_code() -> str:
    """The settings the "With django-jinja" section of docs/jinja2.md shows."""
    section = DOC.read_text().split("\n## With django-jinja\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def documented_templates() -> list[dict[str, Any]]:
    """``TEMPLATES`` as that section sets it, for a site in this folder."""
    namespace: dict[str, Any] = {"BASE_DIR": BASE_DIR}
    exec(documented_code(), namespace)
    templates: list[dict[str, Any]] = namespace["TEMPLATES"]
    return templates
