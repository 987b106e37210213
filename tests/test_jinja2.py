"""whos_online.jinja2: the tags and filters in a site that renders with
Jinja2, through Django's Jinja2 backend. Each shows what the Django tag
shows, to the same viewer."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest
from django.template import engines
from django.test import Client, RequestFactory
from django.urls import resolve
from jinja2 import Environment
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from whos_online import api
from whos_online.jinja2 import environment, install
from whos_online.templatetags.whos_online import register

pytestmark = pytest.mark.django_db

STATUSES = "{{ alice|online_status }} {{ bob|online_status }}"
LAST_SEEN_LABELS = "{{ alice|last_seen_label }} {{ bob|last_seen_label }}"


def jinja2_first(settings: SettingsWrapper) -> None:
    """The site's Jinja2 backend ahead of DjangoTemplates, as many Jinja2
    sites list them, so its templates win over the app's of the same name."""
    *django_backends, jinja2_backend = settings.TEMPLATES
    settings.TEMPLATES = [jinja2_backend, *django_backends]


def request_of(user: Any, path: str = "/") -> HttpRequest:
    request = RequestFactory().get(path)
    request.user = user
    return request


def jinja(source: str, request: HttpRequest, **context: Any) -> str:
    return engines["jinja2"].from_string(source).render(context, request)


def django(source: str, request: HttpRequest, **context: Any) -> str:
    template = engines["django"].from_string("{% load whos_online %}" + source)
    return template.render(context, request)


@pytest.fixture
def online(alice: User, bob: User, django_user_model: type[User]) -> None:
    """Alice and bob online, bob invisible, and a guest."""
    presence.record_user(alice.pk)
    presence.record_user(bob.pk)
    api.set_invisible(bob, True)
    presence.record_guest("192.0.2.1")


@pytest.fixture
def staff(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("carol", is_staff=True)


@pytest.mark.usefixtures("online")
@pytest.mark.parametrize("viewer", ["guest", "alice", "staff"])
@pytest.mark.parametrize(
    ("in_jinja2", "in_django"),
    [
        ("{{ whos_online() }}", "{% whos_online %}"),
        (
            "{{ whos_online(limit=1, heading=3) }}",
            "{% whos_online limit=1 heading=3 %}",
        ),
        ("{{ online_count() }}", "{% online_count %}"),
        ('{{ online_count("users") }}', '{% online_count "users" %}'),
        ("{{ whos_online_beacon() }}", "{% whos_online_beacon %}"),
        # The filters are written alike in both.
        (STATUSES, STATUSES),
        (LAST_SEEN_LABELS, LAST_SEEN_LABELS),
    ],
)
def test_it_shows_what_the_django_tag_shows_to_the_same_viewer(
    in_jinja2: str, in_django: str, viewer: str, alice: User, bob: User, staff: User
) -> None:
    user = {"guest": AnonymousUser(), "alice": alice, "staff": staff}[viewer]
    request = request_of(user)
    users = {"alice": alice, "bob": bob}
    assert jinja(in_jinja2, request, **users) == django(in_django, request, **users)


@pytest.mark.usefixtures("online")
def test_an_invisible_user_is_listed_to_staff_only(alice: User, staff: User) -> None:
    assert "bob" not in jinja("{{ whos_online() }}", request_of(alice))
    assert "bob" in jinja("{{ whos_online() }}", request_of(staff))


@pytest.mark.usefixtures("online")
def test_a_room_widget_lists_the_room(alice: User) -> None:
    presence.record_in_room("thread:1", "users", str(alice.pk))
    html = jinja('{{ whos_online(room="thread:1") }}', request_of(AnonymousUser()))
    assert "Who's here" in html
    assert "alice" in html


@pytest.mark.usefixtures("online")
def test_badges_and_the_status_filters(alice: User, bob: User) -> None:
    source = (
        "{{ online_badge(alice) }} {{ alice|online_status }} {{ bob|online_status }}"
        " {{ (alice|last_seen) is not none }} {{ alice|last_seen|minutes_since }}"
    )
    html = jinja(source, request_of(AnonymousUser()), alice=alice, bob=bob)
    assert html.startswith('<span class="whos-online-badge whos-online-badge-online"')
    assert html.endswith(" online offline True 0")


@pytest.mark.usefixtures("online")
def test_count_text_says_a_count_as_the_pages_do() -> None:
    source = "{{ counts|count_text('guests') }}"
    counts = api.counts()
    assert jinja(source, request_of(AnonymousUser()), counts=counts) == "1"


def test_the_stylesheet_link_is_the_django_tags() -> None:
    request = request_of(AnonymousUser())
    django_link = django("{% whos_online_stylesheet %}", request)
    assert jinja("{{ whos_online_stylesheet() }}", request) == django_link
    assert 'rel="stylesheet"' in django_link


@pytest.mark.usefixtures("online")
def test_presence_list_follows_who_may_see_whom(
    alice: User, bob: User, staff: User
) -> None:
    source = "{% for row in presence_list(users) %}{{ row.status }} {% endfor %}"
    users = [alice, bob]
    assert jinja(source, request_of(alice), users=users) == "online offline "
    assert jinja(source, request_of(staff), users=users) == "online online "


def test_page_room_is_the_room_of_the_page(alice: User) -> None:
    request = request_of(alice, "/thread/7/")
    request.resolver_match = resolve("/thread/7/")
    assert jinja("{{ page_room() }}", request) == "thread:7"
    assert jinja("{{ page_room() }}", request_of(alice)) == "None"


def test_the_heartbeat_is_for_logged_in_users_with_the_csrf_token(
    alice: User,
) -> None:
    html = jinja("{{ whos_online_heartbeat() }}", request_of(alice))
    assert 'data-whos-online-heartbeat="/whos-online/heartbeat/"' in html
    assert 'data-whos-online-csrf=""' not in html
    assert (
        jinja("{{ whos_online_heartbeat() }}", request_of(AnonymousUser())).strip()
        == ""
    )


def test_the_visibility_toggle_posts_with_the_csrf_token(alice: User) -> None:
    html = jinja("{{ whos_online_visibility() }}", request_of(alice))
    assert "Appear offline" in html
    assert 'name="csrfmiddlewaretoken" value=""' not in html
    assert (
        jinja("{{ whos_online_visibility() }}", request_of(AnonymousUser())).strip()
        == ""
    )


def test_the_toggle_on_a_jinja2_page_turns_invisible_mode_on(alice: User) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    page = browser.get("/jinja2-page/").text
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    browser.post(
        "/whos-online/visibility/",
        {"csrfmiddlewaretoken": token, "invisible": "1", "next": "/"},
    )
    assert api.is_invisible(alice)


def test_a_jinja2_page_has_the_refreshing_widget_and_the_heartbeat(
    alice: User,
) -> None:
    browser = Client()
    browser.force_login(alice)
    page = browser.get("/jinja2-page/").text
    assert 'data-whos-online-refresh="/whos-online/widget/"' in page
    assert "alice" in page
    assert 'data-whos-online-heartbeat="/whos-online/heartbeat/"' in page


@pytest.mark.usefixtures("online")
def test_the_public_page_is_shown_in_the_sites_jinja2_layout(
    settings: SettingsWrapper,
) -> None:
    jinja2_first(settings)
    page = Client().get("/whos-online/")
    assert '<header class="site-header">A Jinja2 site</header>' in page.text
    assert "<title>Who is online · A Jinja2 site</title>" in page.text
    assert '<section class="whos-online-page">' in page.text
    assert "alice" in page.text
    assert "bob" not in page.text


@pytest.mark.usefixtures("online")
def test_the_public_page_in_a_jinja2_layout_can_be_sorted_and_filtered(
    settings: SettingsWrapper,
) -> None:
    jinja2_first(settings)
    page = Client().get("/whos-online/", {"sort": "name"}).text
    assert '<strong aria-current="true">name</strong>' in page
    assert '<a href="?sort=where&amp;show=all&amp;per=50">where</a>' in page
    assert '<a href="?sort=name&amp;show=crawlers&amp;per=50">crawlers</a>' in page


def test_install_gives_an_environment_of_ones_own_the_functions_and_filters() -> None:
    env = install(Environment())
    assert "whos_online" in env.globals
    assert "online_status" in env.filters


def test_the_environment_function_makes_an_environment_with_them() -> None:
    env = environment(autoescape=True)
    assert env.autoescape is True
    assert "whos_online_heartbeat" in env.globals


def test_every_tag_and_filter_of_the_django_library_is_offered() -> None:
    env = environment()
    assert set(register.tags) <= set(env.globals)
    assert set(register.filters) <= set(env.filters)


def test_room_counts_says_how_many_are_in_each_rows_room(alice: User) -> None:
    presence.record_in_room("thread:1", "users", str(alice.pk))
    source = (
        "{% for room, here in room_counts(rooms) %}{{ room }}={{ here.people }};"
        "{% endfor %}"
    )
    rooms = ["thread:1", "thread:2"]
    html = jinja(source, request_of(AnonymousUser()), rooms=rooms)
    assert html == "thread:1=1;thread:2=0;"
