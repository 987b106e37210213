"""whos_online.jinja2 in a site that renders with django-jinja, set up with
exactly the settings docs/jinja2.md shows (tests/django_jinja_site/): it
boots, every management command with it, and each function and filter
shows what the Django tag shows, to the same viewer, as through Django's
own Jinja2 backend (tests/test_jinja2.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest
from django.template import TemplateSyntaxError, engines
from django.test import Client, RequestFactory
from django.urls import resolve
from django_jinja.backend import Jinja2 as DjangoJinja
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.django_jinja_site import documented_code, documented_templates
from whos_online import api
from whos_online.jinja2 import FILTERS, GLOBALS
from whos_online.roster import online_roster
from whos_online.tokens import room_from_token

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def django_jinja_site(settings: SettingsWrapper) -> None:
    settings.TEMPLATES = documented_templates()
    settings.STATIC_URL = "/static/"  # django-jinja's static() needs one


@pytest.fixture
def online(alice: User, bob: User) -> None:
    """Alice and bob online, bob invisible, and a guest."""
    presence.record_user(alice.pk)
    presence.record_user(bob.pk)
    api.set_invisible(bob, True)
    presence.record_guest("192.0.2.1")


@pytest.fixture
def staff(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("carol", is_staff=True)


def request_of(user: Any, path: str = "/") -> HttpRequest:
    request = RequestFactory().get(path)
    request.user = user
    return request


def jinja(source: str, request: HttpRequest, **context: Any) -> str:
    (backend,) = [e for e in engines.all() if isinstance(e, DjangoJinja)]
    return str(backend.from_string(source).render(context, request))


def django(source: str, request: HttpRequest, **context: Any) -> str:
    template = engines["django"].from_string("{% load whos_online %}" + source)
    return template.render(context, request)


def manage(*args: str, settings: str, path: Path = ROOT) -> CompletedProcess[str]:
    """``manage.py ARGS`` of a site on SETTINGS, in a process of its own,
    with PATH beside the repository on the import path."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings,
        "PYTHONPATH": os.pathsep.join(dict.fromkeys([str(ROOT), str(path)])),
    }
    return subprocess.run(
        [sys.executable, "-m", "django", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# The settings themselves.


def test_the_documented_settings_keep_django_jinjas_own_extensions() -> None:
    from django_jinja.builtins import DEFAULT_EXTENSIONS

    (options,) = [
        t["OPTIONS"]
        for t in documented_templates()
        if "extensions" in t.get("OPTIONS", {})
    ]
    extensions = options["extensions"]
    assert extensions == [*DEFAULT_EXTENSIONS, "whos_online.jinja2.WhosOnlineExtension"]
    assert re.search(r"DEFAULT_EXTENSIONS\s*\+\s*\[", documented_code())


def test_manage_py_check_passes_with_the_documented_settings() -> None:
    done = manage("check", settings="tests.settings_django_jinja")
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues" in done.stdout


def test_an_extensions_list_of_the_app_alone_breaks_every_command(
    tmp_path: Path,
) -> None:
    """What the page warns of: the list replaces django-jinja's own."""
    (tmp_path / "alone.py").write_text(
        "from tests.settings_django_jinja import *  # noqa: F403\n"
        "from tests.settings_django_jinja import TEMPLATES\n"
        'TEMPLATES[0]["OPTIONS"]["extensions"] = '
        '["whos_online.jinja2.WhosOnlineExtension"]\n'
    )
    done = manage("check", settings="alone", path=tmp_path)
    assert done.returncode != 0
    assert "no attribute 'install_gettext_translations'" in done.stderr


# Each function and filter, as the Django tag shows it.

SAME_AS_DJANGO = [
    ("{{ whos_online() }}", "{% whos_online %}"),
    ("{{ whos_online(limit=1, heading=3) }}", "{% whos_online limit=1 heading=3 %}"),
    ('{{ whos_online(room="thread:1") }}', '{% whos_online room="thread:1" %}'),
    ("{{ online_count() }}", "{% online_count %}"),
    ('{{ online_count("users") }}', '{% online_count "users" %}'),
    ("{{ online_badge(alice) }}", "{% online_badge alice %}"),
    ("{{ whos_online_beacon() }}", "{% whos_online_beacon %}"),
    ("{{ whos_online_decorate(refresh=30) }}", "{% whos_online_decorate refresh=30 %}"),
    ("{{ whos_online_stylesheet() }}", "{% whos_online_stylesheet %}"),
    (
        "{{ alice|online_status }} {{ bob|online_status }}",
        "{{ alice|online_status }} {{ bob|online_status }}",
    ),
    (
        "{{ alice|last_seen_label }} {{ bob|last_seen_label }}",
        "{{ alice|last_seen_label }} {{ bob|last_seen_label }}",
    ),
    (
        "{{ alice|last_seen|minutes_since }} {{ bob|last_seen|minutes_since }}",
        "{{ alice|last_seen|minutes_since }} {{ bob|last_seen|minutes_since }}",
    ),
    (
        "{{ counts|count_text('guests') }} {{ counts|count_text('users') }}",
        "{{ counts|count_text:'guests' }} {{ counts|count_text:'users' }}",
    ),
    (
        "{{ roster.users|people_html }} {{ counts|tally_html }}",
        "{{ roster.users|people_html }} {{ counts|tally_html }}",
    ),
    ("{{ roster|window_html }}", "{{ roster|window_html }}"),
]


PRESENCE_LIST = "{% for row in presence_list(users) %}{{ row.status }} {% endfor %}"
ROOM_COUNTS = (
    "{% for room, here in room_counts(rooms) %}{{ room }}={{ here.people }};"
    "{% endfor %}"
)
PAGE_ROOM = "{{ page_room() }}"
HEARTBEAT = "{{ whos_online_heartbeat() }}"
TOGGLE = "{{ whos_online_visibility() }}"


@pytest.mark.usefixtures("online")
@pytest.mark.parametrize("viewer", ["guest", "alice", "staff"])
@pytest.mark.parametrize(("in_jinja2", "in_django"), SAME_AS_DJANGO)
def test_it_shows_what_the_django_tag_shows_to_the_same_viewer(
    in_jinja2: str, in_django: str, viewer: str, alice: User, bob: User, staff: User
) -> None:
    user = {"guest": AnonymousUser(), "alice": alice, "staff": staff}[viewer]
    request = request_of(user)
    context = {
        "alice": alice,
        "bob": bob,
        "counts": api.counts(viewer=user),
        "roster": online_roster(viewer=user),
    }
    assert jinja(in_jinja2, request, **context) == django(in_django, request, **context)


@pytest.mark.usefixtures("online")
def test_presence_list_follows_who_may_see_whom(
    alice: User, bob: User, staff: User
) -> None:
    users = [alice, bob]
    assert jinja(PRESENCE_LIST, request_of(alice), users=users) == "online offline "
    assert jinja(PRESENCE_LIST, request_of(staff), users=users) == "online online "


def test_room_counts_says_how_many_are_in_each_rows_room(alice: User) -> None:
    presence.record_in_room("thread:1", "users", str(alice.pk))
    rooms = ["thread:1", "thread:2"]
    html = jinja(ROOM_COUNTS, request_of(AnonymousUser()), rooms=rooms)
    assert html == "thread:1=1;thread:2=0;"


ROOM_TOKEN = '<span data-whos-online-viewing="{{ room_token("thread:1") }}">'


def test_room_token_is_a_token_of_the_room_for_the_viewer_alone(
    alice: User, bob: User
) -> None:
    html = jinja(ROOM_TOKEN, request_of(alice))
    token = html.split('"')[1]
    assert room_from_token(token, alice) == "thread:1"
    assert room_from_token(token, bob) is None


def test_page_room_is_the_room_of_the_page(alice: User) -> None:
    request = request_of(alice, "/thread/7/")
    request.resolver_match = resolve("/thread/7/")
    assert jinja(PAGE_ROOM, request) == "thread:7"
    assert jinja(PAGE_ROOM, request_of(alice)) == "None"


def test_the_heartbeat_and_the_toggle_carry_django_jinjas_csrf_token(
    alice: User,
) -> None:
    request = request_of(alice)
    heartbeat = jinja(HEARTBEAT, request)
    toggle = jinja(TOGGLE, request)
    # A token each time, masked afresh (Django's get_token), never empty.
    token = "[A-Za-z0-9]{64}"
    assert re.search(f'data-whos-online-csrf="{token}"', heartbeat)
    assert re.search(f'name="csrfmiddlewaretoken" value="{token}"', toggle)
    assert "Appear offline" in toggle
    assert "Hide when I was last seen" in toggle


def test_a_page_of_the_site_has_the_widget_the_toggle_and_the_heartbeat(
    alice: User,
) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    page = browser.get("/django-jinja-page/").text
    assert "<title>A page · A django-jinja site</title>" in page
    assert '<a href="/whos-online/">Who is online</a>' in page
    assert 'data-whos-online-refresh="/whos-online/widget/"' in page
    assert "alice" in page
    assert 'data-whos-online-heartbeat="/whos-online/heartbeat/"' in page
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    browser.post(
        "/whos-online/visibility/",
        {"csrfmiddlewaretoken": token, "invisible": "1", "next": "/"},
    )
    assert api.is_invisible(alice)


@pytest.mark.usefixtures("online")
def test_the_public_page_is_shown_in_the_sites_layout() -> None:
    page = Client().get("/whos-online/", {"sort": "name"})
    assert page.status_code == 200
    html = page.text
    assert '<header class="site-header">A django-jinja site</header>' in html
    assert "<title>Who is online · A django-jinja site</title>" in html
    assert '<section class="whos-online-page">' in html
    assert '<strong aria-current="true">name</strong>' in html
    assert "alice" in html
    assert "bob" not in html


@pytest.mark.usefixtures("online")
def test_without_the_match_setting_the_override_is_passed_over(
    settings: SettingsWrapper,
) -> None:
    """What the page warns of: django-jinja's default match is *.jinja."""
    (options,) = [
        t["OPTIONS"] for t in settings.TEMPLATES if "match_regex" in t["OPTIONS"]
    ]
    del options["match_extension"], options["match_regex"]
    settings.TEMPLATES = settings.TEMPLATES  # the engines are made anew
    html = Client().get("/whos-online/").text
    assert '<section class="whos-online-page">' in html
    assert "A django-jinja site" not in html


def test_the_match_without_the_override_fails_as_the_page_warns(
    settings: SettingsWrapper, tmp_path: Path
) -> None:
    """django-jinja then finds the app's own page, a Django template."""
    settings.TEMPLATES[0]["DIRS"] = [tmp_path]  # no override there
    settings.TEMPLATES = settings.TEMPLATES
    with pytest.raises(TemplateSyntaxError, match="unknown tag 'load'"):
        Client().get("/whos-online/")


@pytest.mark.usefixtures("online")
def test_the_apps_other_templates_stay_with_django_templates(staff: User) -> None:
    """The match lets through the public page only: the widget's refresh,
    and the admin's pages, are Django templates still."""
    assert "alice" in Client().get("/whos-online/widget/").text
    admin = Client()
    staff.is_superuser = True
    staff.save()
    admin.force_login(staff)
    assert admin.get("/admin/").status_code == 200


def test_every_function_and_filter_is_rendered_here() -> None:
    """Each of the app's functions and filters is in a test above, or in the
    site's templates (the public page's override: who_is_online_page)."""
    templates = (Path(__file__).parent / "django_jinja_site/templates").rglob("*.*")
    written = " ".join(
        [source for source, _ in SAME_AS_DJANGO]
        + [PRESENCE_LIST, ROOM_COUNTS, ROOM_TOKEN, PAGE_ROOM, HEARTBEAT, TOGGLE]
        + [template.read_text() for template in templates]
    )
    for name in GLOBALS:
        assert f"{name}(" in written
    for name in FILTERS:
        assert f"|{name}" in written


@pytest.mark.usefixtures("online")
def test_a_site_whose_django_jinja_matches_every_html_name_renders_the_widget(
    settings: SettingsWrapper,
) -> None:
    """The app's own templates are Django templates, rendered by Django's
    engine whatever else a site's first backend matches."""
    settings.TEMPLATES[0]["OPTIONS"] |= {
        "match_extension": ".html",
        "match_regex": None,
    }
    settings.TEMPLATES = settings.TEMPLATES
    request = request_of(AnonymousUser())
    html = jinja(
        "{{ whos_online() }}{{ whos_online_decorate() }}"
        "{{ whos_online_heartbeat() }}{{ whos_online_visibility() }}",
        request,
    )
    assert "alice" in html
    assert "data-whos-online-decorate" in html
