"""Presence in rooms: the decorator, the mixin and the room tokens."""

from __future__ import annotations

import logging
import re

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import AnonymousUser, Group, User
from django.core.checks import run_checks
from django.db import connection
from django.template import engines
from django.test import AsyncClient, Client
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.conftest import CommandCounter
from whos_online import checks, url_checks
from whos_online.conf import get_config
from whos_online.store import get_store
from whos_online.store.places import DEVICES_PER_USER, ROOMS_IN_TABS
from whos_online.tokens import room_from_token, room_token

pytestmark = pytest.mark.django_db


def room_members(redis_client: Redis, kind: str, room: str) -> list[bytes]:
    found = redis_client.zrange(presence.key(kind, room), 0, -1)
    return [member.encode() for member in presence.members_of(found)]  # type: ignore[arg-type]


def test_the_decorator_records_the_visitor_in_the_formatted_room(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.force_login(alice)
    browser.get("/thread/42/")
    assert room_members(redis_client, "users", "thread:42") == [str(alice.pk).encode()]


def test_the_decorator_records_guests_too(browser: Client, redis_client: Redis) -> None:
    browser.get("/thread/42/", REMOTE_ADDR="192.0.2.4")
    assert room_members(redis_client, "guests", "thread:42") == [b"192.0.2.4"]


def test_the_decorator_works_on_async_views(
    browser: Client, redis_client: Redis
) -> None:
    assert browser.get("/async-thread/7/", REMOTE_ADDR="192.0.2.4").status_code == 200
    assert room_members(redis_client, "guests", "thread:7") == [b"192.0.2.4"]


def test_the_mixin_records_the_visitor_in_the_formatted_room(
    browser: Client, redis_client: Redis
) -> None:
    browser.get("/topic/3/", REMOTE_ADDR="192.0.2.4")
    assert room_members(redis_client, "guests", "topic:3") == [b"192.0.2.4"]


def test_every_visit_to_a_room_is_recorded_despite_the_guard(
    browser: Client, redis_client: Redis
) -> None:
    browser.get("/thread/1/")
    browser.get("/thread/2/")
    assert room_members(redis_client, "guests", "thread:2") == [b"127.0.0.1"]


@pytest.mark.parametrize("url", ["/bad-room/", "/unformattable-room/"])
def test_an_invalid_room_name_is_logged_and_the_page_served(
    browser: Client, caplog: pytest.LogCaptureFixture, url: str
) -> None:
    with caplog.at_level(logging.WARNING, logger="whos_online"):
        assert browser.get(url).status_code == 200
    assert "invalid room name" in caplog.text
    assert presence.rooms() == []


def test_a_guest_without_an_address_is_not_recorded_in_the_room(
    browser: Client,
) -> None:
    assert browser.get("/thread/1/", REMOTE_ADDR="nonsense").status_code == 200
    assert presence.rooms() == []


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_a_room_page_is_served(browser: Client) -> None:
    assert browser.get("/thread/1/").status_code == 200


def test_the_widget_lists_the_room(browser: Client, alice: User, bob: User) -> None:
    presence.record_in_room("thread:1", "users", str(bob.pk))
    presence.record_user(alice.pk)
    html = browser.get("/thread/1/", REMOTE_ADDR="192.0.2.9").content.decode()
    assert "bob" in html
    assert "alice" not in html


def test_a_room_token_gives_the_room_back_to_its_viewer(alice: User) -> None:
    assert room_from_token(room_token("thread:1", alice), alice) == "thread:1"


def test_a_room_token_works_for_anonymous_viewers() -> None:
    token = room_token("thread:1", AnonymousUser())
    assert room_from_token(token, AnonymousUser()) == "thread:1"
    assert room_from_token(token, None) == "thread:1"


def test_a_room_token_is_refused_to_another_viewer(alice: User, bob: User) -> None:
    assert room_from_token(room_token("thread:1", alice), bob) is None
    assert room_from_token(room_token("thread:1", alice), AnonymousUser()) is None


@pytest.mark.parametrize("token", ["", "thread:1", "garbage:xyz", "é" * 50])
def test_a_forged_room_token_is_refused(alice: User, token: str) -> None:
    assert room_from_token(token, alice) is None


def test_a_token_for_an_invalid_room_is_refused(alice: User) -> None:
    assert room_from_token(room_token("no spaces", alice), alice) is None


def test_a_model_instance_names_its_room_from_its_label_and_key(
    browser: Client, redis_client: Redis
) -> None:
    topic = Group.objects.create(name="Rules")
    html = browser.get(f"/forum/{topic.pk}/?widget=instance").content.decode()
    room = f"auth.group:{topic.pk}"
    assert room_members(redis_client, "guests", room) == [b"127.0.0.1"]
    assert "1 visitor online" in html  # the reader, on their first visit


def test_a_site_names_a_room_by_url_name_in_settings(
    browser: Client, redis_client: Redis, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": "topic:{pk}"}
    topic = Group.objects.create(name="Rules")
    browser.get(f"/forum/{topic.pk}/")
    assert room_members(redis_client, "guests", f"topic:{topic.pk}") == [b"127.0.0.1"]


def test_page_room_names_the_room_the_page_records(
    browser: Client, alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": "topic:{pk}"}
    topic = Group.objects.create(name="Rules")
    browser.force_login(alice)
    html = browser.get(f"/forum/{topic.pk}/?widget=page").content.decode()
    assert "<bdi>alice</bdi>" in html
    assert presence.rooms() == [f"topic:{topic.pk}"]


def test_a_reader_coming_back_is_counted_once(browser: Client, alice: User) -> None:
    topic = Group.objects.create(name="Rules")
    browser.force_login(alice)
    browser.get(f"/forum/{topic.pk}/?widget=instance")
    html = browser.get(f"/forum/{topic.pk}/?widget=instance").content.decode()
    assert "1 visitor online" in html
    assert html.count("<bdi>alice</bdi>") == 1


def test_a_guest_coming_back_is_counted_once(browser: Client) -> None:
    topic = Group.objects.create(name="Rules")
    browser.get(f"/forum/{topic.pk}/?widget=instance")
    html = browser.get(f"/forum/{topic.pk}/?widget=instance").content.decode()
    assert "1 visitor online" in html


def test_pages_that_do_not_exist_record_no_room(
    browser: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": "topic:{pk}"}
    for pk in range(1000, 1200):
        assert browser.get(f"/forum/{pk}/").status_code == 404
    assert presence.rooms() == []
    topic = Group.objects.create(name="Rules")
    browser.get(f"/forum/{topic.pk}/")
    assert presence.rooms() == [f"topic:{topic.pk}"]


def test_pages_that_do_not_exist_move_nothing_the_process_keeps(
    browser: Client,
) -> None:
    browser.get("/thread/1/")  # a page in a room: the process keeps its room
    kept = dict(get_store().state.pages)
    for pk in range(5000):
        assert browser.get(f"/missing-thread/{pk}/").status_code == 404
    assert get_store().state.pages == kept


def test_a_page_of_a_very_long_path_is_in_its_room_and_kept_by_no_process(
    browser: Client,
) -> None:
    browser.get("/thread/" + "0" * 300 + "7/")
    assert presence.rooms() == ["thread:7"]
    assert not get_store().state.pages


def test_a_decorated_view_that_answers_404_records_no_room(browser: Client) -> None:
    assert browser.get("/missing-thread/7/").status_code == 404
    assert presence.rooms() == []


def test_a_room_is_recorded_only_after_the_view_succeeded(
    browser: Client, redis_client: Redis
) -> None:
    topic = Group.objects.create(name="Rules")
    browser.get(f"/forum/{topic.pk}/?widget=instance")
    browser.get(f"/forum/{topic.pk + 1}/?widget=instance")
    assert presence.rooms() == [f"auth.group:{topic.pk}"]


def test_a_hidden_reader_is_counted_once_in_their_room(
    browser: Client, django_user_model: type[User], settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "separate"
    settings.WHOS_ONLINE_IS_HIDDEN = "tests.hiding.is_ghost"
    ghost = django_user_model.objects.create_user("ghost")
    topic = Group.objects.create(name="Rules")
    browser.force_login(ghost)
    browser.get(f"/forum/{topic.pk}/?widget=instance")
    html = browser.get(f"/forum/{topic.pk}/?widget=instance").content.decode()
    assert "1 hidden user" in html
    assert "ghost" not in html


def test_a_room_page_through_the_async_middleware_records_its_reader(
    redis_client: Redis,
) -> None:
    response = async_to_sync(AsyncClient().get)("/async-thread/7/")
    assert response.status_code == 200
    assert room_members(redis_client, "guests", "thread:7") == [b"127.0.0.1"]


def test_page_room_is_none_where_the_page_is_in_no_room() -> None:
    assert (
        engines["django"]
        .from_string("{% load whos_online %}{% page_room as room %}{{ room }}")
        .render({})
        == "None"
    )


def test_rooms_that_are_not_a_dict_are_e007_and_pages_are_served(
    browser: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_ROOMS = ["board:topic"]
    assert [m.id for m in checks.check_settings()] == ["whos_online.E007"]
    topic = Group.objects.create(name="Rules")
    assert browser.get(f"/forum/{topic.pk}/").status_code == 200
    assert get_store().rooms() is None  # presence is off until it is fixed


def test_a_rooms_key_that_is_not_a_url_name_is_w007(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": "topic:{pk}", "board:topik": "x"}
    (message,) = url_checks.check_rooms()
    assert message.id == "whos_online.W007"
    assert "'board:topik'" in message.msg


def test_rooms_that_are_not_a_dict_are_left_to_e007(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_ROOMS = ["board:topic"]
    assert url_checks.check_rooms() == []


def test_the_rooms_check_runs_with_manage_py_check(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_ROOMS = {"nowhere": "topic:{pk}"}
    assert "whos_online.W007" in [m.id for m in run_checks()]


@pytest.mark.usefixtures("warm_scripts")
def test_a_guarded_page_of_the_same_room_costs_no_round_trip(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.get("/topic/1/")
    redis_commands.commands.clear()
    browser.get("/topic/1/")
    assert redis_commands.commands == []


@pytest.mark.usefixtures("warm_scripts")
def test_a_guarded_page_of_another_room_records_it_once(
    browser: Client, redis_client: Redis, redis_commands: CommandCounter
) -> None:
    browser.get("/topic/1/")
    redis_commands.reset()
    browser.get("/topic/2/")
    browser.get("/topic/2/")
    assert redis_commands.round_trips == 1
    assert "EVALSHA" not in redis_commands.commands  # plain commands
    assert room_members(redis_client, "guests", "topic:2") == [b"127.0.0.1"]


def test_a_guard_that_learns_a_room_keeps_its_expiry(browser: Client) -> None:
    issued = browser.get("/").cookies[get_config().guard_cookie_name].value
    renewed = browser.get("/topic/1/").cookies[get_config().guard_cookie_name].value
    assert renewed != issued
    assert renewed.partition(".")[0] == issued.partition(".")[0]


def test_a_view_put_in_a_room_for_one_url_leaves_its_other_urls_alone(
    browser: Client, caplog: pytest.LogCaptureFixture
) -> None:
    browser.get("/post/4/")  # the same view, in no room
    browser.get("/shared-topic/5/")
    assert presence.rooms() == ["topic:5"]
    assert "invalid room name" not in caplog.text


def test_a_browsing_visitor_entering_a_room_sees_themselves_in_a_shared_snapshot(
    settings: SettingsWrapper, alice: User, bob: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 2.0  # the default
    first = Client()
    first.force_login(alice)
    first.get("/thread/1/")
    second = Client()
    second.force_login(bob)
    second.get("/")  # browsing the site, guarded, before entering the room
    assert "bob" in second.get("/thread/1/").content.decode()


def test_a_reader_who_appears_offline_is_not_listed_in_their_room_box(
    browser: Client, alice: User
) -> None:
    topic = Group.objects.create(name="Rules")
    browser.force_login(alice)
    browser.post("/whos-online/visibility/", {"invisible": "1"})
    html = browser.get(f"/forum/{topic.pk}/?widget=instance").content.decode()
    assert "<bdi>alice</bdi>" not in html


# Every room a user is in is known, so leaving reaches all of them.

READ_THREADS = 12  # more than a handful of tabs open at once


def answered_in(room: str, pk: str) -> bool:
    found = get_store().in_room(room, [pk])
    assert found is not None
    return pk in found[0]


def rooms_listing(redis_client: Redis, kind: str, threads: int) -> list[int]:
    return [
        n
        for n in range(1, threads + 1)
        if room_members(redis_client, kind, f"thread:{n}")
    ]


def reads_every_thread(browser: Client, user: User) -> None:
    """Open each thread in a tab of its own, its script saying it is open."""
    browser.force_login(user)
    for n in range(1, READ_THREADS + 1):
        html = browser.get(f"/thread/{n}/").content.decode()
        found = re.search(r'data-whos-online-here="([^"]+)"', html)
        assert found is not None
        browser.post("/whos-online/here/", {"tab": f"tab-{n:04d}", "room": found[1]})


def test_logging_out_leaves_every_room_read_within_the_window(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    reads_every_thread(browser, alice)
    browser.get("/logout/")
    assert rooms_listing(redis_client, "users", READ_THREADS) == []


def test_appearing_offline_leaves_the_public_list_of_every_room_read(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    reads_every_thread(browser, alice)
    browser.post("/whos-online/visibility/", {"invisible": "1"})
    assert rooms_listing(redis_client, "users", READ_THREADS) == []
    assert rooms_listing(redis_client, "hidden", READ_THREADS) == list(
        range(1, READ_THREADS + 1)
    )


def test_past_five_devices_the_one_seen_least_lately_leaves_its_rooms(
    alice: User, redis_client: Redis
) -> None:
    most = DEVICES_PER_USER
    for n in range(1, most + 2):  # each from a device of its own
        presence.record_in_room(f"thread:{n}", "users", str(alice.pk))
    assert rooms_listing(redis_client, "users", most + 1) == list(range(2, most + 2))


def test_past_the_most_rooms_a_members_tabs_hold_the_tab_ending_first_loses_one(
    alice: User,
) -> None:
    store, pk = get_store(), str(alice.pk)
    presence.record_user(pk)
    store.keep_tab("users", pk, "laptop", "tab1", [f"a{n}" for n in range(10)], 30)
    store.keep_tab("users", pk, "laptop", "tab2", [f"b{n}" for n in range(10)], 60)
    store.keep_tab("users", pk, "laptop", "tab3", ["c"], 90)
    in_rooms = {room for room in presence.rooms() if answered_in(room, pk)}
    assert len(in_rooms) == ROOMS_IN_TABS
    assert {f"b{n}" for n in range(10)} | {"c"} <= in_rooms


def test_a_guarded_user_reading_a_new_thread_reads_the_choices_once(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    browser.get("/thread/1/")
    with CaptureQueriesContext(connection) as captured:
        browser.get("/thread/2/")  # its room widget lists her
    made = [q["sql"] for q in captured if "SAVEPOINT" not in q["sql"]]
    # Her session and user (the room needs who she is), the listed users'
    # choices with her own.
    assert len(made) == 3
    assert sum("whos_online_visibility" in sql for sql in made) == 1


def test_a_user_the_room_lists_as_its_reader_is_not_read_again(
    browser: Client, alice: User, bob: User
) -> None:
    presence.record_in_room("thread:2", "users", str(bob.pk))
    browser.force_login(alice)
    browser.get("/thread/1/")
    with CaptureQueriesContext(connection) as captured:
        page = browser.get("/thread/2/")
    user_reads = [q["sql"] for q in captured if User._meta.db_table in q["sql"]]
    assert len(user_reads) == 2  # her, by her session; bob, listed with her
    assert "alice" in page.content.decode()
