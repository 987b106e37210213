from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from redis.exceptions import RedisError

from whos_online import presence
from whos_online.conf import conf


class Command(BaseCommand):
    help = (
        "Remove visitors last seen before the who's-online window from Redis. "
        "Reads never show them anyway; pruning frees their memory. Run it from cron."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Only count the stale members; remove nothing.",
        )

    def handle(self, *args: Any, dry_run: bool, verbosity: int, **options: Any) -> None:
        try:
            removed = presence.prune(dry_run=dry_run)
        except (RedisError, ImproperlyConfigured) as exc:
            raise CommandError(
                f"Could not prune who's online: Redis (cache alias "
                f"{conf.CACHE_ALIAS!r}) failed with {type(exc).__name__}: {exc}"
            ) from exc
        verb = "Would remove" if dry_run else "Removed"
        if verbosity >= 1:
            total = sum(removed.values())
            self.stdout.write(
                f"{verb} {total} stale member{'s' if total != 1 else ''}."
            )
        if verbosity >= 2:
            for name, count in removed.items():
                self.stdout.write(f"  {name}: {count}")
