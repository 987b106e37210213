"""A WHOS_ONLINE_IS_HIDDEN function for the tests: hides users named "ghost*"."""

from __future__ import annotations

from typing import Any


def is_ghost(user: Any) -> bool:
    return str(user.get_username()).startswith("ghost")


NOT_CALLABLE = 42
