"""Invisible mode: a user chooses to appear offline, and is hidden everywhere
the public looks, at once, while staff still see them marked hidden."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.template import engines
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import Settings as SettingsWrapper
from redis import Redis
from redis.exceptions import ResponseError as RedisResponseError

from tests import presence
from tests.conftest import Clock
from tests.test_signals import Heard
from whos_online import api
from whos_online.models import Visibility
from whos_online.signals import user_came_online
from whos_online.store import get_store

pytestmark = pytest.mark.django_db

VISIBILITY = "/whos-online/visibility/"


def members(redis_client: Redis, kind: str, room: str | None = None) -> list[str]:
    found: list[bytes] = redis_client.zrange(presence.key(kind, room), 0, -1)  # type: ignore[assignment]
    return presence.members_of(found)


@pytest.fixture
def alices(alice: User) -> Client:
    """Alice's browser, logged in, her first page seen."""
    browser = Client()
    browser.force_login(alice)
    browser.get("/")
    return browser


@pytest.fixture
def staff(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("staff", is_staff=True)


def appear_offline(browser: Client, choice: str = "1") -> int:
    return browser.post(VISIBILITY, {"invisible": choice}).status_code


def test_appearing_offline_hides_the_user_at_once(
    alices: Client, alice: User, redis_client: Redis
) -> None:
    assert appear_offline(alices) == 204
    assert members(redis_client, "users") == []
    assert members(redis_client, "hidden") == [str(alice.pk)]


def test_the_choice_is_kept_in_the_database(alices: Client, alice: User) -> None:
    appear_offline(alices)
    assert Visibility.objects.get(user=alice).invisible
    assert api.is_invisible(alice)


def test_the_public_sees_an_invisible_user_as_offline(
    alices: Client, alice: User, staff: User
) -> None:
    appear_offline(alices)
    assert api.status(alice) == "offline"
    assert api.last_seen(alice) is None
    assert api.status(alice, viewer=staff) == "online"


@pytest.mark.parametrize("url", ["/widget/", "/whos-online/widget/"])
def test_lists_leave_an_invisible_user_out(alices: Client, url: str) -> None:
    appear_offline(alices)
    assert "alice" not in Client().get(url).content.decode()


def test_the_json_endpoint_leaves_an_invisible_user_out(alices: Client) -> None:
    appear_offline(alices)
    data = Client().get("/whos-online/online.json").json()
    assert data["users"] == []
    assert data["counts"]["hidden"] is None  # not even counted, by default


def test_staff_see_an_invisible_user_marked_hidden(alices: Client, staff: User) -> None:
    appear_offline(alices)
    staff_browser = Client()
    staff_browser.force_login(staff)
    html = staff_browser.get("/widget/").content.decode()
    assert (
        "<bdi>alice</bdi></span> <small>(hidden)</small>"
        in html.replace("</bdi> <small>", "</bdi></span> <small>")
        or "whos-online-hidden" in html
    )


def test_an_invisible_user_leaves_the_public_list_of_their_rooms_at_once(
    alices: Client, alice: User, redis_client: Redis
) -> None:
    alices.get("/thread/1/")
    appear_offline(alices)
    assert members(redis_client, "users", "thread:1") == []
    assert members(redis_client, "hidden", "thread:1") == [str(alice.pk)]


def test_an_invisible_user_visiting_a_room_is_hidden_there(
    alices: Client, alice: User, redis_client: Redis
) -> None:
    appear_offline(alices)
    alices.get("/thread/2/")
    assert members(redis_client, "hidden", "thread:2") == [str(alice.pk)]


def test_recording_a_user_reads_their_choice_from_the_database_once(
    alices: Client, alice: User, redis_client: Redis, clock: Clock
) -> None:
    appear_offline(alices)
    clock.advance(301)  # her guard ran out
    with CaptureQueriesContext(connection) as captured:
        alices.get("/")
    read = [q["sql"].split()[0] for q in captured if "SAVEPOINT" not in q["sql"]]
    assert len(read) == 3  # the session, the user, her choice
    assert any("whos_online_visibility" in q["sql"] for q in captured)
    assert members(redis_client, "hidden") == [str(alice.pk)]


def test_choosing_the_same_twice_changes_nothing(
    alices: Client, alice: User, redis_client: Redis
) -> None:
    alices.get("/thread/1/")
    appear_offline(alices)
    appear_offline(alices)
    assert members(redis_client, "hidden", "thread:1") == [str(alice.pk)]


def test_the_api_sets_the_choice(alice: User, redis_client: Redis) -> None:
    presence.record_user(alice.pk)
    api.set_invisible(alice)
    assert members(redis_client, "hidden") == [str(alice.pk)]
    api.set_invisible(alice, False)
    assert members(redis_client, "users") == [str(alice.pk)]


def test_appearing_online_again_shows_the_user_at_once(
    alices: Client, alice: User, redis_client: Redis
) -> None:
    appear_offline(alices)
    assert appear_offline(alices, "0") == 204
    assert members(redis_client, "users") == [str(alice.pk)]
    assert not api.is_invisible(alice)


def test_after_redis_lost_its_data_the_choice_still_holds(
    alices: Client, alice: User, redis_client: Redis, clock: Clock
) -> None:
    appear_offline(alices)
    redis_client.delete(presence.key("invisible"), presence.key("hidden"))
    clock.advance(301)
    alices.get("/")
    assert members(redis_client, "hidden") == [str(alice.pk)]
    assert members(redis_client, "users") == []


def test_an_invisible_user_arriving_is_announced_as_hidden(alice: User) -> None:
    Visibility.objects.create(user=alice, invisible=True)
    heard = Heard()
    user_came_online.connect(heard)
    try:
        browser = Client()
        browser.force_login(alice)
        browser.get("/")
    finally:
        user_came_online.disconnect(heard)
    assert heard.payloads == [{"user_pk": str(alice.pk), "hidden": True}]


def test_with_invisible_mode_off_the_choice_is_ignored(
    alices: Client, alice: User, redis_client: Redis, settings: SettingsWrapper
) -> None:
    appear_offline(alices)
    settings.WHOS_ONLINE_ALLOW_INVISIBLE = False
    other = Client()
    other.force_login(alice)
    other.get("/")
    assert str(alice.pk) in members(redis_client, "users")
    assert appear_offline(alices) == 404


def test_choosing_needs_a_logged_in_user() -> None:
    assert appear_offline(Client()) == 403


def test_choosing_needs_post(alices: Client) -> None:
    assert alices.get(VISIBILITY).status_code == 405


def test_choosing_needs_the_csrf_token(alice: User) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    assert appear_offline(browser) == 403


def test_choosing_needs_a_clear_answer(alices: Client) -> None:
    assert appear_offline(alices, "maybe") == 400


def test_choosing_goes_back_to_a_page_of_the_site(alices: Client) -> None:
    response = alices.post(VISIBILITY, {"invisible": "1", "next": "/forum/"})
    assert (response.status_code, response["Location"]) == (302, "/forum/")


def test_choosing_never_goes_to_another_site(alices: Client) -> None:
    response = alices.post(VISIBILITY, {"invisible": "1", "next": "https://x.test/"})
    assert response.status_code == 204


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_the_choice_is_still_kept(alice: User) -> None:
    browser = Client()
    browser.force_login(alice)
    assert appear_offline(browser) == 204
    assert api.is_invisible(alice)


Render = Callable[..., str]


@pytest.fixture
def render_toggle() -> Render:
    def render(user: object) -> str:
        request = RequestFactory().get("/page/")
        request.user = user  # type: ignore[assignment]
        template = engines["django"].from_string(
            "{% load whos_online %}{% whos_online_visibility %}"
        )
        return template.render({"csrf_token": "t"}, request)

    return render


def test_the_toggle_offers_to_appear_offline(
    render_toggle: Render, alice: User
) -> None:
    html = render_toggle(alice)
    assert "Appear offline" in html
    assert 'name="next" value="/page/"' in html


def test_the_toggle_offers_to_appear_online_again(
    render_toggle: Render, alice: User
) -> None:
    Visibility.objects.create(user=alice, invisible=True)
    assert "Appear online" in render_toggle(alice)


def test_the_toggle_is_not_offered_to_guests(render_toggle: Render) -> None:
    assert render_toggle(AnonymousUser()).strip() == ""


def test_the_toggle_is_not_offered_when_invisible_mode_is_off(
    render_toggle: Render, alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_ALLOW_INVISIBLE = False
    assert "Appear offline" not in render_toggle(alice)
    settings.WHOS_ONLINE_LAST_SEEN_SHOWN = "approximate"  # and no other choice
    assert render_toggle(alice).strip() == ""


# A site that forgot `migrate whos_online`: presence never breaks a page, and
# nobody is listed as visible on a guess.


@pytest.fixture
def unmigrated(redis_client: Redis, visibility_table_missing: None) -> None:
    """The visibility table is missing: every record of a user asks the
    database, which cannot say."""


@pytest.mark.usefixtures("unmigrated")
def test_without_the_table_a_logged_in_page_is_served(alice: User) -> None:
    browser = Client()
    browser.force_login(alice)
    assert browser.get("/").status_code == 200


@pytest.mark.usefixtures("unmigrated")
def test_without_the_table_a_user_is_counted_but_not_listed(
    alice: User, redis_client: Redis
) -> None:
    browser = Client()
    browser.force_login(alice)
    browser.get("/")
    assert members(redis_client, "users") == []
    assert members(redis_client, "hidden") == [str(alice.pk)]


@pytest.mark.usefixtures("unmigrated")
def test_without_the_table_the_toggle_renders(
    render_toggle: Render, alice: User
) -> None:
    assert "Appear online" in render_toggle(alice)


@pytest.mark.usefixtures("unmigrated")
def test_without_the_table_choosing_says_it_is_unavailable(alice: User) -> None:
    browser = Client()
    browser.force_login(alice)
    assert appear_offline(browser) == 503


@pytest.mark.usefixtures("unmigrated")
def test_without_the_table_the_api_says_invisible(alice: User) -> None:
    assert api.is_invisible(alice)
    api.set_invisible(alice)  # kept nowhere, and raises nothing


def test_an_invisible_reader_is_not_listed_in_their_rooms_widget_even_to_themself(
    alices: Client,
) -> None:
    appear_offline(alices)
    alices.get("/thread/3/")
    page = alices.get("/thread/3/").text
    assert "alice" not in page
    assert "0 visitors online" in page


# The database's choice wins over whatever Redis holds.


def test_a_choice_made_while_redis_is_unreachable_applies_at_the_next_record(
    alices: Client, alice: User, redis_client: Redis, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "unreachable"
    assert appear_offline(alices) == 204
    settings.WHOS_ONLINE_CACHE_ALIAS = "default"
    phone = Client()
    phone.force_login(alice)
    phone.get("/")
    assert members(redis_client, "users") == []
    assert members(redis_client, "hidden") == [str(alice.pk)]


def test_a_choice_made_while_redis_is_unreachable_is_recorded_by_the_same_browser(
    alices: Client, alice: User, redis_client: Redis, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_CACHE_ALIAS = "unreachable"
    appear_offline(alices)
    settings.WHOS_ONLINE_CACHE_ALIAS = "default"
    alices.get("/")  # the toggle dropped her guard: this page records her
    assert members(redis_client, "hidden") == [str(alice.pk)]


def test_a_choice_made_while_redis_refuses_it_is_applied_at_the_next_record(
    alices: Client, alice: User, redis_client: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*args: object) -> None:
        raise RedisResponseError("OOM command not allowed")

    client = get_store().client
    with monkeypatch.context() as patched:
        patched.setattr(client, "evalsha", refused)  # as at maxmemory
        patched.setattr(client, "eval", refused)
        assert appear_offline(alices) == 204
    assert members(redis_client, "users") == [str(alice.pk)]  # stale, for now
    alices.get("/")
    assert members(redis_client, "users") == []
    assert members(redis_client, "hidden") == [str(alice.pk)]


def test_a_user_whose_choice_changed_elsewhere_leaves_the_public_list_of_their_rooms(
    alices: Client, alice: User, redis_client: Redis, settings: SettingsWrapper
) -> None:
    alices.get("/thread/3/")
    settings.WHOS_ONLINE_CACHE_ALIAS = "unreachable"
    appear_offline(alices)
    settings.WHOS_ONLINE_CACHE_ALIAS = "default"
    alices.get("/")
    assert members(redis_client, "users", "thread:3") == []
    assert members(redis_client, "hidden", "thread:3") == [str(alice.pk)]


def test_a_hidden_user_logging_in_from_a_guarded_browser_is_recorded_hidden(
    django_user_model: type[User], redis_client: Redis, settings: SettingsWrapper
) -> None:
    """The guest's guard, still holding, says nothing of who logs in."""
    settings.WHOS_ONLINE_IS_HIDDEN = "tests.hiding.is_ghost"
    ghost = django_user_model.objects.create_user("ghost")
    browser = Client()
    browser.get("/")  # a guest, guarded from now on
    browser.post(f"/login/{ghost.pk}/")
    assert members(redis_client, "users") == []
    assert members(redis_client, "hidden") == [str(ghost.pk)]


def test_a_user_who_chose_invisible_logging_in_from_a_guarded_browser_is_hidden(
    alice: User, redis_client: Redis
) -> None:
    Visibility.objects.create(user=alice, invisible=True)
    browser = Client()
    browser.get("/")
    browser.post(f"/login/{alice.pk}/")
    assert members(redis_client, "users") == []
    assert members(redis_client, "hidden") == [str(alice.pk)]
