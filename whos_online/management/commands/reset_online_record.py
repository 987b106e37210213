from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from whos_online.management.base import redis_failure_is_a_command_error
from whos_online.store import get_store


class Command(BaseCommand):
    help = 'Forget "most users ever online"; the next visit starts a new record.'
    # Redis only: the site's own system checks have nothing to say about it.
    requires_system_checks: list[str] = []

    def handle(self, *args: Any, verbosity: int, **options: Any) -> None:
        with redis_failure_is_a_command_error("reset the record"):
            existed = get_store().reset_most_ever_online()
        if verbosity >= 1:
            self.stdout.write(
                "The record was reset." if existed else "There was no record to reset."
            )
