"""Prepare the example project's database for the load test.

Run as ``python -m benchmarks.example_setup N`` with the environment of the
gunicorn servers: migrates, creates the demo users with the project's own
command, and N more users with the demo password.
"""

from __future__ import annotations

import os
import sys

USER_PREFIX = "reader"


def main(extra_users: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.example_settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("create_demo_users", verbosity=0)
    from demo.management.commands.create_demo_users import PASSWORD

    model = get_user_model()
    for i in range(1, extra_users + 1):
        user, created = model._default_manager.get_or_create(
            username=f"{USER_PREFIX}{i}"
        )
        if created:
            user.set_password(PASSWORD)
            user.save()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
