"""WHOS_ONLINE_SHARDS: each set split by a hash of the member, each shard
under a hash tag of its own, and every read adding the shards up."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.test import AsyncClient, Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis
from redis.client import Pipeline
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot
from redis.exceptions import ConnectionError as RedisConnectionError

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online.conf import get_config
from whos_online.store import get_store
from whos_online.store.keys import Shard, shard_tags

GUESTS = [f"192.0.2.{n}" for n in range(1, 41)]


@pytest.fixture
def shards(settings: SettingsWrapper) -> tuple[Shard, ...]:
    settings.WHOS_ONLINE_SHARDS = 4
    return get_store().shards


def members(redis_client: Redis, shard: Shard, kind: str) -> set[str]:
    names: list[bytes] = redis_client.zrange(shard.key(kind), 0, -1)  # type: ignore[assignment]
    return {name.decode() for name in names}


@pytest.fixture
def shard_down(isolated_presence: str) -> Iterator[Callable[[Shard], None]]:
    """Make every command that touches a shard's keys fail, as when the
    master holding it is down; a pipeline with such a command fails whole,
    as redis-py's cluster pipeline does."""

    def take_down(shard: Shard) -> None:
        dead = f"{{{shard.tag}}}:".encode()

        def touches(args: tuple[Any, ...]) -> bool:
            return any(
                dead in (a if isinstance(a, bytes) else str(a).encode()) for a in args
            )

        command, pipeline = Redis.execute_command, Pipeline.execute

        def failing(self: Redis, *args: Any, **options: Any) -> Any:
            if touches(args):
                raise RedisConnectionError("Connection refused")
            return command(self, *args, **options)  # type: ignore[no-untyped-call]

        def failing_pipeline(self: Pipeline, raise_on_error: bool = True) -> Any:
            if any(touches(args) for args, _ in self.command_stack):
                raise RedisConnectionError("Connection refused")
            return pipeline(self, raise_on_error)

        patch.setattr(Redis, "execute_command", failing)
        patch.setattr(Pipeline, "execute", failing_pipeline)

    with pytest.MonkeyPatch.context() as patch:  # undone before the clean-up
        yield take_down


def test_one_shard_keeps_every_key_under_the_prefix() -> None:
    assert [shard.tag for shard in get_store().shards] == [get_config().key_prefix]
    assert presence.key("users") == f"{{{get_config().key_prefix}}}:users"


def test_each_shard_tag_falls_in_its_own_equal_share_of_the_slots() -> None:
    tags = shard_tags("site", 6)
    share = REDIS_CLUSTER_HASH_SLOTS / 6
    assert [int(key_slot(tag.encode()) // share) for tag in tags] == list(range(6))


def test_six_shards_fall_two_on_each_master_of_a_three_master_cluster() -> None:
    # The runs of slots redis-cli --cluster create gives three masters.
    masters = [range(0, 5461), range(5461, 10923), range(10923, 16384)]
    for n in range(1000):  # "site527" put three on one when tags hugged edges
        slots = [key_slot(tag.encode()) for tag in shard_tags(f"site{n}", 6)]
        assert [sum(s in run for s in slots) for run in masters] == [2, 2, 2]


def test_a_member_is_always_kept_in_the_same_shard(
    shards: tuple[Shard, ...], settings: SettingsWrapper
) -> None:
    before = [get_store().shard_of(guest).tag for guest in GUESTS]
    settings.WHOS_ONLINE_MAX_NAMES = 7  # a new Config, as in another process
    assert [get_store().shard_of(guest).tag for guest in GUESTS] == before


def test_members_are_spread_over_every_shard(
    shards: tuple[Shard, ...], redis_client: Redis
) -> None:
    for guest in GUESTS:
        presence.record_guest(guest)
    held = [members(redis_client, shard, "guests") for shard in shards]
    assert all(held)
    assert set().union(*held) == set(GUESTS)
    assert sum(len(guests) for guests in held) == len(GUESTS)


def test_counts_are_the_sum_of_the_shards(shards: tuple[Shard, ...]) -> None:
    for guest in GUESTS:
        presence.record_guest(guest)
    for pk in range(10):
        presence.record_user(pk)
    counts = presence.snapshot(0).counts
    assert (counts.users, counts.guests, counts.people) == (10, 40, 50)


def test_the_list_is_the_newest_of_every_shard_first(
    shards: tuple[Shard, ...],
) -> None:
    for pk in range(12):
        presence.record_user(pk)
    listed = presence.snapshot(5).users
    assert [pk for pk, _ in listed] == ["11", "10", "9", "8", "7"]


def test_a_snapshot_raises_the_record_from_the_summed_counts(
    shards: tuple[Shard, ...],
) -> None:
    for guest in GUESTS:
        presence.record_guest(guest)
    snapshot = presence.snapshot(0)
    assert snapshot.record is not None and snapshot.record[0] == 40
    assert snapshot.today.most_online == 40
    assert presence.most_ever_online() == snapshot.record


@pytest.mark.django_db
def test_a_peak_shown_between_two_minutes_figures_is_kept(
    shards: tuple[Shard, ...],
) -> None:
    """Reads never write: a page that showed more people online than the
    site's figures held has them kept after it, so what was shown as the
    most ever never falls back, as with one shard."""
    for pk in range(12):
        presence.record_user(pk)
    shown = Client().get("/whos-online/online.json").json()
    for pk in range(12):
        presence.log_out(str(pk), "")
    after = Client().get("/whos-online/online.json").json()
    most = shown["counts"]["people"]  # the twelve, and the guest reading
    assert (most, after["counts"]["people"]) == (13, 1)
    assert shown["record"]["count"] == after["record"]["count"] == most
    assert shown["today"]["most_online"] == after["today"]["most_online"] == most


@pytest.mark.django_db(transaction=True)
def test_an_async_page_keeps_the_peak_it_showed(
    shards: tuple[Shard, ...],
) -> None:
    for pk in range(12):
        presence.record_user(pk)
    async_to_sync(AsyncClient().get)("/whos-online/online.json")
    for pk in range(12):
        presence.log_out(str(pk), "")
    after = Client().get("/whos-online/online.json").json()
    assert after["record"]["count"] == 13  # the twelve, and the guest reading


def test_with_no_peak_seen_nothing_is_kept(
    shards: tuple[Shard, ...], redis_commands: CommandCounter
) -> None:
    get_store().keep_peak_seen()
    assert redis_commands.round_trips == 0


def test_todays_visitors_are_added_up(shards: tuple[Shard, ...]) -> None:
    for guest in GUESTS:
        presence.record_guest(guest)
    for pk in range(10):
        presence.record_user(pk)
    today = presence.snapshot(0).today
    assert (today.users, today.guests) == (10, 40)


def test_the_history_adds_up_the_shards(
    shards: tuple[Shard, ...], clock: Clock
) -> None:
    for guest in GUESTS:
        presence.record_guest(guest)
    clock.advance(60)
    for guest in GUESTS:  # each shard's first record of the minute samples it
        presence.record_guest(guest)
    history = presence.history()
    assert history.minutes[-1][1] == 40
    assert history.days[-1][1] == 40


def test_last_seen_asks_the_shards_each_user_is_in(
    shards: tuple[Shard, ...],
) -> None:
    times = {str(pk): presence.record_user(pk) for pk in range(8)}
    presence.record_user(8, hidden=True)
    found = presence.last_seen_many([*range(9), 99])
    assert {pk: found.seen[pk] for pk in times} == times
    assert found.hidden == {"8"}
    assert "99" not in found.seen


def test_prune_removes_the_stale_members_of_every_shard(
    shards: tuple[Shard, ...], redis_client: Redis, server_now: Callable[[], float]
) -> None:
    stale = server_now() - get_config().window - 1
    room = get_store().shard_of("0").room_key("thread:1", "users")
    presence.record_in_room("thread:1", "users", "0")
    redis_client.zadd(room, {"0": stale})
    for pk in range(8):
        users = get_store().shard_of(str(pk)).key("users")
        redis_client.zadd(users, {str(pk): stale})
    presence.record_user(100)
    pruned = presence.prune()
    assert sorted(pruned.users_left) == [str(pk) for pk in range(8)]
    assert pruned.removed["room:thread:1:users"] == 1
    assert presence.snapshot(0).counts.users == 1


def test_a_room_adds_up_its_members_in_every_shard(
    shards: tuple[Shard, ...],
) -> None:
    for pk in range(8):
        presence.record_in_room("thread:1", "users", str(pk))
    room = presence.snapshot(10, room="thread:1")
    assert room.counts.users == 8
    assert len(room.users) == 8
    assert room.record is None
    assert presence.rooms() == ["thread:1"]


def test_logging_out_takes_the_user_off_their_shard(
    shards: tuple[Shard, ...],
) -> None:
    for pk in range(4):
        presence.record_user(pk)
    presence.record_in_room("thread:1", "users", "3")  # from a device of its own
    assert presence.log_out("3", device="test-thread:1").removed
    assert [pk for pk, _ in presence.snapshot(10).users] == ["2", "1", "0"]
    assert presence.snapshot(10, room="thread:1").counts.users == 0


def test_choosing_to_appear_offline_moves_the_user_in_their_shard(
    shards: tuple[Shard, ...],
) -> None:
    for pk in range(4):
        presence.record_user(pk)
    presence.record_in_room("thread:1", "users", "2")
    presence.set_invisible("2", True)
    assert presence.snapshot(10, hidden_limit=10).hidden[0][0] == "2"
    assert presence.snapshot(0, room="thread:1").counts.hidden == 1


def test_logging_in_takes_the_guest_off_another_shard(
    shards: tuple[Shard, ...], redis_client: Redis
) -> None:
    guest = next(
        g for g in GUESTS if get_store().shard_of(g) != get_store().shard_of("1")
    )
    presence.record_guest(guest)
    presence.record("users", "1", left_guest=guest)
    assert presence.snapshot(0).counts.people == 1


def test_a_shard_that_is_down_leaves_the_others_counted(
    shards: tuple[Shard, ...], shard_down: Callable[[Shard], None]
) -> None:
    for guest in GUESTS:
        presence.record_guest(guest)
    dead = shards[0]
    alive = sum(get_store().shard_of(g) != dead for g in GUESTS)
    shard_down(dead)
    assert presence.snapshot(0).counts.guests == alive
    assert get_store().state.shard_breakers[0].is_open
    assert not get_store().state.breaker.is_open


def test_a_shard_that_is_down_is_not_asked_again_until_the_backoff(
    shards: tuple[Shard, ...],
    shard_down: Callable[[Shard], None],
    redis_commands: CommandCounter,
) -> None:
    presence.record_guest(GUESTS[0])
    shard_down(shards[0])
    presence.snapshot(0)
    redis_commands.commands.clear()
    presence.snapshot(0)
    # The 3 other shards' scripts, and the record and today's peak.
    assert redis_commands.commands == ["EVALSHA"] * 3 + ["HMGET", "HGET"]


def test_no_shard_answering_is_a_redis_failure(
    shards: tuple[Shard, ...], shard_down: Callable[[Shard], None]
) -> None:
    for shard in shards:
        shard_down(shard)
    assert get_store().snapshot(0) is None


def test_visitors_of_other_shards_are_recorded_while_one_is_down(
    shards: tuple[Shard, ...],
    shard_down: Callable[[Shard], None],
    client: Client,
) -> None:
    dead = get_store().shard_of("192.0.2.1")
    shard_down(dead)
    client.get("/", REMOTE_ADDR="192.0.2.1")
    other = next(g for g in GUESTS if get_store().shard_of(g) != dead)
    client.get("/", REMOTE_ADDR=other)
    assert get_store().breaker_of("192.0.2.1").is_open
    assert not get_store().breaker_of(other).is_open
    guests = presence.snapshot(0, guest_limit=10).guests
    assert [guest for guest, _ in guests] == [other]


def test_a_page_lists_users_from_every_shard(
    shards: tuple[Shard, ...],
    django_user_model: type[User],
    client: Client,
) -> None:
    for n in range(6):
        user = django_user_model.objects.create_user(f"user{n}", password="pw")
        presence.record_user(user.pk)
    page = client.get("/widget/").content.decode()
    for n in range(6):
        assert f"user{n}" in page


def test_a_guard_holds_while_another_shard_loses_its_data(
    shards: tuple[Shard, ...], redis_client: Redis, browser: Client
) -> None:
    browser.get("/", REMOTE_ADDR="192.0.2.1")
    own = get_store().shard_of("192.0.2.1")
    other = next(shard for shard in shards if shard != own)
    redis_client.delete(other.key("meta"))
    presence.sync_clock()
    assert browser.get("/", REMOTE_ADDR="192.0.2.1").cookies == {}  # guarded


def test_a_guard_is_void_once_its_own_shard_loses_its_data(
    shards: tuple[Shard, ...], redis_client: Redis, browser: Client
) -> None:
    browser.get("/", REMOTE_ADDR="192.0.2.1")
    redis_client.delete(get_store().shard_of("192.0.2.1").key("meta"))
    presence.sync_clock()
    cookies = browser.get("/", REMOTE_ADDR="192.0.2.1").cookies
    assert get_config().guard_cookie_name in cookies


def test_scripts_redis_forgot_are_loaded_again_for_a_read_of_every_shard(
    shards: tuple[Shard, ...], redis_client: Redis
) -> None:
    presence.record_guest(GUESTS[0])
    redis_client.script_flush()
    assert presence.snapshot(0).counts.guests == 1


def test_a_guard_from_before_the_shards_changed_does_not_hold(
    settings: SettingsWrapper, browser: Client
) -> None:
    browser.get("/", REMOTE_ADDR="192.0.2.1")
    settings.WHOS_ONLINE_SHARDS = 4
    response = browser.get("/", REMOTE_ADDR="192.0.2.1")
    assert get_config().guard_cookie_name in response.cookies


def test_snapshots_count_the_shards_while_the_record_cannot_be_reached(
    shards: tuple[Shard, ...], shard_down: Callable[[Shard], None]
) -> None:
    for guest in GUESTS:
        presence.record_guest(guest)
    shard_down(Shard(-1, get_config().key_prefix))  # the site's own keys
    first, second = presence.snapshot(0), presence.snapshot(0)
    for snapshot in (first, second):  # the second does not ask
        assert (snapshot.counts.guests, snapshot.record) == (len(GUESTS), None)
        assert snapshot.today.most_online == len(GUESTS)  # at least
    assert get_store().state.record_breaker.is_open
    assert not get_store().state.breaker.is_open


def test_a_shard_records_while_the_sites_own_keys_cannot_be_reached(
    shards: tuple[Shard, ...], shard_down: Callable[[Shard], None], clock: Clock
) -> None:
    shard_down(Shard(-1, get_config().key_prefix))  # the site's own keys
    for guest in GUESTS[:2]:  # the first keeps the minute's figures, in vain
        presence.record_guest(guest)
    clock.advance(60)
    presence.record_guest(GUESTS[2])  # the site's breaker is open: not asked
    assert presence.snapshot(0).counts.guests == 3
    assert not get_store().breaker_of(GUESTS[0]).is_open
