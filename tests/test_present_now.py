"""Presence in a room means now: a device is in the rooms of the page it
opened last, a tab with the room page's script is in its rooms while it is
open, and nobody stays for the window after they went elsewhere."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.template import engines
from django.test import Client, RequestFactory
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis
from redis.exceptions import ResponseError

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online import api
from whos_online.conf import get_config
from whos_online.models import Visibility
from whos_online.store import get_store

pytestmark = pytest.mark.django_db

HERE = "/whos-online/here/"
TOKEN = re.compile(r'data-whos-online-here="([^"]+)"')


def reader(user: User | None = None, address: str = "192.0.2.10") -> Client:
    client = Client(REMOTE_ADDR=address)
    if user is not None:
        client.force_login(user)
    return client


def open_thread(client: Client, pk: int) -> str:
    """Open thread ``pk`` and give the token its page's script is handed."""
    html = client.get(f"/thread/{pk}/").content.decode()
    found = TOKEN.search(html)
    assert found is not None, html
    return found.group(1)


def tab_here(client: Client, tab: str, *tokens: str) -> int:
    return client.post(HERE, {"tab": tab, "room": list(tokens)}).status_code


def tab_gone(client: Client, tab: str) -> int:
    return client.post(HERE, {"tab": tab, "leave": "1"}).status_code


def viewing(room: str) -> list[str]:
    return sorted(str(online.user) for online in api.viewers(room))


def people_in(room: str) -> int:
    return api.room_counts([room])[room].people


def listed_in_room(html: str) -> str:
    listed = re.search(r'class="whos-online-users">(.*?)</p>', html, re.S)
    assert listed is not None, html
    return listed[1]


# A device, without any script: the rooms of its latest page.


def test_a_reader_who_opens_another_thread_leaves_the_old_one_at_once(
    alice: User,
) -> None:
    client = reader(alice)
    client.get("/thread/1/")
    client.get("/thread/2/")
    assert viewing("thread:1") == []
    assert viewing("thread:2") == ["alice"]


def test_a_guest_who_opens_another_thread_leaves_the_old_one_at_once() -> None:
    client = reader()
    client.get("/thread/1/")
    client.get("/thread/2/")
    assert people_in("thread:1") == 0
    assert people_in("thread:2") == 1


def test_a_reader_of_rooms_with_long_names_leaves_the_old_one_at_once() -> None:
    """A guard names the rooms it was recorded in up to a length, else keeps
    a hash of them: a move from those goes the longer way, as surely."""
    client, long = reader(), 10**70
    client.get(f"/thread/{long + 1}/")
    client.get(f"/thread/{long + 2}/")
    assert people_in(f"thread:{long + 1}") == 0
    assert people_in(f"thread:{long + 2}") == 1


def test_a_tab_of_the_browser_that_moved_it_meanwhile_leaves_no_trace(
    alice: User,
) -> None:
    """Two tabs share the browser's cookies: a page answered in one after
    the other's was sent, with the guard the browser had before, moves the
    device out of the rooms Redis holds it in, not only those its guard
    named."""
    first = reader(alice)
    first.get("/thread/1/")
    second = reader()
    second.cookies = type(first.cookies)(first.cookies)  # the jar as it was
    second.get("/thread/2/")  # sent later, answered first
    first.get("/thread/3/")  # its guard still says thread 1
    assert viewing("thread:2") == []
    assert viewing("thread:3") == ["alice"]


def connection_class() -> type[Any]:
    """The class of the store's connections to Redis."""
    pool = get_store().client.connection_pool
    connection = pool.get_connection()
    pool.release(connection)
    return type(connection)


def test_a_move_redis_refuses_answers_the_page_and_is_made_at_the_next_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = reader()
    client.get("/thread/1/")

    connection = connection_class()
    read = connection.read_response

    def refused(self: Any, *args: Any, **options: Any) -> None:
        read(self, *args, **options)  # the reply, read as an error
        raise ResponseError("OOM command not allowed")  # as at maxmemory

    with monkeypatch.context() as patched:
        patched.setattr(connection, "read_response", refused)
        assert client.get("/thread/2/").status_code == 200
    client.get("/thread/3/")
    counts = [people_in(f"thread:{n}") for n in (1, 2, 3)]
    assert counts == [0, 0, 1]


def test_a_client_other_than_redis_pys_own_moves_a_reader_too(
    settings: SettingsWrapper,
) -> None:
    """A cluster's client is no ``redis.Redis``: a move goes by its
    pipeline."""
    settings.WHOS_ONLINE_CONNECTION_FACTORY = "tests.test_present_now.not_redis"
    client = reader()
    client.get("/thread/1/")
    client.get("/thread/2/")
    assert (people_in("thread:1"), people_in("thread:2")) == (0, 1)


class NotRedis:
    """The store's client, seen through an object of another class."""

    def __init__(self, inner: Redis) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def not_redis() -> Any:
    from whos_online.connection import client_of_cache

    return NotRedis(client_of_cache(get_config().cache_alias))


def test_a_users_device_past_their_five_seen_latest_holds_no_place(
    alice: User,
) -> None:
    oldest = reader(alice)
    oldest.get("/thread/1/")
    for n in range(5):  # five more devices of hers, seen since
        reader(alice, f"192.0.2.{20 + n}").get("/")
    assert viewing("thread:1") == []
    oldest.get("/thread/2/")  # its guard still holds
    assert viewing("thread:2") == []


def test_a_guest_redis_no_longer_holds_online_is_put_in_no_room(
    redis_client: Redis,
) -> None:
    client = reader()
    client.get("/")
    redis_client.delete(presence.key("guests"))  # as if Redis lost it
    client.get("/thread/1/")  # its guard still holds
    assert people_in("thread:1") == 0


def test_a_reader_who_opens_a_page_in_no_room_leaves_the_thread(alice: User) -> None:
    client = reader(alice)
    client.get("/thread/1/")
    client.get("/")
    assert not api.is_viewing(alice, "thread:1")


def test_a_script_fetching_the_widget_does_not_move_its_reader(alice: User) -> None:
    client = reader(alice)
    client.get("/thread/1/")
    client.get("/whos-online/widget/", headers={"Sec-Fetch-Mode": "cors"})
    assert api.is_viewing(alice, "thread:1")


def test_a_reader_on_two_devices_is_in_the_room_of_each(alice: User) -> None:
    reader(alice).get("/thread/1/")
    reader(alice, "192.0.2.11").get("/thread/2/")
    assert viewing("thread:1") == ["alice"]
    assert viewing("thread:2") == ["alice"]


def test_a_user_on_two_devices_in_one_room_counts_once(alice: User) -> None:
    reader(alice).get("/thread/1/")
    reader(alice, "192.0.2.11").get("/thread/1/")
    assert api.room_counts(["thread:1"])["thread:1"].users == 1


def test_a_device_without_the_script_leaves_after_the_guard_period(
    alice: User, clock: Clock
) -> None:
    reader(alice).get("/thread/1/")
    clock.advance(get_config().guard_seconds - 5)
    assert api.is_viewing(alice, "thread:1")
    clock.advance(10)
    assert not api.is_viewing(alice, "thread:1")


# A tab, where the room page's script runs: while it is open.


def test_an_open_tab_keeps_its_reader_in_the_room_past_the_guard_period(
    alice: User, clock: Clock
) -> None:
    client = reader(alice)
    token = open_thread(client, 1)
    pinged = 0
    while pinged <= get_config().guard_seconds:
        assert tab_here(client, "tab-aaaaaaaa", token) == 204
        clock.advance(get_config().tab_seconds)
        pinged += get_config().tab_seconds
    assert api.is_viewing(alice, "thread:1")


def test_a_closed_tab_leaves_at_once(alice: User) -> None:
    client = reader(alice)
    token = open_thread(client, 1)
    tab_here(client, "tab-aaaaaaaa", token)
    assert tab_gone(client, "tab-aaaaaaaa") == 204
    assert not api.is_viewing(alice, "thread:1")
    assert people_in("thread:1") == 0


def test_a_tab_that_vanishes_leaves_after_the_tab_timeout(
    alice: User, clock: Clock
) -> None:
    client = reader(alice)
    tab_here(client, "tab-aaaaaaaa", open_thread(client, 1))
    clock.advance(get_config().tab_timeout - 5)
    assert api.is_viewing(alice, "thread:1")
    clock.advance(10)
    assert not api.is_viewing(alice, "thread:1")


def test_two_tabs_of_one_user_one_closed_keep_them_in_the_other_room(
    alice: User,
) -> None:
    client = reader(alice)
    tab_here(client, "tab-aaaaaaaa", open_thread(client, 1))
    tab_here(client, "tab-bbbbbbbb", open_thread(client, 2))
    assert viewing("thread:1") == viewing("thread:2") == ["alice"]
    tab_gone(client, "tab-bbbbbbbb")
    assert viewing("thread:1") == ["alice"]
    assert viewing("thread:2") == []


def test_two_tabs_in_one_room_count_their_user_once(alice: User) -> None:
    client = reader(alice)
    tab_here(client, "tab-aaaaaaaa", open_thread(client, 1))
    tab_here(client, "tab-bbbbbbbb", open_thread(client, 1))
    assert api.room_counts(["thread:1"])["thread:1"].users == 1
    tab_gone(client, "tab-aaaaaaaa")
    assert viewing("thread:1") == ["alice"]


def test_a_guests_closed_tab_leaves_at_once() -> None:
    client = reader()
    tab_here(client, "tab-aaaaaaaa", open_thread(client, 1))
    tab_gone(client, "tab-aaaaaaaa")
    assert people_in("thread:1") == 0


def test_a_tab_cannot_name_a_room_it_was_not_given(alice: User, bob: User) -> None:
    token_for_bob = open_thread(reader(bob, "192.0.2.20"), 3)
    client = reader(alice)
    assert tab_here(client, "tab-aaaaaaaa", token_for_bob) == 204
    assert viewing("thread:3") == ["bob"]


@pytest.mark.parametrize(
    "tab", ["", "short", "x" * 65, "tab id with spaces", "tab\x00nul", "²" * 12]
)
def test_a_tab_id_that_is_not_one_is_refused(alice: User, tab: str) -> None:
    client = reader(alice)
    assert tab_here(client, tab, open_thread(client, 1)) == 400


def test_the_here_endpoint_takes_only_posts() -> None:
    assert reader().get(HERE).status_code == 405


# What "now" means to the API.


def test_should_notify_notifies_someone_who_left_a_minute_ago(
    alice: User, bob: User, clock: Clock
) -> None:
    client = reader(bob)
    client.get("/thread/7/")
    client.get("/")
    clock.advance(60)
    assert api.should_notify([alice, bob], "thread:7") == [alice, bob]


def test_should_notify_skips_someone_reading_in_an_open_tab(
    alice: User, bob: User, clock: Clock
) -> None:
    client = reader(bob)
    token = open_thread(client, 7)
    tab_here(client, "tab-aaaaaaaa", token)
    clock.advance(get_config().guard_seconds + 1)
    tab_here(client, "tab-aaaaaaaa", token)
    assert api.should_notify([alice, bob], "thread:7") == [alice]


def test_a_tab_pinging_again_at_once_writes_nothing(
    alice: User, redis_commands: CommandCounter
) -> None:
    client = reader(alice)
    token = open_thread(client, 1)
    tab_here(client, "tab-aaaaaaaa", token)
    redis_commands.reset()
    assert tab_here(client, "tab-aaaaaaaa", token) == 204
    assert redis_commands.round_trips == 0


def test_a_tabs_next_ping_writes_nothing_while_its_place_lasts_two_more_pings(
    alice: User, clock: Clock, redis_commands: CommandCounter
) -> None:
    client = reader(alice)
    token = open_thread(client, 1)
    tab_here(client, "tab-aaaaaaaa", token)
    clock.advance(get_config().tab_seconds)
    tab_here(client, "tab-bbbbbbbb", token)  # another tab: the clock is read
    redis_commands.reset()
    assert tab_here(client, "tab-aaaaaaaa", token) == 204
    assert redis_commands.round_trips == 0


def test_a_background_tab_pinging_once_a_minute_stays_in_its_room(
    alice: User, clock: Clock
) -> None:
    client = reader(alice)
    token = open_thread(client, 1)
    for _ in range(15):  # a browser runs a background tab's timers once a minute
        tab_here(client, "tab-aaaaaaaa", token)
        clock.advance(60)
        assert api.is_viewing(alice, "thread:1")


def test_a_tab_back_from_the_back_forward_cache_is_in_its_room_again(
    alice: User,
) -> None:
    client = reader(alice)
    token = open_thread(client, 1)
    tab_here(client, "tab-aaaaaaaa", token)
    tab_gone(client, "tab-aaaaaaaa")  # pagehide
    tab_here(client, "tab-aaaaaaaa", token)  # pageshow, restored
    assert api.is_viewing(alice, "thread:1")


def test_a_tab_closing_again_at_once_writes_nothing(
    alice: User, redis_commands: CommandCounter
) -> None:
    client = reader(alice)
    tab_here(client, "tab-aaaaaaaa", open_thread(client, 1))
    tab_gone(client, "tab-aaaaaaaa")
    redis_commands.reset()
    assert tab_gone(client, "tab-aaaaaaaa") == 204
    assert redis_commands.round_trips == 0


def test_a_crawler_pinging_a_tab_is_in_no_room() -> None:
    client = Client(REMOTE_ADDR="192.0.2.30", HTTP_USER_AGENT="Googlebot/2.1")
    token = open_thread(client, 1)
    assert tab_here(client, "tab-aaaaaaaa", token) == 204
    assert tab_gone(client, "tab-aaaaaaaa") == 204
    assert people_in("thread:1") == 0


def test_a_page_listing_a_room_it_is_not_in_keeps_no_tab_there() -> None:
    request = RequestFactory().get("/")
    request.user = AnonymousUser()
    template = engines["django"].from_string(
        "{% load whos_online %}{% whos_online room='thread:9' refresh=30 %}"
    )
    assert "data-whos-online-here" not in template.render({}, request)


def test_a_rooms_box_says_it_lists_who_has_the_page_open_now(alice: User) -> None:
    html = reader(alice).get("/thread/1/").content.decode()
    assert "Readers with this page open now." in html
    assert "over the past" not in html


def test_a_guest_who_logs_in_on_a_thread_is_there_once_as_the_user(
    alice: User,
) -> None:
    client = reader()
    client.get("/thread/1/")
    client.get(f"/login/{alice.pk}/")
    client.get("/thread/1/")
    counts = api.room_counts(["thread:1"])["thread:1"]
    assert (counts.users, counts.guests) == (1, 0)


def test_a_reader_who_just_opened_a_thread_is_listed_to_the_next_at_once(
    alice: User, bob: User, settings: SettingsWrapper
) -> None:
    """A process shares a room's snapshot for WHOS_ONLINE_SNAPSHOT_MAX_AGE,
    but the process that puts a reader in the room changes it at once: found
    in a trial, where the next reader missed bob for a whole refresh."""
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 2
    alices = reader(alice)
    alices.get("/")  # online already: her next page may share a snapshot
    reader(bob, "192.0.2.20").get("/thread/3/")
    assert "bob" in listed_in_room(alices.get("/thread/3/").content.decode())


def test_a_reader_who_moved_on_is_gone_from_the_next_readers_list_at_once(
    alice: User, bob: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 2
    client = reader(bob, "192.0.2.20")
    client.get("/thread/3/")
    alices = reader(alice)
    alices.get("/thread/3/")  # takes and shares the room's snapshot
    client.get("/")
    assert "bob" not in listed_in_room(alices.get("/thread/3/").content.decode())


def test_the_next_reader_of_a_room_someone_joined_needs_no_read_of_it(
    alice: User, bob: User, settings: SettingsWrapper, redis_commands: CommandCounter
) -> None:
    """The process that puts a reader in a room changes its snapshot of the
    room as its write did, rather than reading the room again."""
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 60
    alices = reader(alice)
    alices.get("/thread/3/")  # takes and shares the room's snapshot
    reader(bob, "192.0.2.20").get("/thread/3/")
    redis_commands.reset()
    html = alices.get("/thread/3/").content.decode()
    assert "bob" in listed_in_room(html)
    assert redis_commands.round_trips == 0


def test_the_next_reader_of_a_room_someone_left_needs_no_read_of_it(
    alice: User, bob: User, settings: SettingsWrapper, redis_commands: CommandCounter
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 60
    bobs = reader(bob, "192.0.2.20")
    bobs.get("/thread/3/")
    alices = reader(alice)
    alices.get("/thread/3/")  # takes and shares the room's snapshot
    bobs.get("/thread/4/")
    redis_commands.reset()
    html = alices.get("/thread/3/").content.decode()
    assert "bob" not in listed_in_room(html)
    assert redis_commands.round_trips == 0


def test_a_room_listed_in_part_is_read_again_after_someone_joins_it(
    alice: User, bob: User, settings: SettingsWrapper
) -> None:
    """Whether a reader was in a room already cannot be told from a
    snapshot that names only some of its readers: the count stays true."""
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 60
    settings.WHOS_ONLINE_MAX_NAMES = 1
    for n in range(3):
        reader(address=f"192.0.2.{40 + n}").get("/thread/3/")
    alices = reader(alice)
    alices.get("/thread/3/")  # a snapshot naming 1 of 4
    reader(bob, "192.0.2.20").get("/thread/3/")
    here = api.room_counts(["thread:3"])["thread:3"].people
    assert f"{here} visitors online" in alices.get("/thread/3/").content.decode()


def test_a_guest_moving_between_rooms_is_counted_once_in_the_next_readers_page(
    alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 60
    guest = reader(address="192.0.2.50")
    guest.get("/thread/3/")
    alices = reader(alice)
    alices.get("/thread/3/")
    guest.get("/thread/4/")
    guest.get("/thread/3/")
    here = api.room_counts(["thread:3"])["thread:3"].people
    assert f"{here} visitors online" in alices.get("/thread/3/").content.decode()


def test_a_reader_of_a_room_listed_in_part_is_counted_once_in_their_own_page(
    alice: User, bob: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 0
    settings.WHOS_ONLINE_MAX_NAMES = 1
    alices = reader(alice)
    alices.get("/thread/3/")
    reader(bob, "192.0.2.20").get("/thread/3/")  # newer: the one name listed
    html = alices.get("/thread/3/").content.decode()
    assert "2 visitors online" in html


def staff_reader(django_user_model: type[User]) -> Client:
    staff = django_user_model.objects.create_user("sam", is_staff=True)
    return reader(staff, "192.0.2.60")


def test_staff_reading_a_room_see_an_invisible_reader_come_in_at_once(
    django_user_model: type[User], bob: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 60
    Visibility.objects.create(user=bob, invisible=True)
    staff = staff_reader(django_user_model)
    staff.get("/thread/3/")  # takes and shares the room's snapshot for staff
    reader(bob, "192.0.2.20").get("/thread/3/")
    listed = listed_in_room(staff.get("/thread/3/").content.decode())
    assert "bob" in listed and "whos-online-hidden" in listed


def test_a_reader_whose_choice_changed_elsewhere_is_shown_as_they_chose_at_once(
    django_user_model: type[User], bob: User, settings: SettingsWrapper, clock: Clock
) -> None:
    """Bob appeared offline, then chose otherwise in another process: his
    next record reads his choice, and the room's snapshot, which held him
    hidden, is read again."""
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 60
    Visibility.objects.create(user=bob, invisible=True)
    bobs = reader(bob, "192.0.2.20")
    bobs.get("/thread/3/")
    staff = staff_reader(django_user_model)
    staff.get("/thread/3/")  # holds bob hidden
    Visibility.objects.filter(user=bob).update(invisible=False)
    clock.advance(get_config().guard_seconds + 1)  # his next page records him
    bobs.get("/thread/3/")
    listed = listed_in_room(staff.get("/thread/3/").content.decode())
    assert "bob" in listed and "whos-online-hidden" not in listed
