"""``runserver`` that says, once at startup, when Redis is only embedded."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.staticfiles.management.commands.runserver import (
    Command as StaticfilesRunserverCommand,
)


class Command(StaticfilesRunserverCommand):
    def inner_run(self, *args: Any, **options: Any) -> None:
        # With the autoreloader this runs in the child process that serves,
        # not in the parent that only watches files; so the notice is shown
        # once (and again after each reload, with Django's own banner).
        notice = getattr(settings, "EMBEDDED_REDIS_NOTICE", "")
        if notice:
            self.stderr.write(notice, style_func=self.style.WARNING)
        super().inner_run(*args, **options)
