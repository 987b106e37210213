"""Crawlers, recognised by User-Agent with the maintained crawlerdetect list.

Bots keep no cookies, so no guard spares them: recognising one must stay
cheap on every request. Verdicts are cached per User-Agent string, and each
bot is recorded at most once per guard period per process.
"""

from __future__ import annotations

import functools
import threading
import time

from crawlerdetect import CrawlerDetect

from whos_online.conf import conf

# A real User-Agent is a few hundred characters; a longer one is not looked at.
MAX_USER_AGENT_LENGTH = 512
MAX_BOT_NAME_LENGTH = 64

_local = threading.local()


@functools.lru_cache(maxsize=4096)
def bot_name(user_agent: str) -> str | None:
    """The crawler's name ("Googlebot"), or ``None`` for a browser."""
    if not user_agent or len(user_agent) > MAX_USER_AGENT_LENGTH:
        return None
    detector = _detector()
    if not detector.isCrawler(user_agent):
        return None
    name = str(detector.getMatches() or "bot").strip()
    return name[:MAX_BOT_NAME_LENGTH] or "bot"


def _detector() -> CrawlerDetect:
    """One detector per thread: it keeps its last match as state."""
    detector: CrawlerDetect | None = getattr(_local, "detector", None)
    if detector is None:
        detector = _local.detector = CrawlerDetect()
    return detector


class Throttle:
    """Lets each name through at most once per ``conf.GUARD_SECONDS``."""

    MAX_NAMES = 10_000

    def __init__(self) -> None:
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def allows(self, name: str) -> bool:
        now = time.monotonic()
        with self._lock:
            if self._next.get(name, 0.0) > now:
                return False
            if len(self._next) >= self.MAX_NAMES:
                self._next.clear()
            self._next[name] = now + conf.GUARD_SECONDS
            return True

    def reset(self) -> None:
        with self._lock:
            self._next.clear()


throttle = Throttle()
