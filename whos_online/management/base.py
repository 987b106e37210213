"""What the management commands share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import CommandError
from redis.exceptions import RedisError

from whos_online.conf import get_config


@contextmanager
def redis_failure_is_a_command_error(action: str) -> Iterator[None]:
    """Commands fail loudly, but with one clear line instead of a traceback."""
    try:
        yield
    except (RedisError, ImproperlyConfigured) as exc:
        raise CommandError(
            f"Could not {action}: Redis (cache alias {get_config().cache_alias!r}) "
            f"failed with {type(exc).__name__}: {exc}"
        ) from exc
