from __future__ import annotations

from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_out
from django.core import checks
from django.core.signals import setting_changed


class WhosOnlineConfig(AppConfig):
    name = "whos_online"
    verbose_name = "Who's online"

    def ready(self) -> None:
        from whos_online import checks as our_checks
        from whos_online import signals

        checks.register(our_checks.check_settings)
        checks.register(our_checks.check_middleware)
        checks.register(our_checks.check_cache, checks.Tags.caches)
        checks.register(our_checks.check_guard)
        checks.register(our_checks.check_statuses)
        checks.register(our_checks.check_hidden)
        setting_changed.connect(signals.forget_cached_settings)
        user_logged_out.connect(signals.forget_logged_out_user)
