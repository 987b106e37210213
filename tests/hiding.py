"""A WHOS_ONLINE_IS_HIDDEN function for the tests: hides users named "ghost*"."""

from __future__ import annotations

from typing import Any


def is_ghost(user: Any) -> bool:
    return str(user.get_username()).startswith("ghost")


NOT_CALLABLE = 42


ASKED: list[tuple[Any, list[Any]]] = []
"""Each call of :func:`friends_only`, for the tests to count."""


def friends_only(viewer: Any, users: list[Any]) -> list[Any]:
    """A WHOS_ONLINE_CAN_SEE rule: a user is seen only by "friend-of-NAME"."""
    ASKED.append((viewer, users))
    name = str(getattr(viewer, "username", ""))
    return [user for user in users if name == f"friend-of-{user.username}"]


def broken_rule(viewer: Any, users: list[Any]) -> list[Any]:
    raise RuntimeError("the site's rule is broken")
