"""The site's own app: its ready() runs the recipe of docs/third-party.md."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig

from tests.spirit_site import documented


class SpiritSiteConfig(AppConfig):
    name = "tests.spirit_site"
    label = "spirit_site"

    def ready(self) -> None:
        namespace: dict[str, Any] = {}
        exec(documented("## Notifications that skip readers"), namespace)
        namespace["skip_readers"]()
