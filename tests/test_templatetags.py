"""The {% whos_online %} widget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.template import TemplateSyntaxError, engines
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from pytest_django import DjangoAssertNumQueries
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online.conf import get_config

pytestmark = pytest.mark.django_db


def render(source: str = "{% whos_online %}") -> str:
    template = engines["django"].from_string("{% load whos_online %}" + source)
    return template.render({})


def test_it_lists_online_users_most_recently_seen_first(alice: User, bob: User) -> None:
    presence.record_user(alice.pk)
    presence.record_user(bob.pk)
    html = render()
    assert html.index("bob") < html.index("alice")


def test_the_count_sentence_is_the_whole_text_of_its_live_region() -> None:
    presence.record_guest("192.0.2.1")
    assert 'aria-atomic="true">1 visitor online</p>' in render()


def test_it_counts_users_and_guests(alice: User) -> None:
    presence.record_user(alice.pk)
    presence.record_guest("192.0.2.1")
    presence.record_guest("192.0.2.2")
    html = render()
    assert "3 visitors online" in html
    assert "1 user" in html
    assert "2 guests" in html


def test_it_says_which_window_it_is_based_on(settings: SettingsWrapper) -> None:
    assert "Based on visitors active over the past 15 minutes." in render()
    settings.WHOS_ONLINE_WINDOW = 300
    assert "Based on visitors active over the past 5 minutes." in render()


def test_it_hides_users_seen_before_the_window(
    alice: User, bob: User, seen_ago: Callable[[str, str, float], None]
) -> None:
    seen_ago("users", str(alice.pk), 1000)
    presence.record_user(bob.pk)
    html = render()
    assert "alice" not in html
    assert "bob" in html


def test_it_shows_at_most_max_names_then_how_many_more(
    settings: SettingsWrapper, django_user_model: type[User]
) -> None:
    settings.WHOS_ONLINE_MAX_NAMES = 2
    for n in range(5):
        presence.record_user(django_user_model.objects.create_user(f"user{n}").pk)
    html = render()
    assert "user4" in html and "user3" in html
    assert "user2" not in html
    assert "and 3 more" in html


def test_a_limit_argument_overrides_max_names(django_user_model: type[User]) -> None:
    for n in range(3):
        presence.record_user(django_user_model.objects.create_user(f"user{n}").pk)
    html = render("{% whos_online limit=1 %}")
    assert "user2" in html and "user1" not in html
    assert "and 2 more" in html


def test_names_are_escaped(django_user_model: type[User]) -> None:
    user = django_user_model.objects.create_user("<script>alert(1)</script>")
    presence.record_user(user.pk)
    html = render()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_names_link_to_the_user_when_the_model_has_absolute_urls(
    alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        User, "get_absolute_url", lambda self: f"/people/{self.pk}/", raising=False
    )
    presence.record_user(alice.pk)
    assert f'<a href="/people/{alice.pk}/"><bdi>alice</bdi></a>' in render()


def test_names_are_not_links_without_absolute_urls(alice: User) -> None:
    presence.record_user(alice.pk)
    html = render()
    assert "<bdi>alice</bdi>" in html
    assert "<a " not in html


def test_users_deleted_since_they_were_seen_are_skipped(alice: User) -> None:
    presence.record_user(alice.pk)
    presence.record_user(999_999)
    html = render()
    assert "alice" in html


def test_members_that_are_not_primary_keys_are_skipped(alice: User) -> None:
    presence.record_user(alice.pk)
    presence.record("users", "not-a-pk")
    assert "alice" in render()


def test_it_renders_with_two_queries_however_many_are_online(
    django_user_model: type[User],
) -> None:
    for n in range(30):
        presence.record_user(django_user_model.objects.create_user(f"user{n}").pk)
    with CaptureQueriesContext(connection) as captured:
        render()
    made = [q["sql"] for q in captured if "SAVEPOINT" not in q["sql"]]
    assert len(made) == 2  # the users' choices to appear offline, the users
    assert "whos_online_visibility" in made[0]


def test_nobody_online_costs_no_query(
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    with django_assert_num_queries(0):
        html = render()
    assert "0 visitors online" in html


@pytest.mark.usefixtures("warm_scripts")
def test_it_renders_with_one_redis_round_trip(
    alice: User, redis_commands: CommandCounter
) -> None:
    presence.record_user(alice.pk)
    redis_commands.round_trips = 0
    render()
    assert redis_commands.round_trips == 1


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_it_renders_an_empty_state() -> None:
    html = render()
    assert "cannot be shown right now" in html


def test_sites_can_override_the_template(
    settings: SettingsWrapper, tmp_path: Path, alice: User
) -> None:
    (tmp_path / "whos_online").mkdir()
    (tmp_path / "whos_online" / "whos_online.html").write_text(
        "{% for online in roster.users %}[{{ online.name }}]{% endfor %}"
    )
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path]}]
    presence.record_user(alice.pk)
    assert render() == "[alice]"


def render_with(source: str, **context: object) -> str:
    template = engines["django"].from_string("{% load whos_online %}" + source)
    return template.render(context)


def test_it_counts_hidden_users_and_bots(
    alice: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "separate"
    presence.record_user(alice.pk, hidden=True)
    presence.record("bots", "Googlebot")
    html = render()
    assert "1 hidden user" in html
    assert "1 crawler (not counted)" in html
    assert "alice" not in html


def test_it_lists_bots_by_name() -> None:
    presence.record("bots", "Googlebot")
    assert "<span>Googlebot</span>" in render()


def test_it_shows_the_most_ever_online(alice: User) -> None:
    presence.record_user(alice.pk)
    assert "Most ever online: 1 on" in render()


def test_a_room_widget_lists_the_room_only(alice: User, bob: User) -> None:
    presence.record_user(alice.pk)
    presence.record_in_room("thread:1", "users", str(bob.pk))
    html = render('{% whos_online room="thread:1" %}')
    assert "bob" in html
    assert "alice" not in html
    assert "Most ever" not in html


def test_refresh_adds_the_fragment_url_and_the_script() -> None:
    html = render("{% whos_online refresh=30 %}")
    assert 'data-whos-online-refresh="/whos-online/widget/"' in html
    assert 'data-whos-online-seconds="30"' in html
    assert "whos_online/refresh.js" in html


def test_a_refreshing_room_widget_names_its_room_by_token() -> None:
    html = render('{% whos_online room="thread:1" refresh=30 %}')
    assert 'data-whos-online-refresh="/whos-online/widget/?room=' in html
    assert "thread:1" not in html.split("data-whos-online-refresh=")[1].split('"')[1]


def test_without_refresh_there_is_no_script() -> None:
    assert "<script" not in render()


def test_refresh_is_left_out_where_the_urls_are_not_included(
    settings: SettingsWrapper,
) -> None:
    settings.ROOT_URLCONF = "tests.urls_without_whos_online"
    html = render("{% whos_online refresh=30 %}")
    assert "<script" not in html
    assert "whos-online-widget" in html


def test_a_room_widget_is_shown_without_its_scripts_where_the_urls_are_not_included(
    settings: SettingsWrapper,
) -> None:
    settings.ROOT_URLCONF = "tests.urls_without_whos_online"
    html = Client().get("/thread/1/").content.decode()
    assert "<script" not in html
    assert "whos-online-widget" in html


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("people", 3),
        ("total", 4),
        ("users", 1),
        ("hidden", 1),
        ("guests", 1),
        ("bots", 1),
    ],
)
def test_online_count_counts_each_kind(
    alice: User, bob: User, settings: SettingsWrapper, kind: str, expected: int
) -> None:
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "separate"
    presence.record_user(alice.pk)
    presence.record_user(bob.pk, hidden=True)
    presence.record_guest("192.0.2.1")
    presence.record("bots", "Googlebot")
    source = f'{{% online_count "{kind}" as n %}}{{{{ n|add:0 }}}}'
    assert render(source) == str(expected)


def test_online_count_counts_people_by_default(alice: User) -> None:
    presence.record_user(alice.pk)
    presence.record("bots", "Googlebot")
    assert render("{% online_count as n %}{{ n|add:0 }}") == "1"


def test_online_count_is_marked_for_the_refresh_script(alice: User) -> None:
    presence.record_user(alice.pk)
    assert render("{% online_count %}") == (
        '<span class="whos-online-count" data-whos-online-count="people">1</span>'
    )


def test_online_count_refuses_an_unknown_kind() -> None:
    with pytest.raises(TemplateSyntaxError, match="online_count counts one of"):
        render('{% online_count "admins" %}')


def test_online_count_of_a_room(alice: User) -> None:
    presence.record_in_room("thread:1", "users", str(alice.pk))
    assert render('{% online_count "users" room="thread:1" %}') == "1"


def test_presence_list_gives_status_and_last_seen_for_many_users(
    alice: User, bob: User
) -> None:
    presence.record_user(alice.pk)
    html = render_with(
        "{% presence_list users as rows %}"
        "{% for row in rows %}{{ row.user }}={{ row.status }};{% endfor %}",
        users=[alice, bob],
    )
    assert html == "alice=online;bob=offline;"


@pytest.mark.usefixtures("warm_scripts")
def test_presence_list_is_one_round_trip(
    django_user_model: type[User], redis_commands: CommandCounter
) -> None:
    users = [django_user_model.objects.create_user(f"user{n}") for n in range(20)]
    redis_commands.commands.clear()
    render_with("{% presence_list users as rows %}", users=users)
    assert redis_commands.round_trips == 1


def test_online_status_filter(alice: User) -> None:
    presence.record_user(alice.pk)
    assert render_with("{{ user|online_status }}", user=alice) == "online"


def test_last_seen_filter_works_with_timesince(alice: User) -> None:
    presence.record_user(alice.pk)
    assert render_with("{{ user|last_seen|timesince }}", user=alice) == "0\xa0minutes"


def test_last_seen_of_someone_never_seen_renders_empty(alice: User) -> None:
    assert render_with("{{ user|last_seen|default:'never' }}", user=alice) == "never"


def test_the_heartbeat_tag_renders_the_script_for_logged_in_users(
    rf: RequestFactory, alice: User
) -> None:
    request = rf.get("/")
    request.user = alice
    html = render_with(
        "{% whos_online_heartbeat %}", request=request, csrf_token="the-token"
    )
    assert 'data-whos-online-heartbeat="/whos-online/heartbeat/"' in html
    assert 'data-whos-online-seconds="60"' in html
    assert 'data-whos-online-csrf="the-token"' in html


@pytest.mark.parametrize(
    ("tag", "setting", "written"),
    [
        ("{% whos_online refresh=1800 %}", {}, 'data-whos-online-seconds="1800"'),
        (
            "{% whos_online_heartbeat %}",
            {"WHOS_ONLINE_HEARTBEAT_SECONDS": 1200},
            'data-whos-online-seconds="1200"',
        ),
        (
            "{% whos_online_beacon %}",
            {"WHOS_ONLINE_GUARD_SECONDS": 3600},
            'data-whos-online-seconds="3600"',
        ),
        (
            "{% whos_online_decorate refresh=1500 %}",
            {},
            'data-whos-online-seconds="1500"',
        ),
    ],
)
def test_the_seconds_a_script_reads_are_written_without_thousand_separators(
    rf: RequestFactory,
    alice: User,
    settings: SettingsWrapper,
    tag: str,
    setting: dict[str, int],
    written: str,
) -> None:
    """A site that groups thousands ("3,600") still gives the scripts a
    number they can read: ``parseInt("3,600")`` is 3."""
    settings.USE_THOUSAND_SEPARATOR = True
    for name, value in setting.items():
        setattr(settings, name, value)
    request = rf.get("/")
    request.user = alice
    assert written in render_with(tag, request=request, csrf_token="the-token")


def test_the_heartbeat_tag_renders_nothing_for_guests(rf: RequestFactory) -> None:
    request = rf.get("/")
    request.user = AnonymousUser()
    assert render_with("{% whos_online_heartbeat %}", request=request).strip() == ""


@pytest.mark.usefixtures("warm_scripts")
def test_a_page_with_the_widget_and_five_counts_takes_one_snapshot(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.get("/")  # recorded and guarded
    redis_commands.round_trips = 0
    browser.get("/busy-page/")
    assert redis_commands.round_trips == 1


def test_a_page_with_the_widget_and_five_counts_asks_the_database_twice(
    browser: Client, alice: User, bob: User
) -> None:
    """The users' choices once, the users listed once: the counts share what
    the widget's roster asked, and a count lists nobody."""
    for user in (alice, bob):
        presence.record_user(user.pk)
    browser.get("/")  # recorded and guarded: a guest, no session to load
    with CaptureQueriesContext(connection) as captured:
        page = browser.get("/busy-page/").content.decode()
    assert "alice" in page
    made = [q["sql"] for q in captured if "SAVEPOINT" not in q["sql"]]
    assert len(made) == 2, made


def test_a_count_alone_lists_nobody(browser: Client, alice: User) -> None:
    presence.record_user(alice.pk)
    browser.get("/")
    with CaptureQueriesContext(connection) as captured:
        browser.get("/count-only/")
    made = [q["sql"] for q in captured if "SAVEPOINT" not in q["sql"]]
    assert len(made) == 1, made  # the choices, which the count needs


def test_a_process_reads_the_users_it_lists_and_their_choices_once_per_snapshot_age(
    settings: SettingsWrapper, clock: Clock, alice: User, bob: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    for user in (alice, bob):
        presence.record_user(user.pk)

    def queries_of_a_guests_page(address: str) -> list[str]:
        guest = Client(REMOTE_ADDR=address)
        guest.get("/")  # recorded and guarded
        with CaptureQueriesContext(connection) as captured:
            assert "alice" in guest.get("/busy-page/").content.decode()
        return [q["sql"] for q in captured if "SAVEPOINT" not in q["sql"]]

    assert len(queries_of_a_guests_page("192.0.2.1")) == 2
    assert queries_of_a_guests_page("192.0.2.2") == []
    clock.advance(31)
    assert len(queries_of_a_guests_page("192.0.2.3")) == 2


@pytest.mark.usefixtures("warm_scripts")
def test_a_process_may_reuse_a_snapshot_for_other_pages(
    browser: Client, redis_commands: CommandCounter, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    browser.get("/")
    browser.get("/busy-page/")
    redis_commands.commands.clear()
    browser.get("/busy-page/")
    assert redis_commands.commands == []


def test_a_reused_snapshot_ages_out(
    browser: Client, settings: SettingsWrapper, clock: Clock, alice: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    browser.get("/busy-page/")
    presence.record_user(alice.pk)
    assert "alice" not in browser.get("/busy-page/").content.decode()
    clock.advance(31)
    assert "alice" in browser.get("/busy-page/").content.decode()


def test_staff_snapshots_are_never_shown_to_others(
    settings: SettingsWrapper, django_user_model: type[User]
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    ghost = django_user_model.objects.create_user("ghost")
    presence.record_user(ghost.pk, hidden=True)
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    assert "ghost" in staff.get("/busy-page/").content.decode()
    assert "ghost" not in Client().get("/busy-page/").content.decode()


def test_a_visitor_who_just_arrived_sees_themselves_despite_a_reused_snapshot(
    settings: SettingsWrapper, alice: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    Client().get("/busy-page/")
    browser = Client()
    browser.force_login(alice)
    assert "alice" in browser.get("/busy-page/").content.decode()


@pytest.mark.usefixtures("warm_scripts")
def test_by_default_a_process_reuses_a_snapshot_for_two_seconds(
    browser: Client,
    redis_commands: CommandCounter,
    settings: SettingsWrapper,
    clock: Clock,
) -> None:
    del settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE
    get_config.cache_clear()  # pytest-django's del sends no setting_changed
    assert get_config().snapshot_max_age == 2.0
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = get_config().snapshot_max_age
    browser.get("/busy-page/")
    redis_commands.commands.clear()
    browser.get("/busy-page/")
    assert redis_commands.commands == []
    clock.advance(2.1)
    browser.get("/busy-page/")
    assert "EVALSHA" in redis_commands.commands


def test_a_user_who_turns_invisible_is_off_the_next_page_despite_a_reused_snapshot(
    settings: SettingsWrapper, alice: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    browser = Client()
    browser.force_login(alice)
    browser.get("/busy-page/")
    browser.post("/whos-online/visibility/", {"invisible": "1"})
    assert "alice" not in Client().get("/busy-page/").content.decode()


def test_a_user_who_just_logged_in_sees_themselves_on_the_next_page(
    settings: SettingsWrapper, alice: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    browser = Client()
    browser.get("/busy-page/")  # a snapshot shared before she logs in
    browser.post(f"/login/{alice.pk}/")
    assert "alice" in browser.get("/busy-page/").content.decode()


def test_a_list_of_members_none_of_them_primary_keys_renders_empty() -> None:
    presence.record("users", "not-a-pk")
    assert "not-a-pk" not in render()
