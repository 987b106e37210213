"""The Redis data model: sets, scores, window, cap, record high and pruning."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests.conftest import CommandCounter
from whos_online import presence


def test_recording_a_user_stores_the_primary_key_scored_by_server_time(
    redis_client: Redis, server_now: Callable[[], float]
) -> None:
    before = server_now()
    seen = presence.record_user(42)
    assert before <= seen <= server_now()
    assert redis_client.zscore(presence.key("users"), "42") == pytest.approx(seen)


def test_recording_a_guest_stores_the_address(redis_client: Redis) -> None:
    presence.record_guest("2001:db8::1")
    assert redis_client.zrange(presence.key("guests"), 0, -1) == [b"2001:db8::1"]


def test_recording_again_moves_the_member_rather_than_adding_one(
    redis_client: Redis,
) -> None:
    first = presence.record_user(1)
    second = presence.record_user(1)
    assert second >= first
    assert redis_client.zcard(presence.key("users")) == 1


def test_every_key_shares_one_cluster_hash_tag(isolated_presence: str) -> None:
    tags = {
        presence.key(name).split("}")[0] + "}" for name in ("users", "guests", "record")
    }
    assert tags == {f"{{{isolated_presence}}}"}


def test_recording_sets_an_expiry_of_the_window_on_the_set(
    redis_client: Redis, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_WINDOW = 120
    presence.record_user(1)
    assert 0 < redis_client.ttl(presence.key("users")) <= 120


@pytest.mark.usefixtures("warm_scripts")
def test_recording_is_one_round_trip(redis_commands: CommandCounter) -> None:
    presence.record_guest("192.0.2.1")
    assert redis_commands.commands == ["EVALSHA"]


def test_the_set_is_capped_by_trimming_the_oldest_members(
    redis_client: Redis, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 3
    for n in range(1, 6):
        presence.record_guest(f"192.0.2.{n}")
    assert redis_client.zrange(presence.key("guests"), 0, -1) == [
        b"192.0.2.3",
        b"192.0.2.4",
        b"192.0.2.5",
    ]


def test_snapshot_lists_users_most_recently_seen_first() -> None:
    for pk in (1, 2, 3):
        presence.record_user(pk)
    snapshot = presence.snapshot(limit=10)
    assert [member for member, _ in snapshot.users] == ["3", "2", "1"]


def test_snapshot_lists_at_most_the_limit_but_counts_everyone() -> None:
    for pk in range(1, 6):
        presence.record_user(pk)
    snapshot = presence.snapshot(limit=2)
    assert [member for member, _ in snapshot.users] == ["5", "4"]
    assert snapshot.counts.users == 5


def test_snapshot_counts_users_and_guests_separately() -> None:
    presence.record_user(1)
    presence.record_guest("192.0.2.1")
    presence.record_guest("192.0.2.2")
    snapshot = presence.snapshot(limit=0)
    assert (snapshot.counts.users, snapshot.counts.guests) == (1, 2)
    assert snapshot.users == []


def test_members_seen_before_the_window_are_neither_listed_nor_counted(
    seen_ago: Callable[[str, str, float], None],
) -> None:
    seen_ago("users", "1", 901)
    seen_ago("users", "2", 899)
    seen_ago("guests", "192.0.2.1", 1000)
    snapshot = presence.snapshot(limit=10)
    assert [member for member, _ in snapshot.users] == ["2"]
    assert (snapshot.counts.users, snapshot.counts.guests) == (1, 0)


def test_the_window_follows_the_setting(
    settings: SettingsWrapper, seen_ago: Callable[[str, str, float], None]
) -> None:
    settings.WHOS_ONLINE_WINDOW = 60
    seen_ago("users", "1", 61)
    seen_ago("users", "2", 59)
    assert presence.snapshot(limit=10).counts.users == 1


@pytest.mark.usefixtures("warm_scripts")
def test_snapshot_is_one_round_trip(redis_commands: CommandCounter) -> None:
    presence.snapshot(limit=10)
    assert redis_commands.commands == ["EVALSHA"]


def test_last_seen_is_the_score_of_the_user() -> None:
    seen = presence.record_user(7)
    assert presence.last_seen(7) == pytest.approx(seen)


def test_last_seen_of_an_unknown_user_is_none() -> None:
    assert presence.last_seen(404) is None


def test_the_most_ever_online_is_raised_by_recording() -> None:
    presence.record_user(1)
    presence.record_guest("192.0.2.1")
    last = presence.record_guest("192.0.2.2")
    record = presence.most_ever_online()
    assert record is not None
    assert record[0] == 3
    assert record[1] == pytest.approx(last)


def test_the_most_ever_online_never_goes_down(
    seen_ago: Callable[[str, str, float], None],
) -> None:
    presence.record_user(1)
    presence.record_user(2)
    seen_ago("users", "1", 1000)
    seen_ago("users", "2", 1000)
    presence.record_user(3)
    record = presence.most_ever_online()
    assert record is not None and record[0] == 2


def test_the_most_ever_online_is_none_before_anyone_is_recorded() -> None:
    assert presence.most_ever_online() is None


def test_prune_removes_only_members_seen_before_the_window(
    redis_client: Redis, seen_ago: Callable[[str, str, float], None]
) -> None:
    seen_ago("users", "1", 1000)
    seen_ago("users", "2", 10)
    seen_ago("guests", "192.0.2.1", 1000)
    seen_ago("guests", "192.0.2.2", 2000)
    assert presence.prune() == {
        "users": 1,
        "hidden": 0,
        "guests": 2,
        "bots": 0,
        "rooms": 0,
    }
    assert redis_client.zrange(presence.key("users"), 0, -1) == [b"2"]
    assert redis_client.zcard(presence.key("guests")) == 0


def test_prune_dry_run_counts_without_removing(
    redis_client: Redis, seen_ago: Callable[[str, str, float], None]
) -> None:
    seen_ago("users", "1", 1000)
    assert presence.prune(dry_run=True)["users"] == 1
    assert redis_client.zcard(presence.key("users")) == 1


def test_prune_works_through_large_sets_in_bounded_batches(
    monkeypatch: pytest.MonkeyPatch,
    redis_client: Redis,
    seen_ago: Callable[[str, str, float], None],
    redis_commands: CommandCounter,
) -> None:
    monkeypatch.setattr(presence, "PRUNE_BATCH", 3)
    for n in range(7):
        seen_ago("guests", f"192.0.2.{n}", 1000 + n)
    seen_ago("guests", "192.0.2.100", 5)
    redis_commands.commands.clear()
    assert presence.prune()["guests"] == 7
    # Three batches for the guests; one call each for the other sets.
    assert redis_commands.commands.count("EVALSHA") == 3 + 4
    assert redis_client.zrange(presence.key("guests"), 0, -1) == [b"192.0.2.100"]


def test_prune_of_missing_sets_removes_nothing() -> None:
    assert set(presence.prune().values()) == {0}
