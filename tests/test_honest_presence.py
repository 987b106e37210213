"""What the widget shows is true: each visitor counted once, on their own
page, on every server, after a Redis restart, and no visitor can blind the
widget or write on it. One section per point of the "Honest presence" issue.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.core import signing
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online import state
from whos_online.conf import get_config
from whos_online.tokens import room_token

pytestmark = pytest.mark.django_db

GUARD = "whos_online"


def members(redis_client: Redis, kind: str, room: str | None = None) -> list[str]:
    found: list[bytes] = redis_client.zrange(presence.key(kind, room), 0, -1)  # type: ignore[assignment]
    return presence.members_of(found)


def another_process() -> None:
    """Forget what this process learnt, as a newly started one would."""
    get_config.cache_clear()


# 1. You are online on your own page.


def test_the_first_page_a_guest_opens_counts_them(browser: Client) -> None:
    html = browser.get("/widget/").content.decode()
    assert "1 visitor online" in html
    assert "1 guest" in html


def test_the_first_page_a_user_opens_lists_them(browser: Client, alice: User) -> None:
    browser.force_login(alice)
    html = browser.get("/widget/").content.decode()
    assert "<bdi>alice</bdi>" in html


def test_a_thread_lists_its_reader_on_the_first_visit(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    assert "<bdi>alice</bdi>" in browser.get("/thread/1/").content.decode()


@pytest.mark.usefixtures("warm_scripts")
def test_counting_yourself_costs_no_extra_round_trip(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.get("/widget/")
    assert redis_commands.round_trips == 2  # record, snapshot
    redis_commands.round_trips = 0
    browser.get("/widget/")
    assert redis_commands.round_trips == 1  # the snapshot alone


# 2. One person is one visitor.


def test_a_guest_who_logs_in_is_no_longer_a_guest(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.get("/", REMOTE_ADDR="192.0.2.5")
    browser.get(f"/login/{alice.pk}/", REMOTE_ADDR="192.0.2.5")
    assert members(redis_client, "guests") == []
    assert members(redis_client, "users") == [str(alice.pk)]


def test_logging_in_does_not_raise_the_record_to_two(
    browser: Client, alice: User
) -> None:
    browser.get("/")
    browser.get(f"/login/{alice.pk}/")
    assert presence.most_ever_online() is not None
    assert presence.most_ever_online()[0] == 1  # type: ignore[index]


def test_a_hashed_guest_who_logs_in_is_no_longer_a_guest(
    browser: Client, alice: User, redis_client: Redis, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_GUEST_ADDRESSES = "hashed"
    browser.get("/")
    browser.get(f"/login/{alice.pk}/")
    assert members(redis_client, "guests") == []


def test_logging_out_turns_a_user_back_into_a_guest(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.get(f"/login/{alice.pk}/", REMOTE_ADDR="192.0.2.5")
    browser.get("/logout/", REMOTE_ADDR="192.0.2.5")
    assert members(redis_client, "users") == []
    assert members(redis_client, "guests") == ["192.0.2.5"]


# 3. Logging out on one device does not hide you on another.


@pytest.fixture
def phone_and_laptop(alice: User) -> tuple[Client, Client]:
    phone, laptop = Client(), Client()
    phone.get(f"/login/{alice.pk}/")
    laptop.get(f"/login/{alice.pk}/")
    return phone, laptop


def test_logging_out_on_the_phone_keeps_the_laptop_online(
    phone_and_laptop: tuple[Client, Client], alice: User, redis_client: Redis
) -> None:
    phone, _ = phone_and_laptop
    phone.get("/logout/")
    assert members(redis_client, "users") == [str(alice.pk)]


def test_logging_out_on_the_only_device_seen_lately_takes_the_user_off(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.get(f"/login/{alice.pk}/")
    browser.get("/logout/")
    assert members(redis_client, "users") == []


def test_a_device_not_seen_within_the_guard_period_does_not_keep_them_on(
    phone_and_laptop: tuple[Client, Client], redis_client: Redis, clock: Clock
) -> None:
    phone, _ = phone_and_laptop
    clock.advance(301)
    phone.get("/")  # the phone is seen again; the laptop is not
    phone.get("/logout/")
    assert members(redis_client, "users") == []


def test_logging_out_takes_the_user_out_of_their_rooms(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.get(f"/login/{alice.pk}/")
    browser.get("/thread/1/")
    browser.get("/topic/2/")
    browser.get("/logout/")
    assert members(redis_client, "users", "thread:1") == []
    assert members(redis_client, "users", "topic:2") == []


# 4. Pages served from a cache or a CDN still count.


def test_the_beacon_tag_renders_the_script_with_the_guard_period() -> None:
    html = Client().get("/cached/").content.decode()
    assert "whos_online/beacon.js" in html
    assert 'data-whos-online-beacon="/whos-online/beacon/?room=' in html
    assert 'data-whos-online-seconds="300"' in html


def test_the_beacon_records_a_guest_whose_page_came_from_a_cdn(
    redis_client: Redis,
) -> None:
    reader = Client(enforce_csrf_checks=True)  # the page itself never reached us
    response = reader.post("/whos-online/beacon/", REMOTE_ADDR="192.0.2.8")
    assert response.status_code == 204
    assert members(redis_client, "guests") == ["192.0.2.8"]
    assert GUARD in response.cookies


def test_a_page_from_djangos_cache_still_counts_its_reader(
    redis_client: Redis,
) -> None:
    Client().get("/cached/", REMOTE_ADDR="192.0.2.7")  # fills the cache
    Client().get("/cached/", REMOTE_ADDR="192.0.2.8")  # served from it
    assert sorted(members(redis_client, "guests")) == ["192.0.2.7", "192.0.2.8"]


def test_the_beacon_records_the_room_its_page_names(
    browser: Client, redis_client: Redis
) -> None:
    token = room_token("thread:1", None)
    browser.post(f"/whos-online/beacon/?room={token}", REMOTE_ADDR="192.0.2.8")
    assert members(redis_client, "guests", "thread:1") == ["192.0.2.8"]


@pytest.mark.usefixtures("warm_scripts")
def test_a_guarded_beacon_sends_nothing_to_redis(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.post("/whos-online/beacon/")
    redis_commands.commands.clear()
    browser.post("/whos-online/beacon/")
    assert redis_commands.commands == []


def test_a_beacon_answer_is_never_cached(browser: Client) -> None:
    response = browser.post("/whos-online/beacon/")
    assert "no-store" in response["Cache-Control"]


def test_without_the_urls_the_beacon_tag_renders_nothing(
    settings: SettingsWrapper,
) -> None:
    settings.ROOT_URLCONF = "tests.urls_without_whos_online"
    from django.template import engines

    template = engines["django"].from_string(
        "{% load whos_online %}{% whos_online_beacon %}"
    )
    assert template.render({}).strip() == ""


def test_the_beacon_takes_no_get(browser: Client) -> None:
    assert browser.get("/whos-online/beacon/").status_code == 405


# 5. One clock for guards too.


@pytest.fixture
def skew(step_wall_clock: Callable[[float], None]) -> Callable[[float], None]:
    """Put this web server's clock ``seconds`` off, as another process would
    find it; Redis keeps true time."""

    def set_skew(seconds: float) -> None:
        step_wall_clock(seconds)
        another_process()

    return set_skew


@pytest.mark.parametrize("hours", [1, -1])
def test_a_server_with_a_skewed_clock_honours_a_fresh_guard(
    browser: Client,
    redis_commands: CommandCounter,
    skew: Callable[[float], None],
    hours: int,
) -> None:
    browser.get("/")
    skew(hours * 3600)
    browser.get("/")  # learns Redis' time, once
    redis_commands.commands.clear()
    browser.get("/")
    assert redis_commands.commands == []


@pytest.mark.parametrize("hours", [1, -1])
def test_a_server_with_a_skewed_clock_sees_a_guard_run_out_on_time(
    browser: Client,
    redis_client: Redis,
    skew: Callable[[float], None],
    clock: Clock,
    hours: int,
) -> None:
    browser.get("/")
    skew(hours * 3600)
    redis_client.delete(presence.key("guests"))
    clock.advance(301)
    browser.get("/")
    assert members(redis_client, "guests") == ["127.0.0.1"]


def test_a_user_browsing_through_a_step_back_of_the_clock_stays_recorded(
    browser: Client,
    alice: User,
    settings: SettingsWrapper,
    clock: Clock,
    step_wall_clock: Callable[[float], None],
    server_now: Callable[[], float],
) -> None:
    settings.WHOS_ONLINE_WINDOW = 60
    settings.WHOS_ONLINE_GUARD_SECONDS = 20
    browser.force_login(alice)
    browser.get("/")
    step_wall_clock(-3600)
    for _ in range(90):  # a page a second for longer than the window
        clock.advance(1)
        browser.get("/")
    last_seen = presence.last_seen(alice.pk)
    assert last_seen is not None
    assert server_now() - last_seen <= 20 + state.CLOCK_REFRESH_SECONDS


# 6. Redis losing its data does not hide people.


def test_after_redis_loses_its_data_a_guarded_visitor_is_recorded_again(
    browser: Client, alice: User, redis_client: Redis, clock: Clock
) -> None:
    browser.force_login(alice)
    browser.get("/")
    for name in redis_client.scan_iter(match=f"{{{get_config().key_prefix}}}:*"):
        redis_client.delete(name)  # a restart without persistence, a FLUSHDB
    clock.advance(state.CLOCK_REFRESH_SECONDS)
    browser.get("/")
    assert members(redis_client, "users") == [str(alice.pk)]


def test_a_guard_is_void_as_soon_as_the_process_learns_redis_lost_its_data(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.force_login(alice)
    browser.get("/")
    browser.get("/")  # spared: the process remembers the guard's verdict
    for name in redis_client.scan_iter(match=f"{{{get_config().key_prefix}}}:*"):
        redis_client.delete(name)
    presence.sync_clock()  # as any record or read of another visitor would
    browser.get("/")
    assert members(redis_client, "users") == [str(alice.pk)]


@pytest.mark.usefixtures("warm_scripts")
def test_a_guarded_visitor_costs_one_clock_check_per_process_every_few_seconds(
    browser: Client, redis_commands: CommandCounter, clock: Clock
) -> None:
    browser.get("/")
    clock.advance(state.CLOCK_REFRESH_SECONDS)
    redis_commands.commands.clear()
    for _ in range(3):
        browser.get("/")
    assert redis_commands.commands == ["EVALSHA"]  # the clock, not a record


# 7. The 24-hour chart has no holes while people are online.


def test_minutes_in_which_everyone_is_guarded_hold_the_last_count(
    browser: Client, clock: Clock
) -> None:
    clock.advance(60.5 - time.time() % 60)  # at a minute's start: two more, not three
    browser.get("/")
    clock.advance(120)
    browser.get("/widget/")
    assert [count for _, count in presence.history().minutes] == [1, 1, 1]


# 8. The header count agrees with the widget.


def test_a_site_widget_carries_its_counts_for_the_page() -> None:
    presence.record("bots", "Googlebot")
    html = Client().get("/widget/").content.decode()
    assert 'data-whos-online-people="1"' in html
    assert 'data-whos-online-total="2"' in html


def test_a_room_widget_does_not_speak_for_the_site() -> None:
    html = Client().get("/thread/1/").content.decode()
    assert "data-whos-online-people" not in html


# 9. Bad input never opens the breaker.


@pytest.mark.parametrize(
    "room", ["<script>", "x" * 101, "комната", "thread:1%0A", "a b"]
)
def test_a_bad_room_name_costs_nobody_else_anything(
    browser: Client, redis_client: Redis, room: str
) -> None:
    assert Client().get(f"/room-widget/{room}/").status_code == 200
    browser.get("/", REMOTE_ADDR="192.0.2.9")
    assert "192.0.2.9" in members(redis_client, "guests")


def test_bad_room_names_are_logged_at_most_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    for n in range(5):
        Client().get(f"/room-widget/bad%20room{n}/")
    refused = [r for r in caplog.records if "invalid room name" in r.getMessage()]
    assert len(refused) == 1
    assert refused[0].levelno == logging.WARNING


# 10. Bot names shown to the public come from a list we control.

SPAM_BOT = "Buy-cheap-pills-example-bot/1.0"


def test_an_unknown_crawler_is_counted_but_not_named_publicly() -> None:
    Client().get("/", HTTP_USER_AGENT=SPAM_BOT)
    html = Client().get("/widget/").content.decode()
    assert "pills" not in html
    assert "1 other crawler" in html


@pytest.mark.parametrize(
    "user_agent",
    [
        "python-requests/2.32.3",
        "curl/8.5.0",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "HeadlessChrome/120.0.0.0 Safari/537.36",
    ],
)
def test_http_libraries_and_headless_browsers_are_not_named_publicly(
    user_agent: str,
) -> None:
    presence.record("bots", "placeholder")  # one crawler already online
    Client().get("/", HTTP_USER_AGENT=user_agent)
    data = Client().get("/whos-online/online.json").json()
    assert data["bots"] == []


def test_a_well_known_crawler_is_named_by_our_spelling() -> None:
    Client().get("/", HTTP_USER_AGENT="Mozilla/5.0 (compatible; bingbot/2.0)")
    assert Client().get("/whos-online/online.json").json()["bots"] == ["Bingbot"]


def test_staff_see_an_unknown_crawlers_own_name_escaped(
    django_user_model: type[User],
) -> None:
    presence.record("bots", "<b>evil</b>-bot")
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    html = staff.get("/admin/whos_online/onlinenow/").content.decode()
    assert "&lt;b&gt;evil&lt;/b&gt;" in html
    assert "<b>evil</b>" not in html


# 11. Names cannot rearrange the page.

OVERRIDE = "mallory\u202e"


@pytest.fixture
def mallory(django_user_model: type[User]) -> User:
    user = django_user_model.objects.create_user(OVERRIDE + "<i>&")
    presence.record_user(user.pk)
    return user


@pytest.mark.usefixtures("mallory")
@pytest.mark.parametrize("url", ["/widget/", "/whos-online/widget/"])
def test_a_name_with_a_direction_override_is_isolated(url: str) -> None:
    html = Client().get(url).content.decode()
    assert f"<bdi>{OVERRIDE}&lt;i&gt;&amp;</bdi>" in html


@pytest.mark.usefixtures("mallory")
def test_the_staff_page_isolates_names(django_user_model: type[User]) -> None:
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    html = staff.get("/admin/whos_online/onlinenow/").content.decode()
    assert f"<bdi>{OVERRIDE}&lt;i&gt;&amp;</bdi>" in html


@pytest.mark.usefixtures("mallory")
def test_the_json_endpoint_is_safe_to_embed_in_a_script() -> None:
    body = Client().get("/whos-online/online.json").content.decode()
    assert "<" not in body and ">" not in body and "&" not in body
    assert "\\u003ci\\u003e\\u0026" in body


# 12. Room tokens expire.


def test_a_room_token_works_within_its_lifetime(clock: Clock) -> None:
    token = room_token("thread:1", None)
    clock.advance(24 * 3600 - 60)
    response = Client().get(f"/whos-online/online.json?room={token}")
    assert response.status_code == 200


def test_a_room_token_is_refused_after_its_lifetime(clock: Clock) -> None:
    token = room_token("thread:1", None)
    clock.advance(24 * 3600 + 1)
    response = Client().get(f"/whos-online/online.json?room={token}")
    assert response.status_code == 400


def test_the_lifetime_follows_the_setting(
    settings: SettingsWrapper, clock: Clock
) -> None:
    settings.WHOS_ONLINE_ROOM_TOKEN_MAX_AGE = 60
    token = room_token("thread:1", None)
    clock.advance(61)
    assert Client().get(f"/whos-online/widget/?room={token}").status_code == 400
    assert signing.loads(token, salt="whos_online.room")  # still signed, only old
