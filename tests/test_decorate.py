"""Presence on pages whose templates the site does not own:
``{% whos_online_decorate %}`` and the endpoint its script asks, once a
page, about the page's links and marked elements."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from django.contrib.auth.models import AnonymousUser, Group, User
from django.template import engines
from django.test import Client
from django.urls import set_script_prefix
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import CommandCounter
from whos_online import api, checks, url_checks
from whos_online.conf import get_config
from whos_online.decorate import LONGEST_PATH, MOST_PATHS, MOST_ROOMS
from whos_online.statuses import badge_html
from whos_online.tokens import room_token

pytestmark = pytest.mark.django_db

DECORATE = "/whos-online/decorate/"


@pytest.fixture(autouse=True)
def profiles(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_DECORATE = {"profiles": "profile"}


def ask(
    client: Client, paths: Sequence[str] = (), rooms: Sequence[str] = ()
) -> dict[str, dict[str, str]]:
    response = client.post(DECORATE, {"path": list(paths), "room": list(rooms)})
    assert response.status_code == 200, response.content
    found: dict[str, dict[str, str]] = response.json()
    return found


def reading(path: str, user: User | None = None) -> Client:
    """A reader with ``path`` open (their device is in its rooms)."""
    client = Client(REMOTE_ADDR="192.0.2.20")
    if user is not None:
        client.force_login(user)
    assert client.get(path).status_code == 200
    return client


# Badges beside links to profiles.


def test_a_link_to_an_online_users_profile_gets_the_online_badge(alice: User) -> None:
    presence.record_user(alice.pk)
    path = f"/people/{alice.pk}/"
    assert ask(Client(), [path])["badges"] == {path: badge_html("online")}


def test_the_badge_is_the_markup_of_online_badge(alice: User) -> None:
    presence.record_user(alice.pk)
    drawn = engines["django"].from_string("{% load whos_online %}{% online_badge u %}")
    badge = ask(Client(), [f"/people/{alice.pk}/"])["badges"][f"/people/{alice.pk}/"]
    assert badge == drawn.render({"u": alice})


def test_a_link_to_an_offline_users_profile_gets_the_offline_badge(
    alice: User,
) -> None:
    path = f"/people/{alice.pk}/a-slug/"
    assert ask(Client(), [path])["badges"] == {path: badge_html("offline")}


def test_a_profile_found_by_username_gets_its_badge(
    settings: SettingsWrapper, alice: User
) -> None:
    settings.WHOS_ONLINE_DECORATE = {"profiles": {"profile-by-name": "username"}}
    presence.record_user(alice.pk)
    assert ask(Client(), ["/u/alice/"])["badges"] == {"/u/alice/": badge_html("online")}


def test_an_escaped_path_is_resolved_as_a_request_path_is(
    settings: SettingsWrapper, django_user_model: type[User]
) -> None:
    settings.WHOS_ONLINE_DECORATE = {"profiles": {"profile-by-name": "username"}}
    jorg = django_user_model.objects.create_user("jörg")
    presence.record_user(jorg.pk)
    path = "/u/j%C3%B6rg/"
    assert ask(Client(), [path])["badges"] == {path: badge_html("online")}


def test_a_hidden_users_badge_is_offline_as_the_gate_says(
    alice: User, bob: User
) -> None:
    presence.record_user(bob.pk)
    api.set_invisible(bob, True)
    viewer = Client()
    viewer.force_login(alice)
    path = f"/people/{bob.pk}/"
    assert ask(viewer, [path])["badges"] == {path: badge_html("offline")}


def test_where_the_viewer_may_not_learn_a_status_there_is_no_badge(
    settings: SettingsWrapper, alice: User
) -> None:
    settings.WHOS_ONLINE_NAMES_VISIBLE_TO = "users"
    presence.record_user(alice.pk)
    path = f"/people/{alice.pk}/"
    assert ask(Client(), [path])["badges"] == {path: ""}


def test_a_profile_of_nobody_gets_no_badge() -> None:
    assert ask(Client(), ["/people/999/", "/u/nobody/"])["badges"] == {}


@pytest.mark.parametrize("pk", ["9" * 30, "0"])
def test_a_profile_id_the_database_cannot_hold_gets_no_badge(pk: str) -> None:
    assert ask(Client(), [f"/people/{pk}/"])["badges"] == {}


def test_a_profile_by_a_field_the_user_model_lacks_gets_no_badge(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_DECORATE = {"profiles": {"profile": "slug"}}
    assert ask(Client(), ["/people/1/alice/"])["badges"] == {}


def test_without_the_setting_no_link_gets_a_badge(
    settings: SettingsWrapper, alice: User
) -> None:
    del settings.WHOS_ONLINE_DECORATE
    get_config.cache_clear()  # pytest-django's del sends no setting_changed
    presence.record_user(alice.pk)
    assert ask(Client(), [f"/people/{alice.pk}/"])["badges"] == {}


# "N viewing" beside links to pages in rooms, and in marked elements.


def test_a_link_to_a_thread_says_how_many_are_viewing_it(alice: User) -> None:
    reading("/thread/1/", alice)
    reading("/thread/1/")
    found = ask(Client(REMOTE_ADDR="192.0.2.30"), ["/thread/1/", "/thread/2/"])
    assert "2 viewing" in found["viewing"]["/thread/1/"]
    assert found["viewing"]["/thread/2/"] == ""  # nobody there


def test_a_link_to_a_page_in_a_room_by_its_url_name_says_how_many_are_viewing(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": "topic:{pk}"}
    topic = Group.objects.create(name="Rules")
    reading(f"/forum/{topic.pk}/")
    found = ask(Client(REMOTE_ADDR="192.0.2.30"), [f"/forum/{topic.pk}/"])
    assert found["viewing"] == {
        f"/forum/{topic.pk}/": '<span class="whos-online-viewing">1 viewing</span>'
    }


def test_a_link_to_a_page_in_no_room_says_nothing() -> None:
    assert ask(Client(), ["/members/", "/nowhere/"])["viewing"] == {}


def test_a_marked_element_says_how_many_are_in_its_room() -> None:
    reading("/thread/1/")
    token = room_token("thread:1", AnonymousUser())
    found = ask(Client(REMOTE_ADDR="192.0.2.30"), rooms=[token])
    assert "1 viewing" in found["rooms"][token]


def test_a_room_token_issued_to_another_viewer_is_ignored(alice: User) -> None:
    reading("/thread/1/")
    assert ask(Client(), rooms=[room_token("thread:1", alice), "forged"]) == {
        "badges": {},
        "viewing": {},
        "rooms": {},
    }


def test_a_hidden_reader_is_counted_as_the_gate_says(
    alice: User, bob: User, django_user_model: type[User]
) -> None:
    api.set_invisible(bob, True)
    reading("/thread/1/", bob)
    staff = django_user_model.objects.create_user("carol", is_staff=True)
    as_staff, as_alice = Client(), Client()
    as_staff.force_login(staff)
    as_alice.force_login(alice)
    assert "1 viewing" in ask(as_staff, ["/thread/1/"])["viewing"]["/thread/1/"]
    assert ask(as_alice, ["/thread/1/"])["viewing"]["/thread/1/"] == ""


# Bounded, and one request for the whole page.


def test_paths_past_the_most_asked_are_not_looked_at(alice: User) -> None:
    presence.record_user(alice.pk)
    paths = [f"/nowhere/{n}/" for n in range(MOST_PATHS)] + [f"/people/{alice.pk}/"]
    assert ask(Client(), paths)["badges"] == {}


def test_a_path_repeated_counts_once_towards_the_most(alice: User) -> None:
    presence.record_user(alice.pk)
    paths = ["/nowhere/"] * (MOST_PATHS + 5) + [f"/people/{alice.pk}/"]
    assert list(ask(Client(), paths)["badges"]) == [f"/people/{alice.pk}/"]


def test_a_path_longer_than_the_longest_is_not_looked_at(alice: User) -> None:
    path = f"/people/{alice.pk}/{'a' * LONGEST_PATH}/"
    assert ask(Client(), [path])["badges"] == {}


def test_room_tokens_past_the_most_are_not_looked_at() -> None:
    tokens = [f"forged-{n}" for n in range(MOST_ROOMS)]
    tokens.append(room_token("thread:1", AnonymousUser()))
    assert ask(Client(), rooms=tokens)["rooms"] == {}


@pytest.fixture
def under_a_prefix() -> Iterator[None]:
    """The site served under /site/, as a WSGI server's SCRIPT_NAME sets."""
    set_script_prefix("/site/")
    yield
    set_script_prefix("/")


@pytest.mark.usefixtures("under_a_prefix")
def test_a_path_outside_the_sites_script_prefix_is_not_looked_at(
    alice: User,
) -> None:
    presence.record_user(alice.pk)
    inside, outside = f"/site/people/{alice.pk}/", f"/people/{alice.pk}/"
    found = ask(Client(), [inside, outside])
    assert found["badges"] == {inside: badge_html("online")}


@pytest.mark.usefixtures("warm_scripts")
def test_badges_and_rooms_of_a_page_cost_two_round_trips(
    alice: User, bob: User, redis_commands: CommandCounter
) -> None:
    presence.record_user(alice.pk)
    client = reading("/thread/1/", bob)
    redis_commands.reset()
    ask(
        client,
        [f"/people/{alice.pk}/", f"/people/{bob.pk}/", "/thread/1/", "/thread/2/"],
        rooms=[room_token("thread:3", bob)],
    )
    assert redis_commands.round_trips <= 2


def test_visitors_who_are_not_logged_in_are_refused_where_the_site_says_so(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_ANONYMOUS_CAN_VIEW = False
    assert Client().post(DECORATE, {"path": "/thread/1/"}).status_code == 403


def test_the_answer_is_never_cached() -> None:
    response = Client().post(DECORATE, {"path": "/thread/1/"})
    assert "no-store" in response["Cache-Control"]
    assert "Cookie" in response["Vary"]


def test_asking_does_not_move_the_asker_out_of_their_room(alice: User) -> None:
    client = reading("/thread/1/", alice)
    ask(client, ["/thread/2/"])
    assert api.is_viewing(alice, "thread:1")


# The tags.


def test_the_tag_renders_the_script_with_the_endpoint_and_its_interval() -> None:
    html = Client().get("/decorated/").content.decode()
    assert 'src="whos_online/decorate.js"' in html  # the tests set no STATIC_URL
    assert f'data-whos-online-decorate="{DECORATE}"' in html
    assert 'data-whos-online-seconds="30"' in html
    assert f'data-whos-online-most="{MOST_PATHS}"' in html


def test_the_tag_renders_nothing_where_the_endpoints_are_not_included(
    settings: SettingsWrapper,
) -> None:
    settings.ROOT_URLCONF = "tests.urls_without_whos_online"
    drawn = engines["django"].from_string(
        "{% load whos_online %}{% whos_online_decorate %}"
    )
    assert drawn.render({}).strip() == ""


def test_a_marked_elements_token_is_the_viewers_own(alice: User) -> None:
    reading("/thread/1/")
    client = Client()
    client.force_login(alice)
    html = client.get("/decorated/").content.decode()
    token = html.split("data-whos-online-viewing='")[1].split("'")[0]
    assert "1 viewing" in ask(client, rooms=[token])["rooms"][token]


def test_room_token_of_a_name_that_is_no_room_is_empty() -> None:
    drawn = engines["django"].from_string("{% load whos_online %}{% room_token r %}")
    assert drawn.render({"r": "not a room"}) == ""


# The setting and its check.


def test_profile_pages_that_resolve_pass_the_check(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_DECORATE = {
        "profiles": {"profile": "pk", "profile-by-name": "username"}
    }
    assert url_checks.check_decorate() == []


def test_a_profile_page_that_is_no_url_name_is_w009(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_DECORATE = {"profiles": "profiel"}
    (message,) = url_checks.check_decorate()
    assert message.id == "whos_online.W009"
    assert "'profiel'" in message.msg


def test_a_profile_page_without_the_keyword_argument_is_w009(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_DECORATE = {"profiles": {"profile-by-name": "pk"}}
    (message,) = url_checks.check_decorate()
    assert message.id == "whos_online.W009"
    assert "keyword argument 'pk'" in message.msg


def test_a_profile_found_by_a_field_the_user_model_lacks_is_e013(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_DECORATE = {"profiles": {"profile": "slug"}}
    assert [m.id for m in url_checks.check_decorate()] == ["whos_online.E013"]


def test_a_profile_found_by_a_field_that_is_not_unique_is_e013(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_DECORATE = {"profiles": {"profile-by-name": "first_name"}}
    ids = [message.id for message in url_checks.check_decorate()]
    assert "whos_online.E013" in ids


@pytest.mark.parametrize(
    "value",
    [
        "profile",
        {"profile": "pk"},
        {"profiles": ""},
        {"profiles": ["profile"]},
        {"profiles": {"profile": 1}},
        {"profiles": "profile", "rooms": True},
    ],
)
def test_a_decorate_setting_of_the_wrong_shape_is_e007(
    settings: SettingsWrapper, value: object
) -> None:
    settings.WHOS_ONLINE_DECORATE = value
    assert [m.id for m in checks.check_settings()] == ["whos_online.E007"]
    assert url_checks.check_decorate() == []
