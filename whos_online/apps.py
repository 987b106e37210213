from __future__ import annotations

from django.apps import AppConfig
from django.contrib.auth import signals as auth_signals
from django.core import checks
from django.utils.translation import gettext_lazy as _


class WhosOnlineConfig(AppConfig):
    name = "whos_online"
    verbose_name = _("Who's online")

    def ready(self) -> None:
        from whos_online import checks as our_checks
        from whos_online import signals, url_checks

        checks.register(our_checks.check_settings)
        checks.register(our_checks.check_middleware)
        checks.register(our_checks.check_cache, checks.Tags.caches)
        checks.register(our_checks.check_guard)
        checks.register(our_checks.check_statuses)
        checks.register(our_checks.check_imports)
        checks.register(url_checks.check_urls, checks.Tags.urls)
        checks.register(our_checks.check_setting_names)
        checks.register(our_checks.check_admin_editing, checks.Tags.admin)
        checks.register(url_checks.check_locations, checks.Tags.urls)
        checks.register(url_checks.check_rooms, checks.Tags.urls)
        checks.register(url_checks.check_decorate, checks.Tags.urls)
        checks.register(our_checks.check_migrations, checks.Tags.database)
        auth_signals.user_logged_out.connect(signals.user_logged_out)
