from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from whos_online import signals
from whos_online.management.base import redis_failure_is_a_command_error
from whos_online.store import get_store


class Command(BaseCommand):
    help = (
        "Remove visitors last seen before the who's-online window from Redis, "
        "rooms included. Reads never show them anyway; pruning frees their "
        "memory, and announces users who left (user_went_offline). Run it "
        "from cron."
    )
    # It reads and writes Redis only, so the site's own checks have nothing
    # to say about it; skipping them keeps a cron run silent.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Only count the stale members; remove nothing.",
        )

    def handle(self, *args: Any, dry_run: bool, verbosity: int, **options: Any) -> None:
        with redis_failure_is_a_command_error("prune who's online"):
            pruned = get_store().prune(
                dry_run=dry_run, named=signals.user_went_offline.has_listeners()
            )
        signals.announce_pruned(pruned)
        removed = pruned.removed
        verb = "Would remove" if dry_run else "Removed"
        if verbosity >= 1:
            total = sum(removed.values())
            self.stdout.write(
                f"{verb} {total} stale member{'s' if total != 1 else ''}."
            )
        if verbosity >= 2:
            for name, count in removed.items():
                self.stdout.write(f"  {name}: {count}")
