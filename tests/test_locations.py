"""Where each user is, and the public "Who is online" page."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.urls import ResolverMatch, URLResolver
from django.utils import translation
from django.utils.translation import gettext_lazy
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online import api
from whos_online.locations import location_of
from whos_online.store import get_store

pytestmark = pytest.mark.django_db

PAGE = "/whos-online/"


@pytest.fixture
def alices(alice: User) -> Client:
    browser = Client()
    browser.force_login(alice)
    return browser


def where(user: User) -> tuple[str, str] | None:
    (online,) = [o for o in api.online_users() if o.user == user]
    found = online.location
    return None if found is None else (found.label, found.url)


def test_a_decorated_view_gives_its_label_and_link(alices: Client, alice: User) -> None:
    alices.get("/forum/")
    assert where(alice) == ("Reading the forum", "/forum/")


def test_a_view_labelled_for_one_url_leaves_its_other_urls_unlabelled(
    alices: Client, alice: User
) -> None:
    alices.get("/shared-page/")
    assert where(alice) == ("Reading a shared page", "/shared-page/")
    assert location_of(RequestFactory().get("/")) == ""


def test_a_class_based_view_gives_its_label(alices: Client, alice: User) -> None:
    alices.get("/members/")
    assert where(alice) == ("Looking at the members", "/members/")


def test_a_url_name_can_be_labelled_in_settings(
    alices: Client, alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_LOCATIONS = {"thread": "Reading a thread"}
    alices.get("/thread/7/")
    assert where(alice) == ("Reading a thread", "/thread/7/")


def test_a_page_of_a_urlconf_set_by_middleware_gives_its_label(
    alices: Client, alice: User, settings: SettingsWrapper
) -> None:
    settings.MIDDLEWARE = [
        "tests.urls_per_request.UseThisURLconf",
        *settings.MIDDLEWARE,
    ]
    alices.get("/elsewhere/")
    assert where(alice) == ("Reading the forum", "/elsewhere/")


def test_a_translated_label_is_shown_in_the_language_of_the_reader(
    alices: Client, alice: User
) -> None:
    with translation.override("de"):
        alices.get("/lazily-labelled/")
    with translation.override("fr"):
        assert where(alice) == ("Qui est en ligne", "/lazily-labelled/")
    assert where(alice) == ("Who is online", "/lazily-labelled/")


def test_a_url_name_can_be_given_a_translated_label_in_settings(
    alices: Client, alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_LOCATIONS = {"thread": gettext_lazy("Who is online")}
    alices.get("/thread/7/")
    with translation.override("de"):
        assert where(alice) == ("Wer ist online", "/thread/7/")


def test_the_public_page_shows_labels_in_the_language_of_its_reader(
    alices: Client,
) -> None:
    alices.get("/lazily-labelled/")
    with translation.override("de"):
        page = alices.get(PAGE, headers={"accept-language": "de"})
    assert ">Wer ist online</a>" in page.text


def test_a_page_without_a_label_leaves_no_location(alices: Client, alice: User) -> None:
    alices.get("/")
    assert where(alice) is None


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Requested-With": "XMLHttpRequest"},
        {"HX-Request": "true"},
        {"Sec-Fetch-Dest": "empty"},
    ],
)
def test_requests_that_are_not_page_views_never_overwrite_it(
    alices: Client, alice: User, clock: Clock, headers: dict[str, str]
) -> None:
    alices.get("/forum/")
    clock.advance(301)  # a record is due
    alices.get("/members/", headers=headers)
    assert where(alice) == ("Reading the forum", "/forum/")


@pytest.mark.usefixtures("warm_scripts")
def test_a_guarded_script_fetch_of_a_page_with_another_label_writes_nothing(
    alices: Client, alice: User, redis_commands: CommandCounter
) -> None:
    alices.get("/forum/")
    alices.get("/forum/")  # guarded, and its guard known to the process
    redis_commands.reset()
    alices.get("/members/", headers={"X-Requested-With": "XMLHttpRequest"})
    assert redis_commands.round_trips == 0
    assert where(alice) == ("Reading the forum", "/forum/")


def test_a_page_a_script_fetched_while_guarded_moves_the_location_once_opened(
    alices: Client, alice: User
) -> None:
    alices.get("/forum/")
    alices.get("/forum/")  # guarded, and its guard known to the process
    alices.get("/members/", headers={"X-Requested-With": "XMLHttpRequest"})
    alices.get("/members/")
    assert where(alice) == ("Looking at the members", "/members/")


def test_the_apps_own_endpoints_never_overwrite_it(
    alices: Client, alice: User, clock: Clock
) -> None:
    alices.get("/forum/")
    clock.advance(301)
    alices.post("/whos-online/heartbeat/")
    alices.post("/whos-online/beacon/")
    assert where(alice) == ("Reading the forum", "/forum/")


def test_a_guarded_page_view_elsewhere_moves_the_location(
    alices: Client, alice: User
) -> None:
    alices.get("/forum/")
    alices.get("/members/")
    assert where(alice) == ("Looking at the members", "/members/")


def test_the_first_labelled_page_after_logging_in_sets_the_location(
    browser: Client, alice: User
) -> None:
    browser.post(f"/login/{alice.pk}/")  # recorded here, where there is no label
    browser.get("/forum/")  # guarded
    html = Client().get(PAGE).content.decode()
    assert '<a href="/forum/">Reading the forum</a>' in html


@pytest.mark.usefixtures("warm_scripts")
def test_staying_on_the_same_page_while_guarded_costs_no_round_trip(
    alices: Client, redis_commands: CommandCounter
) -> None:
    alices.get("/forum/")
    redis_commands.reset()
    alices.get("/forum/")
    assert redis_commands.round_trips == 0


def test_pages_of_the_same_label_are_not_recorded_again_while_guarded(
    alices: Client, alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_LOCATIONS = {"thread": "Reading a thread"}
    alices.get("/thread/7/")
    recorded_at = presence.last_seen(alice.pk)
    alices.get("/thread/8/")
    assert presence.last_seen(alice.pk) == recorded_at
    assert where(alice) == ("Reading a thread", "/thread/7/")


@pytest.mark.usefixtures("warm_scripts")
def test_a_background_record_leaves_the_guard_knowing_the_location(
    alices: Client, alice: User, clock: Clock, redis_commands: CommandCounter
) -> None:
    alices.get("/forum/")
    clock.advance(301)  # the guard lapsed: the heartbeat records her
    alices.post("/whos-online/heartbeat/")
    redis_commands.reset()
    alices.get("/forum/")
    assert redis_commands.round_trips == 0
    assert where(alice) == ("Reading the forum", "/forum/")


def test_a_guarded_page_view_resolves_its_url_once(
    alices: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    alices.get("/forum/")
    resolved: list[str] = []
    resolve = URLResolver.resolve

    def counted(self: URLResolver, path: str) -> ResolverMatch:
        if path.startswith("/"):  # the root resolver's (an include's has no "/")
            resolved.append(path)
        return resolve(self, path)

    monkeypatch.setattr(URLResolver, "resolve", counted)
    alices.get("/members/")  # guarded, and a path the process has not seen
    assert resolved == ["/members/"]


def test_a_page_without_a_label_leaves_the_location_while_guarded(
    alices: Client, alice: User
) -> None:
    alices.get("/forum/")
    alices.get("/")
    assert where(alice) == ("Reading the forum", "/forum/")


def test_guests_have_no_location(redis_client: Redis) -> None:
    Client().get("/forum/")
    assert not redis_client.exists(presence.key("where"))


def test_logging_out_forgets_the_location(
    alices: Client, alice: User, redis_client: Redis
) -> None:
    alices.get("/forum/")
    assert redis_client.exists(presence.key(f"where:{alice.pk}"))
    alices.get("/logout/")
    assert not redis_client.exists(presence.key(f"where:{alice.pk}"))


def test_a_location_expires_with_the_window(
    alices: Client, alice: User, redis_client: Redis
) -> None:
    alices.get("/forum/")
    assert 0 < redis_client.ttl(presence.key(f"where:{alice.pk}")) <= 900


def test_a_page_that_does_not_exist_leaves_no_location(
    alices: Client, alice: User
) -> None:
    alices.get("/no-such-page/")
    assert where(alice) is None


def test_the_public_page_lists_users_with_where_they_are(alices: Client) -> None:
    alices.get("/forum/")
    html = Client().get(PAGE).content.decode()
    assert "<bdi>alice</bdi>" in html
    assert '<a href="/forum/">Reading the forum</a>' in html
    assert "1 guest" in html  # the reader


def test_the_public_page_never_shows_hidden_users_or_addresses(
    django_user_model: type[User],
) -> None:
    ghost = django_user_model.objects.create_user("ghost")
    presence.record_user(ghost.pk, hidden=True)
    presence.record_guest("192.0.2.44")
    html = Client().get(PAGE).content.decode()
    assert "ghost" not in html
    assert "192.0.2.44" not in html


def test_staff_see_hidden_users_on_the_public_page_marked(
    django_user_model: type[User],
) -> None:
    presence.record_user(django_user_model.objects.create_user("ghost").pk, hidden=True)
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    html = staff.get(PAGE).content.decode()
    assert "<bdi>ghost</bdi> <small>(hidden)</small>" in html


def test_the_public_page_follows_who_sees_names(
    alices: Client, settings: SettingsWrapper
) -> None:
    alices.get("/forum/")
    settings.WHOS_ONLINE_NAMES_VISIBLE_TO = "users"
    assert "alice" not in Client().get(PAGE).content.decode()
    assert "<bdi>alice</bdi>" in alices.get(PAGE).content.decode()


def test_the_public_page_is_closed_to_guests_when_the_setting_says(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_ANONYMOUS_CAN_VIEW = False
    assert Client().get(PAGE).status_code == 403


def test_the_public_page_is_never_cached_for_others(alices: Client) -> None:
    response = alices.get(PAGE)
    assert "private" in response["Cache-Control"]


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_the_public_page_says_so() -> None:
    assert "cannot be shown" in Client().get(PAGE).content.decode()


def test_staff_see_where_users_are(
    alices: Client, django_user_model: type[User]
) -> None:
    alices.get("/forum/")
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    html = staff.get("/admin/whos_online/onlinenow/").content.decode()
    assert '<a href="/forum/">Reading the forum</a>' in html


def test_the_public_page_escapes_and_isolates_names(
    django_user_model: type[User],
) -> None:
    mallory = django_user_model.objects.create_user("mallory\u202e<i>&")
    presence.record_user(mallory.pk)
    html = Client().get(PAGE).content.decode()
    assert "<bdi>mallory\u202e&lt;i&gt;&amp;</bdi>" in html


@pytest.mark.parametrize("planted", ["//evil.example/phish", "/\\evil.example/phish"])
def test_a_path_that_answered_404_is_never_linked_even_under_a_labelled_catch_all(
    alices: Client, alice: User, settings: SettingsWrapper, planted: str
) -> None:
    settings.ROOT_URLCONF = "tests.urls_flatpages"
    assert alices.get(planted).status_code == 404
    html = Client().get(PAGE).content.decode()
    assert "evil.example" not in html
    assert where(alice) is None


def test_a_page_of_the_catch_all_that_answered_is_linked(
    alices: Client, alice: User, settings: SettingsWrapper
) -> None:
    settings.ROOT_URLCONF = "tests.urls_flatpages"
    alices.get("/about/")
    assert where(alice) == ("Reading a page", "/about/")


def test_a_location_that_cannot_be_written_leaves_the_page_and_the_last_one(
    alices: Client,
    alice: User,
    monkeypatch: pytest.MonkeyPatch,
    clock: Clock,
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_FAILURE_BACKOFF = 10
    alices.get("/forum/")

    def refused(*args: object, **options: object) -> bool:
        raise RedisConnectionError("Redis went away")

    with monkeypatch.context() as patched:
        patched.setattr(get_store().client, "set", refused)
        assert alices.get("/members/").status_code == 200
    clock.advance(settings.WHOS_ONLINE_FAILURE_BACKOFF)  # Redis is tried again
    assert where(alice) == ("Reading the forum", "/forum/")


def test_a_path_that_resolves_nowhere_has_no_location() -> None:
    assert location_of(RequestFactory().get("/no/such/path/")) == ""


def test_the_page_says_when_users_were_seen_by_redis_clock_not_the_servers(
    alices: Client, step_wall_clock: Callable[[float], None]
) -> None:
    alices.get("/forum/")
    step_wall_clock(3600)  # this server's clock runs an hour ahead of Redis'
    html = Client().get(PAGE).content.decode()
    assert "just now" in html
    assert "minutes ago" not in html
