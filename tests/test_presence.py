"""The Redis data model: sets, scores, window, cap, record high and pruning."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis
from redis.exceptions import NoScriptError

import whos_online.store.prune
import whos_online.store.reads
from tests import presence
from tests.conftest import Clock, CommandCounter


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
def test_recording_loads_the_script_again_after_redis_forgets_it(
    redis_client: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As after a restart; SCRIPT FLUSH would also empty a shared server's
    # cache for everyone else.
    presence.record_guest("192.0.2.1")

    def forgotten(*args: object) -> None:
        monkeypatch.undo()
        raise NoScriptError("No matching script.")

    monkeypatch.setattr(redis_client, "evalsha", forgotten)
    presence.record_guest("192.0.2.2")
    assert presence.snapshot(0).counts.guests == 2


@pytest.mark.usefixtures("warm_scripts")
def test_recording_is_one_round_trip(redis_commands: CommandCounter) -> None:
    presence.record_guest("192.0.2.1")
    assert redis_commands.commands == ["EVALSHA"]


def test_newcomers_to_a_full_set_never_push_out_those_online(
    redis_client: Redis, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 3
    for n in range(1, 6):
        presence.record_guest(f"192.0.2.{n}")
    assert redis_client.zrange(presence.key("guests"), 0, -1) == [
        b"192.0.2.1",
        b"192.0.2.2",
        b"192.0.2.3",
    ]


def test_a_newcomer_to_a_full_set_takes_the_place_of_one_who_left(
    redis_client: Redis,
    settings: SettingsWrapper,
    seen_ago: Callable[[str, str, float], None],
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 2
    seen_ago("guests", "192.0.2.1", 1000)
    presence.record_guest("192.0.2.2")
    presence.record_guest("192.0.2.3")
    assert redis_client.zrange(presence.key("guests"), 0, -1) == [
        b"192.0.2.2",
        b"192.0.2.3",
    ]


def test_those_online_in_a_full_set_are_still_recorded(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 1
    first = presence.record_guest("192.0.2.1")
    presence.record_guest("192.0.2.2")
    assert presence.record_guest("192.0.2.1") > first


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
    assert redis_commands.round_trips == 1


def test_last_seen_is_the_score_of_the_user() -> None:
    seen = presence.record_user(7)
    assert presence.last_seen(7) == pytest.approx(seen)


def test_last_seen_of_an_unknown_user_is_none() -> None:
    assert presence.last_seen(404) is None


def test_the_most_ever_online_counts_everyone_online_now() -> None:
    presence.record_user(1)
    presence.record_guest("192.0.2.1")
    last = presence.record_guest("192.0.2.2")
    record = presence.most_ever_online()
    assert record is not None
    assert record[0] == 3
    assert record[1] == last  # the record that reached it


def test_the_most_ever_online_is_kept_by_the_next_minutes_first_record(
    clock: Clock, seen_ago: Callable[[str, str, float], None]
) -> None:
    presence.record_user(1)
    presence.record_user(2)
    clock.advance(60)
    presence.record_user(3)  # the minute's first record keeps "3 online"
    for pk in ("1", "2", "3"):
        seen_ago("users", pk, 1000)
    presence.record_user(4)
    record = presence.most_ever_online()
    assert record is not None and record[0] == 3


def test_a_member_returning_after_the_window_counts_towards_the_record(
    seen_ago: Callable[[str, str, float], None],
) -> None:
    presence.record_user(1)
    seen_ago("users", "2", 1000)
    presence.record_user(2)
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
    assert presence.prune().removed == {
        "users": 1,
        "hidden": 0,
        "guests": 2,
        "bots": 0,
        "last-seen": 0,  # kept for WHOS_ONLINE_LAST_SEEN_DAYS, beyond the window
    }
    assert redis_client.zrange(presence.key("users"), 0, -1) == [b"2"]
    assert redis_client.zcard(presence.key("guests")) == 0


def test_prune_dry_run_counts_without_removing(
    redis_client: Redis, seen_ago: Callable[[str, str, float], None]
) -> None:
    seen_ago("users", "1", 1000)
    assert presence.prune(dry_run=True).removed["users"] == 1
    assert redis_client.zcard(presence.key("users")) == 1


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(whos_online.store.prune, "PRUNE_BATCH", 3)
    monkeypatch.setattr(whos_online.store.prune, "COPIED", 3)
    return 3


def guests_seen(
    seen_ago: Callable[[str, str, float], None], *, stale: int, online: int
) -> None:
    for n in range(stale):
        seen_ago("guests", f"192.0.2.{n}", 1000 + n)
    for n in range(online):
        seen_ago("guests", f"198.51.100.{n}", 5 + n)


def guest_scripts(redis_commands: CommandCounter) -> int:
    """EVALSHAs beyond the one each other set costs, the one of the
    last-seen set and the one announcing what changed."""
    return redis_commands.commands.count("EVALSHA") - 5


@pytest.mark.usefixtures("small_batches")
@pytest.mark.parametrize(
    "online",
    [pytest.param(10, id="mostly online"), pytest.param(4, id="more than a batch")],
)
def test_prune_removes_stale_members_in_bounded_batches(
    redis_client: Redis,
    seen_ago: Callable[[str, str, float], None],
    redis_commands: CommandCounter,
    online: int,
) -> None:
    guests_seen(seen_ago, stale=7, online=online)
    redis_commands.commands.clear()
    assert presence.prune().removed["guests"] == 7
    assert guest_scripts(redis_commands) == 3
    assert redis_client.zcard(presence.key("guests")) == online


@pytest.mark.usefixtures("small_batches")
def test_prune_keeps_the_few_online_of_a_mostly_stale_set_in_one_step(
    redis_client: Redis,
    seen_ago: Callable[[str, str, float], None],
    redis_commands: CommandCounter,
) -> None:
    guests_seen(seen_ago, stale=7, online=2)
    redis_client.expire(presence.key("guests"), 600)
    redis_commands.commands.clear()
    assert presence.prune().removed["guests"] == 7
    assert guest_scripts(redis_commands) == 1
    assert redis_client.zrange(presence.key("guests"), 0, -1) == [
        b"198.51.100.1",
        b"198.51.100.0",
    ]
    assert 590 < redis_client.ttl(presence.key("guests")) <= 600
    assert not redis_client.exists(presence.key("prune-scratch"))


@pytest.mark.usefixtures("small_batches")
def test_prune_copies_out_more_members_online_than_it_removes_at_once(
    redis_client: Redis,
    seen_ago: Callable[[str, str, float], None],
    redis_commands: CommandCounter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(whos_online.store.prune, "COPIED", 5)
    guests_seen(seen_ago, stale=7, online=4)
    redis_commands.commands.clear()
    assert presence.prune().removed["guests"] == 7
    assert guest_scripts(redis_commands) == 1
    assert redis_client.zcard(presence.key("guests")) == 4


@pytest.mark.usefixtures("small_batches")
def test_prune_names_every_user_who_left_however_many_batches(
    seen_ago: Callable[[str, str, float], None],
) -> None:
    for pk in range(7):
        seen_ago("users", str(pk), 1000 + pk)
    seen_ago("users", "online", 5)
    assert sorted(presence.prune().users_left) == [str(pk) for pk in range(7)]


def test_prune_of_a_set_with_nobody_online_deletes_it(
    redis_client: Redis, seen_ago: Callable[[str, str, float], None]
) -> None:
    guests_seen(seen_ago, stale=3, online=0)
    assert presence.prune().removed["guests"] == 3
    assert not redis_client.exists(presence.key("guests"))


def test_prune_of_missing_sets_removes_nothing() -> None:
    assert set(presence.prune().removed.values()) == {0}


def test_a_hidden_user_is_recorded_in_the_hidden_set_only(redis_client: Redis) -> None:
    presence.record_user(5, hidden=True)
    assert redis_client.zrange(presence.key("hidden"), 0, -1) == [b"5"]
    assert redis_client.zcard(presence.key("users")) == 0


def test_a_user_who_becomes_hidden_leaves_the_visible_set(redis_client: Redis) -> None:
    presence.record_user(5)
    presence.record_user(5, hidden=True)
    assert redis_client.zcard(presence.key("users")) == 0
    presence.record_user(5)
    assert redis_client.zcard(presence.key("hidden")) == 0


def test_snapshot_counts_every_kind_and_the_total() -> None:
    presence.record_user(1)
    presence.record_user(2, hidden=True)
    presence.record_guest("192.0.2.1")
    presence.record("bots", "Googlebot")
    counts = presence.snapshot(limit=10).counts
    assert counts == presence.Counts(users=1, hidden=1, guests=1, bots=1)
    assert counts.total == 4


def test_snapshot_lists_hidden_users_and_guests_only_when_asked() -> None:
    presence.record_user(2, hidden=True)
    presence.record_guest("192.0.2.1")
    plain = presence.snapshot(limit=10)
    assert (plain.hidden, plain.guests) == ([], [])
    full = presence.snapshot(limit=10, hidden_limit=10, guest_limit=10)
    assert [m for m, _ in full.hidden] == ["2"]
    assert [m for m, _ in full.guests] == ["192.0.2.1"]


def test_snapshot_lists_bots_by_name() -> None:
    presence.record("bots", "Googlebot")
    presence.record("bots", "bingbot")
    assert [name for name, _ in presence.snapshot(limit=10).bots] == [
        "bingbot",
        "Googlebot",
    ]


def test_snapshot_carries_the_record() -> None:
    seen = presence.record_user(1)
    record = presence.snapshot(limit=1).record
    assert record is not None
    assert record[0] == 1
    assert record[1] == pytest.approx(seen)


def test_bots_do_not_count_towards_the_record() -> None:
    presence.record_user(1)
    presence.record("bots", "Googlebot")
    presence.record("bots", "bingbot")
    record = presence.most_ever_online()
    assert record is not None and record[0] == 1


def test_hidden_users_move_no_record_kept_in_redis() -> None:
    presence.record_user(1)
    presence.record_user(2, hidden=True)
    record = presence.most_ever_online()
    assert record is not None and record[0] == 1


def test_resetting_the_record_forgets_it(
    seen_ago: Callable[[str, str, float], None],
) -> None:
    presence.record_user(1)
    seen_ago("users", "1", 1000)
    assert presence.reset_most_ever_online() is True
    assert presence.most_ever_online() is None
    assert presence.reset_most_ever_online() is False


def test_history_holds_the_number_online_at_each_minutes_first_record(
    clock: Clock,
) -> None:
    presence.record_user(1)
    presence.record_guest("192.0.2.1")
    clock.advance(60)
    now = presence.record_guest("192.0.2.2")
    assert presence.history().minutes[-1] == (int(now) // 60 * 60, 3)


def test_history_samples_a_minute_in_which_members_were_only_renewed(
    redis_client: Redis, seen_ago: Callable[[str, str, float], None]
) -> None:
    seen_ago("users", "1", 60)
    seen_ago("guests", "192.0.2.1", 60)
    now = presence.record_user(1)
    assert presence.history().minutes == [(int(now) // 60 * 60, 2)]


def test_history_keeps_at_most_one_field_per_minute_of_a_day(
    redis_client: Redis,
) -> None:
    for n in range(5):
        presence.record_guest(f"192.0.2.{n}")
    assert redis_client.hlen(presence.key("history")) == 1


def test_history_ignores_samples_older_than_a_day(
    redis_client: Redis, server_now: Callable[[], float]
) -> None:
    minute = int(server_now()) // 60
    old = minute - presence.HISTORY_MINUTES
    redis_client.hset(presence.key("history"), str(old % 1440), f"{old}:9")
    assert presence.history().minutes == []


def test_last_seen_many_reads_every_user_in_one_round_trip(
    warm_scripts: None, redis_commands: CommandCounter
) -> None:
    presence.record_user(1)
    presence.record_user(2, hidden=True)
    redis_commands.commands.clear()
    found = presence.last_seen_many([1, 2, 3])
    assert redis_commands.commands == ["EVALSHA"]
    assert set(found.seen) == {"1", "2"}
    assert found.hidden == frozenset({"2"})


def test_last_seen_many_reads_in_batches_in_one_round_trip(
    monkeypatch: pytest.MonkeyPatch, redis_commands: CommandCounter
) -> None:
    monkeypatch.setattr(whos_online.store.reads, "BATCH", 2)
    for pk in range(5):
        presence.record_user(pk)
    redis_commands.commands.clear()
    redis_commands.round_trips = 0
    assert len(presence.last_seen_many(range(5)).seen) == 5
    assert redis_commands.commands.count("EVALSHA") == 3
    assert redis_commands.round_trips == 1


def test_last_seen_many_of_nobody_still_knows_the_time(
    server_now: Callable[[], float],
) -> None:
    found = presence.last_seen_many([])
    assert found.seen == {}
    assert found.now == pytest.approx(server_now(), abs=5)


def test_logging_out_removes_the_user_from_both_sets(redis_client: Redis) -> None:
    presence.record_user(1)
    presence.record_user(2, hidden=True)
    assert presence.log_out("1", device="").removed
    assert presence.log_out("2", device="").hidden
    assert redis_client.zcard(presence.key("users")) == 0
    assert redis_client.zcard(presence.key("hidden")) == 0


@pytest.mark.parametrize("name", ["thread:42", "a", "x" * 100, "Forum.Help-2_b"])
def test_valid_room_names(name: str) -> None:
    assert presence.is_room_name(name)


@pytest.mark.parametrize("name", ["", "x" * 101, "with space", "é", "a/b", "{tag}", 42])
def test_invalid_room_names(name: object) -> None:
    assert not presence.is_room_name(name)


def test_room_keys_refuse_invalid_names() -> None:
    with pytest.raises(ValueError, match="Not a room name"):
        presence.key("users", "{evil}")


def test_room_keys_share_the_sites_hash_tag(isolated_presence: str) -> None:
    assert presence.key("users", "thread:1").startswith(f"{{{isolated_presence}}}:")


def test_a_room_lists_only_its_own_visitors() -> None:
    presence.record_in_room("thread:1", "users", "1")
    presence.record_in_room("thread:2", "users", "2")
    presence.record_in_room("thread:1", "guests", "192.0.2.1")
    snapshot = presence.snapshot(limit=10, room="thread:1")
    assert [m for m, _ in snapshot.users] == ["1"]
    assert (snapshot.counts.users, snapshot.counts.guests) == (1, 1)


def test_a_member_not_online_is_put_in_no_room() -> None:
    assert presence.enter_rooms("users", "1", "phone", ["thread:1"]) == []
    assert presence.snapshot(limit=10, room="thread:1").counts.total == 0


def test_rooms_lists_rooms_in_use() -> None:
    presence.record_in_room("thread:1", "users", "1")
    presence.record_in_room("thread:2", "bots", "Googlebot")
    assert sorted(presence.rooms()) == ["thread:1", "thread:2"]


def test_rooms_are_not_counted_site_wide() -> None:
    for n in range(30):
        presence.record_in_room(f"thread:{n}", "users", str(n))
    assert len(presence.rooms()) == 30


def test_room_sets_are_capped_like_the_site_sets(
    settings: SettingsWrapper, redis_client: Redis
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 2
    for n in range(4):
        presence.record_in_room("busy", "users", str(n))
    assert redis_client.zcard(presence.key("users", "busy")) == 2


def test_prune_covers_rooms(
    redis_client: Redis, server_now: Callable[[], float]
) -> None:
    presence.record_in_room("thread:1", "users", "1")
    stale = server_now() - 1000
    redis_client.zadd(presence.key("users", "thread:1"), {"d:phone 2": stale})
    redis_client.zadd(presence.key("users", "thread:gone"), {"d:phone 3": stale})
    removed = presence.prune().removed
    assert removed["room:thread:1:users"] == 1
    assert removed["room:thread:gone:users"] == 1
    assert presence.rooms() == ["thread:1"]
    assert not redis_client.exists(presence.key("users", "thread:gone"))
