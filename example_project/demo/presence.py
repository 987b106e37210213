"""Whom the demo hides: ``WHOS_ONLINE_IS_HIDDEN = "demo.presence.is_hidden"``."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser

HIDDEN_USERNAMES = ("carol",)


def is_hidden(user: AbstractBaseUser) -> bool:
    """carol is counted as online, but listed (and her status shown) to staff only."""
    return user.get_username() in HIDDEN_USERNAMES
