from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.core.signals import setting_changed


class WhosOnlineConfig(AppConfig):
    name = "whos_online"
    verbose_name = "Who's online"

    def ready(self) -> None:
        from whos_online import checks as our_checks

        checks.register(our_checks.check_settings)
        checks.register(our_checks.check_middleware)
        checks.register(our_checks.check_cache, checks.Tags.caches)
        checks.register(our_checks.check_guard)
        setting_changed.connect(forget_cached_settings)


def forget_cached_settings(*, setting: str, **kwargs: Any) -> None:
    """Drop what was derived from settings, so ``override_settings`` takes effect."""
    if setting.startswith("WHOS_ONLINE_") or setting == "CACHES":
        from whos_online import connection, presence

        connection.get_client.cache_clear()
        presence._script.cache_clear()
