"""Keeps a Redis failure from ever reaching a page.

The middleware, the template tag and the signal handlers call Redis through
:data:`breaker`. After a failure it stops calling Redis for
``WHOS_ONLINE_FAILURE_BACKOFF`` seconds (so a dead server costs nothing on
the following requests), then lets one call through to probe; the first
success closes it again. Failures are logged, at most once a minute.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from whos_online.conf import conf

logger = logging.getLogger("whos_online")

T = TypeVar("T")

LOG_INTERVAL = 60.0


class CircuitBreaker:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self._retry_at = 0.0
        self._failing = False
        self._next_log_at = 0.0
        self._suppressed = 0

    @property
    def is_open(self) -> bool:
        return self._clock() < self._retry_at

    def call(self, fn: Callable[[], T], default: T) -> T:
        """``fn()``, or ``default`` if Redis is known to be failing or fails now."""
        if self.is_open:
            return default
        try:
            result = fn()
        except Exception as exc:
            self._trip(exc)
            return default
        if self._failing:
            self._recover()
        return result

    def _trip(self, exc: Exception) -> None:
        now = self._clock()
        with self._lock:
            self._failing = True
            self._retry_at = now + conf.FAILURE_BACKOFF
            if now < self._next_log_at:
                self._suppressed += 1
                return
            suppressed, self._suppressed = self._suppressed, 0
            self._next_log_at = now + LOG_INTERVAL
        logger.warning(
            "Who's online could not reach Redis (%s: %s); pages are served "
            "without it, and it is retried in %ss.%s",
            type(exc).__name__,
            exc,
            conf.FAILURE_BACKOFF,
            f" {suppressed} more failures were not logged." if suppressed else "",
        )

    def _recover(self) -> None:
        with self._lock:
            self._failing = False
            self._next_log_at = 0.0
            self._suppressed = 0
        logger.info("Who's online reaches Redis again.")


breaker = CircuitBreaker()
