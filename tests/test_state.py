"""What a process keeps between requests stays bounded."""

from __future__ import annotations

import logging

import pytest

from whos_online.state import BoundedMemo, RateLimitedLog


def test_a_memo_starts_over_when_full() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(2)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("c", 3)
    assert dict(memo) == {"c": 3}


def test_the_log_holds_a_bounded_number_of_topics(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(RateLimitedLog, "MAX_TOPICS", 2)
    log = RateLimitedLog()
    for topic in ("a", "b", "c", "a"):
        log.warning(topic, "about %s", topic)
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert logged == ["about a", "about b", "about c", "about a"]
