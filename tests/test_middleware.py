"""The middleware: who is recorded, and the guard cookie that spares Redis."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any

import pytest
from asgiref.sync import async_to_sync, iscoroutinefunction
from django.conf import settings as django_settings
from django.contrib.auth import login
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.sessions.backends.db import SessionStore
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from django.utils.functional import SimpleLazyObject
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online import api, guard
from whos_online.middleware import WhosOnlineMiddleware
from whos_online.store import get_store

pytestmark = pytest.mark.django_db

GUARD = "whos_online"


def members(redis_client: Redis, kind: str) -> list[str]:
    found: list[bytes] = redis_client.zrange(presence.key(kind), 0, -1)  # type: ignore[assignment]
    return [member.decode() for member in found]


def guard_cookie(client: Client) -> str:
    return client.cookies[GUARD].value


def test_an_authenticated_visit_records_the_user(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.force_login(alice)
    assert browser.get("/").status_code == 200
    assert members(redis_client, "users") == [str(alice.pk)]
    assert members(redis_client, "guests") == []


def test_an_anonymous_visit_records_the_guest_address(
    browser: Client, redis_client: Redis
) -> None:
    browser.get("/", REMOTE_ADDR="192.0.2.7")
    assert members(redis_client, "guests") == ["192.0.2.7"]
    assert members(redis_client, "users") == []


@pytest.mark.parametrize(
    ("remote_addr", "member"),
    [
        ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        ("::ffff:192.0.2.1", "192.0.2.1"),
        ("fe80::1%eth0", "fe80::1"),
    ],
)
def test_the_guest_address_is_normalised(
    browser: Client,
    redis_client: Redis,
    settings: SettingsWrapper,
    remote_addr: str,
    member: str,
) -> None:
    settings.WHOS_ONLINE_IPV6_PREFIX = 128  # each IPv6 address stored as it is
    browser.get("/", REMOTE_ADDR=remote_addr)
    assert members(redis_client, "guests") == [member]


@pytest.mark.parametrize("remote_addr", ["", "not-an-address", "999.1.1.1", "1" * 500])
def test_a_missing_or_malformed_address_records_nothing_and_serves_the_page(
    browser: Client, redis_client: Redis, remote_addr: str
) -> None:
    assert browser.get("/", REMOTE_ADDR=remote_addr).status_code == 200
    assert members(redis_client, "guests") == []
    assert GUARD not in browser.cookies


def test_x_forwarded_for_is_ignored_unless_proxies_are_configured(
    browser: Client, redis_client: Redis
) -> None:
    browser.get("/", REMOTE_ADDR="192.0.2.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert members(redis_client, "guests") == ["192.0.2.1"]


def test_a_guests_guard_is_an_http_only_lax_cookie_kept_for_the_window(
    browser: Client,
) -> None:
    """It spares records for five minutes, and is kept for the window, so a
    guest back within it is renewed with plain commands, not the script."""
    response = browser.get("/")
    cookie = response.cookies[GUARD]
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["max-age"] == 900
    assert not cookie["secure"]


@pytest.mark.parametrize("logged_in", [False, True])
def test_the_guard_expires_for_browsers_without_max_age_when_max_age_says(
    browser: Client, alice: User, logged_in: bool
) -> None:
    if logged_in:
        browser.force_login(alice)
    before = time.time()
    cookie = browser.get("/").cookies[GUARD]
    expires = parsedate_to_datetime(cookie["expires"]).timestamp()
    max_age = int(cookie["max-age"])
    assert before + max_age - 1 <= expires <= time.time() + max_age


def test_the_guard_is_secure_on_https(browser: Client) -> None:
    response = browser.get("/", secure=True)
    assert response.cookies[GUARD]["secure"] is True


def test_the_guard_spares_records_as_long_as_the_setting(
    browser: Client,
    settings: SettingsWrapper,
    clock: Clock,
    redis_commands: CommandCounter,
) -> None:
    settings.WHOS_ONLINE_GUARD_SECONDS = 60
    browser.get("/")
    clock.advance(50)  # well inside it: its expiry is in whole seconds
    presence.sync_clock()  # a busy site: other pages keep the process informed
    redis_commands.reset()
    browser.get("/")
    assert redis_commands.round_trips == 0
    clock.advance(11)
    presence.sync_clock()
    redis_commands.reset()
    browser.get("/")
    assert redis_commands.round_trips == 1


def test_a_guard_of_zero_seconds_sets_no_cookie_and_records_every_visit(
    browser: Client, settings: SettingsWrapper, redis_commands: CommandCounter
) -> None:
    settings.WHOS_ONLINE_GUARD_SECONDS = 0
    browser.get("/")
    browser.get("/")
    assert GUARD not in browser.cookies
    assert redis_commands.commands.count("EVALSHA") >= 2


def test_a_guarded_guest_request_sends_nothing_to_redis(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.get("/")
    redis_commands.commands.clear()
    assert browser.get("/").status_code == 200
    assert redis_commands.commands == []


def test_a_guarded_user_request_sends_nothing_to_redis(
    browser: Client, alice: User, redis_commands: CommandCounter
) -> None:
    browser.force_login(alice)
    browser.get("/")
    redis_commands.commands.clear()
    browser.get("/")
    assert redis_commands.commands == []


class UnloadableSession(SessionStore):
    def load(self) -> dict[str, object]:
        raise AssertionError("the session was loaded")


def untouchable_user() -> Any:
    def fail() -> User:
        raise AssertionError("the user was loaded")

    return SimpleLazyObject(fail)


def test_a_guarded_request_loads_neither_the_session_nor_the_user(
    rf: RequestFactory, alice: User, redis_commands: CommandCounter
) -> None:
    middleware = WhosOnlineMiddleware(lambda request: HttpResponse())
    first = rf.get("/")
    first.COOKIES[django_settings.SESSION_COOKIE_NAME] = "the-session-key"
    first.session = SessionStore("the-session-key")
    first.user = alice
    issued = middleware(first).cookies[GUARD].value

    second = rf.get("/")
    second.COOKIES[django_settings.SESSION_COOKIE_NAME] = "the-session-key"
    second.COOKIES[GUARD] = issued
    second.session = UnloadableSession("the-session-key")
    second.user = untouchable_user()
    redis_commands.commands.clear()
    middleware(second)
    assert redis_commands.commands == []


def test_a_user_whose_session_ended_is_put_in_no_room_while_their_guard_holds(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    browser.get("/shared-topic/1/")
    browser.get("/shared-topic/2/")
    session_key = browser.cookies[django_settings.SESSION_COOKIE_NAME].value
    SessionStore(session_key).delete()  # ended on the server: the guard still holds
    browser.get("/shared-topic/3/")
    assert api.viewers("topic:3") == []


def test_a_guarded_request_whose_page_asks_nothing_of_presence_builds_nothing(
    rf: RequestFactory,
) -> None:
    middleware = WhosOnlineMiddleware(lambda request: HttpResponse())
    first = rf.get("/")
    issued = middleware(first).cookies[GUARD].value
    assert hasattr(first, "whos_online")  # recorded: its page was made
    get_store().state.guards.clear()  # as in a process that never saw it
    pages = []
    for _ in range(2):  # its MAC checked, then what the process remembers
        later = rf.get("/")
        later.COOKIES[GUARD] = issued
        middleware(later)
        pages.append(hasattr(later, "whos_online"))
    assert pages == [False, False]


def test_a_guard_that_does_not_hold_is_checked_once_on_its_request(
    rf: RequestFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    middleware = WhosOnlineMiddleware(lambda request: HttpResponse())
    issued = middleware(rf.get("/", REMOTE_ADDR="192.0.2.1")).cookies[GUARD].value
    checked = []
    read = guard.read

    def counted(*args: Any) -> guard.Guard | None:
        checked.append(1)
        return read(*args)

    monkeypatch.setattr(guard, "read", counted)
    moved = rf.get("/", REMOTE_ADDR="192.0.2.9")  # a guest whose address changed
    moved.COOKIES[GUARD] = issued
    middleware(moved)
    assert checked == [1]


def test_logging_in_records_the_user_at_once(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.get("/")
    browser.get(f"/login/{alice.pk}/")
    assert members(redis_client, "users") == [str(alice.pk)]


def test_the_first_request_after_logging_in_is_guarded(
    browser: Client, alice: User, redis_commands: CommandCounter
) -> None:
    browser.get(f"/login/{alice.pk}/")
    redis_commands.commands.clear()
    browser.get("/")
    assert redis_commands.commands == []


def test_logging_out_records_the_guest_at_once(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.force_login(alice)
    browser.get("/")
    browser.get("/logout/", REMOTE_ADDR="192.0.2.3")
    assert members(redis_client, "guests") == ["192.0.2.3"]


def test_logging_out_from_a_request_without_an_address_records_nobody(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    browser.force_login(alice)
    browser.get("/")
    response = browser.get("/logout/", REMOTE_ADDR="not-an-address")
    assert members(redis_client, "guests") == []
    assert GUARD not in response.cookies


def test_a_guarded_guest_logging_in_on_a_page_of_the_widget_is_one_user_at_once(
    browser: Client, alice: User, redis_client: Redis
) -> None:
    for _ in range(3):  # guarded, and the guard remembered by the process
        browser.get("/")
    browser.get(f"/login-and-show/{alice.pk}/")  # its widget made after the login
    assert members(redis_client, "users") == [str(alice.pk)]
    assert members(redis_client, "guests") == []


class LogsInFromAHeader:
    """A middleware before ours that logs a visitor in, as single sign-on
    middleware does."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        pk = request.headers.get("X-Sign-On")
        if pk:
            login(request, User.objects.get(pk=pk))
        return self.get_response(request)


def test_a_guarded_guest_whom_an_earlier_middleware_logs_in_is_one_user_at_once(
    settings: SettingsWrapper, alice: User, redis_client: Redis
) -> None:
    settings.MIDDLEWARE = [
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        f"{__name__}.LogsInFromAHeader",
        "whos_online.middleware.WhosOnlineMiddleware",
    ]
    browser = Client()
    for _ in range(3):  # guarded, and the guard remembered by the process
        browser.get("/")
    browser.get("/", headers={"X-Sign-On": str(alice.pk)})
    assert members(redis_client, "users") == [str(alice.pk)]
    assert members(redis_client, "guests") == []


def test_switching_user_records_the_new_user_at_once(
    browser: Client, alice: User, bob: User, redis_client: Redis
) -> None:
    browser.get(f"/login/{alice.pk}/")
    browser.get("/")
    browser.get(f"/login/{bob.pk}/")
    assert set(members(redis_client, "users")) == {str(alice.pk), str(bob.pk)}


# A guard the process has seen hold is remembered with what it held for.
REMEMBERED = pytest.mark.parametrize("remembered", [False, True], ids=["new", "seen"])


@REMEMBERED
def test_a_guest_whose_address_changes_is_recorded_again(
    browser: Client, redis_client: Redis, remembered: bool
) -> None:
    browser.get("/", REMOTE_ADDR="192.0.2.1")
    if remembered:
        browser.get("/", REMOTE_ADDR="192.0.2.1")
    browser.get("/", REMOTE_ADDR="192.0.2.2")
    assert set(members(redis_client, "guests")) == {"192.0.2.1", "192.0.2.2"}


@REMEMBERED
def test_a_guard_from_another_session_counts_as_absent(
    alice: User, bob: User, redis_client: Redis, remembered: bool
) -> None:
    alices, bobs = Client(), Client()
    alices.force_login(alice)
    alices.get("/")
    if remembered:
        alices.get("/")
    bobs.force_login(bob)
    bobs.cookies[GUARD] = guard_cookie(alices)
    bobs.get("/")
    assert set(members(redis_client, "users")) == {str(alice.pk), str(bob.pk)}


def tampered(value: str) -> str:
    last = "A" if value[-1] != "A" else "B"
    return value[:-1] + last


def test_a_tampered_guard_counts_as_absent(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.get("/")
    browser.cookies[GUARD] = tampered(guard_cookie(browser))
    redis_commands.commands.clear()
    browser.get("/")
    assert "EVALSHA" in redis_commands.commands


def test_a_guard_with_a_later_expiry_written_in_counts_as_absent(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.get("/")
    expires, rest = guard_cookie(browser).split(".", 1)
    browser.cookies[GUARD] = f"{int(expires) + 3600}.{rest}"
    redis_commands.commands.clear()
    browser.get("/")
    assert "EVALSHA" in redis_commands.commands


def test_an_expired_guard_counts_as_absent(
    browser: Client, redis_commands: CommandCounter, clock: Clock
) -> None:
    browser.get("/")
    clock.advance(301)
    redis_commands.commands.clear()
    browser.get("/")
    assert "EVALSHA" in redis_commands.commands


@pytest.fixture
def alices_expired_guard(alice: User, clock: Clock) -> tuple[str, str]:
    """Alice's guard and session key, her guard period since run out."""
    alices = Client()
    alices.force_login(alice)
    alices.get("/")
    clock.advance(301)
    session_key = alices.cookies[django_settings.SESSION_COOKIE_NAME].value
    return guard_cookie(alices), session_key


def test_a_users_guard_lasts_as_long_as_the_session_cookie(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    cookie = browser.get("/").cookies[GUARD]
    assert cookie["max-age"] == django_settings.SESSION_COOKIE_AGE


def test_a_users_guard_is_a_browser_session_cookie_when_the_session_is(
    browser: Client, alice: User, settings: SettingsWrapper
) -> None:
    settings.SESSION_EXPIRE_AT_BROWSER_CLOSE = True
    browser.force_login(alice)
    cookie = browser.get("/").cookies[GUARD]
    assert cookie["max-age"] == ""
    assert cookie["expires"] == ""


def test_an_expired_users_guard_records_the_user_the_session_authenticates(
    alice: User, redis_client: Redis, clock: Clock
) -> None:
    alices = Client()
    alices.force_login(alice)
    alices.get("/")
    redis_client.delete(presence.key("users"))
    clock.advance(301)
    response = alices.get("/")
    assert members(redis_client, "users") == [str(alice.pk)]
    assert GUARD in response.cookies


def test_an_expired_guard_from_another_session_names_nobody(
    browser: Client,
    bob: User,
    alices_expired_guard: tuple[str, str],
    redis_client: Redis,
) -> None:
    redis_client.delete(presence.key("users"))
    browser.force_login(bob)
    browser.cookies[GUARD] = alices_expired_guard[0]
    browser.get("/")
    assert members(redis_client, "users") == [str(bob.pk)]


@pytest.fixture
def ghost(django_user_model: type[User], settings: SettingsWrapper) -> User:
    """A user whom ``WHOS_ONLINE_IS_HIDDEN`` hides."""
    settings.WHOS_ONLINE_IS_HIDDEN = "tests.hiding.is_ghost"
    return django_user_model.objects.create_user("ghost")


def test_with_is_hidden_set_an_expired_guard_does_not_decide_who_is_hidden(
    browser: Client, ghost: User, redis_client: Redis, clock: Clock
) -> None:
    browser.force_login(ghost)
    browser.get("/")
    redis_client.delete(presence.key("hidden"))
    clock.advance(301)
    browser.get("/")
    assert members(redis_client, "hidden") == [str(ghost.pk)]
    assert members(redis_client, "users") == []


def test_a_users_guard_keeps_the_mark_of_their_location() -> None:
    presence.sync_clock()
    store = get_store()
    response = HttpResponse()
    where = guard.mark("Reading the forum\t/forum/")
    guard.issue(
        store.config,
        response,
        session_key="the-session-key",
        guest_address=None,
        where=where,
        server_now=store.state.clock.now(),
        generation=store.state.clock.label(),
        secure=False,
    )
    raw = response.cookies[GUARD].value
    issued = guard.read(store.config, raw, "the-session-key", lambda: "")
    assert issued is not None
    assert issued.where == where
    assert issued.holds(store.state.clock)


@pytest.mark.parametrize(
    "garbage",
    [
        "x",
        "..",
        "1.2",
        "99999999999.u.",
        "99999999999.z.abc",
        "é.ü.ß",
        "9" * 5000,
        "ab\\cd",
        "\u00b2\u00b3.u.1.abc",
        "99999999999.g.1.abc",
        "99999999999.g.1.42.abc",
        "99999999999.u.1...é",
        "12a.u.1...abc",
        "99999999999.z.1...abc",
        "99999999999.g.1.42..abc",
    ],
)
def test_a_garbage_guard_counts_as_absent_and_never_raises(
    browser: Client, redis_client: Redis, garbage: str
) -> None:
    browser.cookies[GUARD] = garbage
    assert browser.get("/", REMOTE_ADDR="192.0.2.9").status_code == 200
    assert members(redis_client, "guests") == ["192.0.2.9"]


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_the_page_is_served(browser: Client) -> None:
    response = browser.get("/")
    assert response.status_code == 200
    assert response.content == b"a page"


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_no_guard_is_set(browser: Client) -> None:
    assert GUARD not in browser.get("/").cookies


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_a_warning_is_logged_once_not_per_request(
    browser: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="whos_online"):
        for _ in range(5):
            browser.get("/")
    assert len(caplog.records) == 1
    assert "could not reach Redis" in caplog.records[0].getMessage()


def test_a_request_without_auth_middleware_is_treated_as_a_guest(
    rf: RequestFactory, redis_client: Redis
) -> None:
    request = rf.get("/", REMOTE_ADDR="192.0.2.5")
    WhosOnlineMiddleware(lambda request: HttpResponse())(request)
    assert members(redis_client, "guests") == ["192.0.2.5"]


async def async_page(request: HttpRequest) -> HttpResponse:
    return HttpResponse("async page")


def test_the_middleware_is_async_when_the_chain_is_async() -> None:
    assert iscoroutinefunction(WhosOnlineMiddleware(async_page))
    assert not iscoroutinefunction(WhosOnlineMiddleware(lambda request: HttpResponse()))


def test_the_async_path_records_the_visitor_and_sets_the_guard(
    rf: RequestFactory, redis_client: Redis
) -> None:
    request = rf.get("/", REMOTE_ADDR="192.0.2.8")
    request.user = AnonymousUser()
    response = async_to_sync(WhosOnlineMiddleware(async_page))(request)
    assert response.content == b"async page"
    assert members(redis_client, "guests") == ["192.0.2.8"]
    assert GUARD in response.cookies


def test_the_async_path_sends_nothing_to_redis_when_guarded(
    rf: RequestFactory, redis_commands: CommandCounter
) -> None:
    middleware = WhosOnlineMiddleware(async_page)
    first = rf.get("/")
    first.user = AnonymousUser()
    issued = async_to_sync(middleware)(first).cookies[GUARD].value
    second = rf.get("/")
    second.COOKIES[GUARD] = issued
    second.user = untouchable_user()
    redis_commands.commands.clear()
    async_to_sync(middleware)(second)
    assert redis_commands.commands == []


def test_the_async_path_builds_nothing_for_a_guarded_page_that_asks_nothing(
    rf: RequestFactory,
) -> None:
    middleware = WhosOnlineMiddleware(async_page)
    issued = async_to_sync(middleware)(rf.get("/")).cookies[GUARD].value
    get_store().state.guards.clear()  # as in a process that never saw it
    pages = []
    for _ in range(2):  # its MAC checked, then what the process remembers
        later = rf.get("/")
        later.COOKIES[GUARD] = issued
        async_to_sync(middleware)(later)
        pages.append(hasattr(later, "whos_online"))
    assert pages == [False, False]


GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def test_a_hidden_user_is_recorded_as_hidden(
    browser: Client, ghost: User, redis_client: Redis
) -> None:
    browser.force_login(ghost)
    browser.get("/")
    assert members(redis_client, "hidden") == [str(ghost.pk)]
    assert members(redis_client, "users") == []


def test_a_bot_is_recorded_by_name_not_as_a_guest(
    browser: Client, redis_client: Redis
) -> None:
    browser.get("/", HTTP_USER_AGENT=GOOGLEBOT)
    assert members(redis_client, "bots") == ["Googlebot"]
    assert members(redis_client, "guests") == []


def test_a_bot_gets_no_guard_cookie(browser: Client) -> None:
    assert GUARD not in browser.get("/", HTTP_USER_AGENT=GOOGLEBOT).cookies


@pytest.mark.usefixtures("warm_scripts")
def test_a_bot_is_recorded_once_per_guard_period_without_cookies(
    redis_commands: CommandCounter,
) -> None:
    for _ in range(5):
        Client().get("/", HTTP_USER_AGENT=GOOGLEBOT)
    assert redis_commands.commands.count("EVALSHA") == 1


def test_the_guard_cookie_name_follows_the_setting(
    browser: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_GUARD_COOKIE_NAME = "seen"
    assert "seen" in browser.get("/").cookies


def test_rotating_the_secret_key_voids_every_guard(
    browser: Client, settings: SettingsWrapper, redis_commands: CommandCounter
) -> None:
    browser.get("/")
    settings.SECRET_KEY = "a-new-secret"
    redis_commands.commands.clear()
    browser.get("/")
    assert "EVALSHA" in redis_commands.commands


def test_behind_a_proxy_a_guests_guard_holds_while_the_forwarded_address_does(
    browser: Client, settings: SettingsWrapper, redis_commands: CommandCounter
) -> None:
    settings.WHOS_ONLINE_PROXY_COUNT = 1
    browser.get("/", HTTP_X_FORWARDED_FOR="203.0.113.7")
    redis_commands.commands.clear()
    browser.get("/", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert redis_commands.commands == []
    browser.get("/", HTTP_X_FORWARDED_FOR="203.0.113.8")
    assert "EVALSHA" in redis_commands.commands


def test_behind_a_proxy_a_guest_writing_the_forwarded_header_is_still_guarded(
    browser: Client, settings: SettingsWrapper, redis_commands: CommandCounter
) -> None:
    """The client writes what it likes left of the address the proxy
    appends; the guard holds for the address that is stored."""
    settings.WHOS_ONLINE_PROXY_COUNT = 1
    browser.get("/", HTTP_X_FORWARDED_FOR="198.51.100.0, 203.0.113.7")
    redis_commands.commands.clear()
    for n in range(1, 20):
        browser.get("/", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}, 203.0.113.7")
    assert redis_commands.commands == []


def test_a_logged_out_sessions_cookies_replayed_do_not_record_the_user(
    alice: User, redis_client: Redis, clock: Clock
) -> None:
    browser = Client()
    browser.get(f"/login/{alice.pk}/")
    kept = {name: morsel.value for name, morsel in browser.cookies.items()}
    browser.get("/logout/")
    clock.advance(301)  # the guard lapsed; its cookie still names alice
    replay = Client()
    replay.cookies.load(kept)
    replay.get("/")
    assert members(redis_client, "users") == []
