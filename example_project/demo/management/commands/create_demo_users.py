from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from demo.presence import HIDDEN_USERNAMES

PASSWORD = "whos-online"
USERS = ["alice", "bob", "carol"]
SUPERUSER = "admin"
# A second member of staff, to see "who else is editing" in the admin.
EDITOR = "editor"


class Command(BaseCommand):
    help = (
        f"Create the demo users {', '.join(USERS)} and the superusers {SUPERUSER} "
        f"and {EDITOR}, "
        f"all with the password {PASSWORD!r}. Safe to run again."
    )

    def handle(self, *args: Any, verbosity: int, **options: Any) -> None:
        for username in [*USERS, SUPERUSER, EDITOR]:
            done = self._ensure_user(
                username, is_superuser=username in (SUPERUSER, EDITOR)
            )
            if verbosity >= 2:
                self.stdout.write(f"  {username}: {done}")
        if verbosity >= 1:
            self.stdout.write(
                f"Demo users: {', '.join(USERS)} "
                f"(and {SUPERUSER} and {EDITOR}, superusers, for /admin/: open "
                f"one object's change form as both to see who else is editing).\n"
                f"Password for each: {PASSWORD}\n"
                f"Hidden: {', '.join(HIDDEN_USERNAMES)} (WHOS_ONLINE_IS_HIDDEN), "
                f"counted by everyone but listed only to staff such as {SUPERUSER}."
            )

    def _ensure_user(self, username: str, *, is_superuser: bool) -> str:
        """Create or repair the user; says which it did."""
        model = get_user_model()
        lookup: dict[str, Any] = {model.USERNAME_FIELD: username}
        user, created = model._default_manager.get_or_create(**lookup)
        changed = created
        if user.is_staff != is_superuser or user.is_superuser != is_superuser:
            user.is_staff = user.is_superuser = is_superuser
            changed = True
        if not user.is_active:
            user.is_active = True
            changed = True
        # A new user, or one whose password was changed meanwhile, gets the
        # demo password (again), so the printed logins always work.
        if created or not user.check_password(PASSWORD):
            user.set_password(PASSWORD)
            changed = True
        if changed:
            user.save()
        return "created" if created else "updated" if changed else "unchanged"
