"""The widget rendered once per shared snapshot and kind of viewer: pages
that share a snapshot (``WHOS_ONLINE_SNAPSHOT_MAX_AGE``) and whose viewers
may learn the same get the same HTML, rendered once by their process;
whatever sets a viewer apart renders apart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import translation
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import Clock

pytestmark = pytest.mark.django_db

WIDGET = "whos_online/widget.html"
BOX = "whos_online/whos_online.html"


@pytest.fixture(autouse=True)
def shared_snapshots(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30


def guarded(client: Client, path: str = "/busy-page/") -> Client:
    """``client`` after its first page: recorded, so its next pages share the
    process's snapshot (a visitor who just arrived gets their own)."""
    client.get(path)
    return client


def site_template(
    settings: SettingsWrapper, tmp_path: Path, name: str, source: str
) -> None:
    """The site's own copy of the app's template ``name``."""
    own = tmp_path / "whos_online" / name
    own.parent.mkdir()
    own.write_text(source)
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path]}]


def widget_renders(response: Any, name: str = WIDGET) -> int:
    return [template.name for template in response.templates].count(name)


def widget_of(response: Any) -> str:
    html = str(response.content.decode())
    return html[html.index('<div class="whos-online-widget"') :]


def test_guests_pages_sharing_a_snapshot_render_the_widget_once(alice: User) -> None:
    presence.record_user(alice.pk)
    arrived = Client(REMOTE_ADDR="192.0.2.1").get("/busy-page/")
    assert widget_renders(arrived) == 1  # a snapshot of their own, then shared
    first = guarded(Client(REMOTE_ADDR="192.0.2.2"))
    second = guarded(Client(REMOTE_ADDR="192.0.2.3"))
    pages = [client.get("/busy-page/") for client in (first, second, first)]
    assert [widget_renders(page) for page in pages] == [0, 0, 0]
    assert widget_of(pages[0]) == widget_of(pages[1])
    assert "alice" in widget_of(pages[1])


def test_a_new_snapshot_showing_the_same_renders_no_widget_again(
    clock: Clock, alice: User
) -> None:
    presence.record_user(alice.pk)
    guest = guarded(Client(REMOTE_ADDR="192.0.2.2"))
    before = guest.get("/busy-page/")
    clock.advance(31)  # past the snapshot's age: a new one, the same people
    after = guest.get("/busy-page/")
    assert widget_renders(after) == 0
    assert widget_of(after) == widget_of(before)


def test_a_new_snapshot_with_someone_new_renders_the_widget_anew(
    clock: Clock, alice: User, bob: User
) -> None:
    presence.record_user(alice.pk)
    guest = guarded(Client(REMOTE_ADDR="192.0.2.2"))
    guest.get("/busy-page/")
    presence.record_user(bob.pk)
    clock.advance(31)
    after = guest.get("/busy-page/")
    assert widget_renders(after) == 1
    assert "bob" in widget_of(after)


def test_a_name_changed_in_the_database_shows_once_what_was_read_ages_out(
    clock: Clock, alice: User
) -> None:
    presence.record_user(alice.pk)
    guest = guarded(Client(REMOTE_ADDR="192.0.2.2"))
    guest.get("/busy-page/")
    alice.username = "alicia"
    alice.save()
    clock.advance(31)
    assert "alicia" in widget_of(guest.get("/busy-page/"))


PERSON = "whos_online/person.html"


def test_a_person_listed_is_rendered_once_per_process_in_any_list(
    alice: User,
) -> None:
    """A room's list changes with each reader who comes in; its people
    seldom do."""
    presence.record_in_room("thread:7", "users", str(alice.pk))
    first = guarded(Client(REMOTE_ADDR="192.0.2.2"))
    second = guarded(Client(REMOTE_ADDR="192.0.2.3"))
    first.get("/thread/7/")
    page = second.get("/thread/7/")
    assert widget_renders(page) == 1  # the room's list: the first reader came in
    assert widget_renders(page, PERSON) == 0
    assert '<span class="whos-online-user"><bdi>alice</bdi></span>' in widget_of(page)


def test_a_rooms_counts_and_window_are_rendered_once_for_the_same_counts(
    alice: User,
) -> None:
    presence.record_in_room("thread:7", "users", str(alice.pk))
    first = guarded(Client(REMOTE_ADDR="192.0.2.2"))
    second = guarded(Client(REMOTE_ADDR="192.0.2.3"))
    before = first.get("/thread/7/")
    first.get("/thread/8/")  # the first reader moves on
    page = second.get("/thread/7/")
    assert widget_renders(page) == 1  # its own reader listed
    assert widget_renders(page, "whos_online/tally.html") == 0
    assert widget_renders(page, "whos_online/window.html") == 0
    assert "1 user</li>" in widget_of(page)
    assert "1 guest</li>" in widget_of(page)
    assert widget_of(page) == widget_of(before)


@pytest.mark.usefixtures("languages")
def test_a_person_is_rendered_in_each_language(
    django_user_model: type[User], alice: User
) -> None:
    presence.record_user(alice.pk, hidden=True)
    staff = django_user_model.objects.create_user("s", is_staff=True)
    pages = []
    for language in ("en", "fr"):
        client = Client(headers={"accept-language": language})
        client.force_login(staff)
        pages.append(widget_of(guarded(client).get("/busy-page/")))
    assert "<bdi>alice</bdi> <small>(hidden)</small>" in pages[0]
    assert "<bdi>alice</bdi> <small>(masqué)</small>" in pages[1]


def test_a_sites_own_person_template_renders_for_each_person(
    settings: SettingsWrapper, tmp_path: Path, alice: User, bob: User
) -> None:
    site_template(settings, tmp_path, "person.html", "[{{ online.name }}]")
    for user in (alice, bob):
        presence.record_user(user.pk)
    page = guarded(Client()).get("/busy-page/")
    assert widget_renders(page, PERSON) == 2
    assert "[bob], [alice]" in widget_of(page)


def test_the_box_around_a_shared_widget_is_rendered_once_too(alice: User) -> None:
    presence.record_user(alice.pk)
    first = guarded(Client(REMOTE_ADDR="192.0.2.2"))
    second = guarded(Client(REMOTE_ADDR="192.0.2.3"))
    pages = [client.get("/busy-page/") for client in (first, second)]
    assert [widget_renders(page, BOX) for page in pages] == [0, 0]
    assert '<section class="whos-online"' in pages[1].content.decode()


def attribute_of(response: Any, name: str) -> str:
    html = str(response.content.decode())
    start = html.index(f'{name}="') + len(name) + 2
    return html[start : html.index('"', start)]


def here_token_of(response: Any) -> str:
    return attribute_of(response, "data-whos-online-here")


def refresh_url_of(response: Any) -> str:
    return attribute_of(response, "data-whos-online-refresh")


def test_a_rooms_box_is_rendered_once_with_each_readers_own_token_put_in() -> None:
    first = guarded(Client(REMOTE_ADDR="192.0.2.2"))
    second = guarded(Client(REMOTE_ADDR="192.0.2.3"))
    pages = [client.get("/thread/7/") for client in (first, second)]
    assert widget_renders(pages[1], BOX) == 0
    tokens = [here_token_of(page) for page in pages]
    assert tokens[0] != tokens[1]
    refreshes = [refresh_url_of(page) for page in pages]
    assert refreshes[0] != refreshes[1]
    assert refreshes[1].startswith("/whos-online/widget/?room=")


def test_a_rooms_box_rendered_once_names_each_room_its_own() -> None:
    reader = guarded(Client())
    first = reader.get("/thread/7/")
    second = reader.get("/thread/8/")
    assert widget_renders(second, BOX) == 0
    assert attribute_of(first, "data-whos-online-room") == "thread:7"
    assert attribute_of(second, "data-whos-online-room") == "thread:8"


@pytest.mark.parametrize(
    ("path", "shown"), [("/busy-page/", ""), ("/thread/7/", " in thread:7")]
)
def test_a_sites_own_box_template_renders_for_each_viewer(
    settings: SettingsWrapper,
    tmp_path: Path,
    alice: User,
    bob: User,
    path: str,
    shown: str,
) -> None:
    site_template(
        settings,
        tmp_path,
        "whos_online.html",
        "<section>for {{ request.user }}{% if room_key %} in {{ room_key }}"
        "{% endif %}</section>",
    )
    alices, bobs = Client(), Client()
    alices.force_login(alice)
    bobs.force_login(bob)
    guarded(alices), guarded(bobs)
    assert f"for alice{shown}<" in alices.get(path).content.decode()
    assert f"for bob{shown}<" in bobs.get(path).content.decode()


def test_users_who_may_learn_the_same_share_one_render(alice: User, bob: User) -> None:
    presence.record_user(alice.pk)
    alices, bobs = Client(), Client()
    alices.force_login(alice)
    bobs.force_login(bob)
    guarded(alices), guarded(bobs)
    assert widget_renders(alices.get("/busy-page/")) == 0
    assert widget_renders(bobs.get("/busy-page/")) == 0
    assert "alice" in widget_of(bobs.get("/busy-page/"))


def test_a_guest_and_a_user_each_get_the_widget_their_kind_may_learn(
    settings: SettingsWrapper, alice: User, bob: User
) -> None:
    settings.WHOS_ONLINE_NAMES_VISIBLE_TO = "users"
    presence.record_user(alice.pk)
    bobs = Client()
    bobs.force_login(bob)
    guest = guarded(Client(REMOTE_ADDR="192.0.2.1"))
    guarded(bobs)
    assert "alice" in widget_of(bobs.get("/busy-page/"))
    assert "alice" not in widget_of(guest.get("/busy-page/"))
    assert "alice" in widget_of(bobs.get("/busy-page/"))


def test_staff_get_their_own_render_with_hidden_users(
    django_user_model: type[User],
) -> None:
    ghost = django_user_model.objects.create_user("ghost")
    presence.record_user(ghost.pk, hidden=True)
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    user = Client()
    user.force_login(django_user_model.objects.create_user("u"))
    guarded(staff), guarded(user)
    assert "ghost" in widget_of(staff.get("/busy-page/"))
    assert "ghost" not in widget_of(user.get("/busy-page/"))
    assert "ghost" in widget_of(staff.get("/busy-page/"))


def test_under_a_rule_of_whom_each_viewer_may_see_each_viewer_renders_apart(
    settings: SettingsWrapper, django_user_model: type[User], alice: User
) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.friends_only"
    presence.record_user(alice.pk)
    friend = Client()
    friend.force_login(django_user_model.objects.create_user("friend-of-alice"))
    stranger = Client()
    stranger.force_login(django_user_model.objects.create_user("stranger"))
    guarded(friend), guarded(stranger)
    assert "alice" in widget_of(friend.get("/busy-page/"))
    reply = stranger.get("/busy-page/")
    assert widget_renders(reply) == 1
    assert "alice" not in widget_of(reply)


def test_a_choice_taken_since_the_render_shows_on_the_next_page(alice: User) -> None:
    presence.record_user(alice.pk)
    guest = guarded(Client())
    assert "alice" in widget_of(guest.get("/busy-page/"))
    alices = Client()
    alices.force_login(alice)
    alices.post("/whos-online/visibility/", {"invisible": "1"})
    assert "alice" not in widget_of(guest.get("/busy-page/"))


@pytest.fixture
def languages(settings: SettingsWrapper) -> Iterator[None]:
    """Each request in the language its browser asks for."""
    settings.MIDDLEWARE = [
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.locale.LocaleMiddleware",
        *settings.MIDDLEWARE[1:],
    ]
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.mark.usefixtures("languages")
def test_each_language_gets_its_own_render(alice: User) -> None:
    presence.record_user(alice.pk)
    english = guarded(Client(headers={"accept-language": "en"}))
    french = guarded(Client(headers={"accept-language": "fr"}))
    assert "visitors online" in widget_of(english.get("/busy-page/"))
    assert "visiteurs en ligne" in widget_of(french.get("/busy-page/"))


def test_each_time_zone_gets_its_own_render(alice: User) -> None:
    presence.record_user(alice.pk)
    guest = guarded(Client())
    utc = widget_of(guest.get("/busy-page/"))
    tokyo = widget_of(guest.get("/busy-page/", {"tz": "Asia/Tokyo"}))
    assert "Most ever online" in utc
    assert utc != tokyo


def test_a_sites_own_widget_template_renders_for_each_viewer(
    settings: SettingsWrapper, tmp_path: Path, alice: User, bob: User
) -> None:
    site_template(
        settings,
        tmp_path,
        "widget.html",
        '<div class="whos-online-widget">for {{ request.user }}</div>',
    )
    presence.record_user(alice.pk)
    alices, bobs = Client(), Client()
    alices.force_login(alice)
    bobs.force_login(bob)
    guarded(alices), guarded(bobs)
    assert "for alice" in widget_of(alices.get("/busy-page/"))
    assert "for bob" in widget_of(bobs.get("/busy-page/"))


def test_a_page_a_cache_keeps_shows_a_guest_no_render_made_for_staff(
    django_user_model: type[User],
) -> None:
    ghost = django_user_model.objects.create_user("ghost")
    presence.record_user(ghost.pk, hidden=True)
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    guarded(staff)
    assert "ghost" in widget_of(staff.get("/busy-page/"))  # staff's render kept
    staff.get("/cached-output/s/")  # the first to open the page a cache keeps
    assert "ghost" not in widget_of(Client().get("/cached-output/s/"))


def test_the_decorate_script_is_rendered_once_per_process() -> None:
    """It shows nothing of its viewer: every page gets the same tag."""
    pages = [Client().get("/decorated/") for _ in range(2)]
    assert widget_renders(pages[1], "whos_online/decorate.html") == 0
    assert 'data-whos-online-decorate="/whos-online/decorate/"' in (
        pages[1].content.decode()
    )


def csrf_of(page: Any) -> str:
    """The CSRF token ``{% csrf_token %}`` wrote into ``page``."""
    html: str = page.content.decode()
    start = html.index('name="csrfmiddlewaretoken" value="') + 34
    return html[start : html.index('"', start)]


def test_a_users_heartbeat_is_rendered_once_with_their_own_token_put_in(
    alice: User,
) -> None:
    client = Client()
    client.force_login(alice)
    pages = [client.get("/uncached-thread/1/") for _ in range(2)]
    assert widget_renders(pages[1], "whos_online/heartbeat.html") == 0
    assert f'data-whos-online-csrf="{csrf_of(pages[1])}"' in pages[1].content.decode()


def test_a_users_toggle_is_rendered_once_with_their_own_path_put_in_escaped(
    alice: User,
) -> None:
    client = Client()
    client.force_login(alice)
    client.get("/uncached-thread/1/")
    page = client.get("/uncached-thread/1/?a=1&b=2")
    html = page.content.decode()
    assert widget_renders(page, "whos_online/visibility.html") == 0
    assert 'name="next" value="/uncached-thread/1/?a=1&amp;b=2"' in html
    assert html.count(f'name="csrfmiddlewaretoken" value="{csrf_of(page)}"') == 3


def test_refreshes_sharing_a_snapshot_render_the_widget_once(alice: User) -> None:
    presence.record_user(alice.pk)
    first = guarded(Client(REMOTE_ADDR="192.0.2.2"))
    second = guarded(Client(REMOTE_ADDR="192.0.2.3"))
    refreshes = [client.get("/whos-online/widget/") for client in (first, second)]
    assert widget_renders(refreshes[1]) == 0
    assert "alice" in refreshes[1].content.decode()


def test_a_sites_own_script_template_renders_for_each_page(
    settings: SettingsWrapper, tmp_path: Path
) -> None:
    site_template(
        settings, tmp_path, "decorate.html", "<script>/* the site's own */</script>"
    )
    pages = [Client().get("/decorated/") for _ in range(2)]
    assert widget_renders(pages[1], "whos_online/decorate.html") == 1
    assert "the site's own" in pages[1].content.decode()


def test_a_guests_page_of_the_heartbeat_and_toggle_sets_no_csrf_cookie() -> None:
    """Neither shows a guest a form, so neither asks for a CSRF token (which
    would set its cookie, and keep the page from shared caches)."""
    pages = [Client().get("/page-with-scripts/") for _ in range(2)]
    assert [page.content.strip() for page in pages] == [b"", b""]
    assert all("csrftoken" not in page.cookies for page in pages)
