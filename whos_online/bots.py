"""Crawlers, recognised by User-Agent with the maintained crawlerdetect list.

A User-Agent is written by the visitor, so what crawlerdetect matched in it
("Buy-cheap-pills-bot") is never shown to the public. Well-known crawlers
are stored under the one spelling of :data:`KNOWN_CRAWLERS`, and only those
names are shown publicly; anything else (HTTP libraries, headless browsers,
unknown bots) is stored under its matched text, bounded, which staff alone
see, and counts publicly as "other crawlers".
"""

from __future__ import annotations

import functools
import threading

from crawlerdetect import CrawlerDetect

# A real User-Agent is a few hundred characters; a longer one is not looked at.
MAX_USER_AGENT_LENGTH = 512
MAX_BOT_NAME_LENGTH = 64

# (what the User-Agent contains, lower case; the name shown), first match wins.
KNOWN_CRAWLERS: tuple[tuple[str, str], ...] = (
    ("adsbot-google", "AdsBot-Google"),
    ("mediapartners-google", "Mediapartners-Google"),
    ("googleother", "GoogleOther"),
    ("storebot-google", "Storebot-Google"),
    ("googlebot", "Googlebot"),
    ("bingbot", "Bingbot"),
    ("applebot", "Applebot"),
    ("duckduckbot", "DuckDuckBot"),
    ("yandexbot", "YandexBot"),
    ("baiduspider", "Baiduspider"),
    ("yahoo! slurp", "Yahoo! Slurp"),
    ("seznambot", "SeznamBot"),
    ("petalbot", "PetalBot"),
    ("facebookexternalhit", "facebookexternalhit"),
    ("twitterbot", "Twitterbot"),
    ("linkedinbot", "LinkedInBot"),
    ("slackbot", "Slackbot"),
    ("discordbot", "Discordbot"),
    ("telegrambot", "TelegramBot"),
    ("gptbot", "GPTBot"),
    ("chatgpt-user", "ChatGPT-User"),
    ("oai-searchbot", "OAI-SearchBot"),
    ("claudebot", "ClaudeBot"),
    ("perplexitybot", "PerplexityBot"),
    ("amazonbot", "Amazonbot"),
    ("bytespider", "Bytespider"),
    ("ccbot", "CCBot"),
    ("ahrefsbot", "AhrefsBot"),
    ("semrushbot", "SemrushBot"),
    ("mj12bot", "MJ12bot"),
)
KNOWN_NAMES = frozenset(name for _, name in KNOWN_CRAWLERS)

_local = threading.local()


@functools.lru_cache(maxsize=4096)
def bot_name(user_agent: str) -> str | None:
    """The name a crawler is stored under, or ``None`` for a browser."""
    if not user_agent or len(user_agent) > MAX_USER_AGENT_LENGTH:
        return None
    detector = _detector()
    if not detector.isCrawler(user_agent):
        return None
    lowered = user_agent.lower()
    for token, name in KNOWN_CRAWLERS:
        if token in lowered:
            return name
    matched = str(detector.getMatches() or "").strip()
    return matched[:MAX_BOT_NAME_LENGTH] or "bot"


def is_known(name: str) -> bool:
    """Whether ``name`` is ours to show the public."""
    return name in KNOWN_NAMES


def _detector() -> CrawlerDetect:
    """One detector per thread: it keeps its last match as state."""
    detector: CrawlerDetect | None = getattr(_local, "detector", None)
    if detector is None:
        detector = _local.detector = CrawlerDetect()
    return detector
