"""The staff page: "Who's online › Online now" in the admin."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from io import StringIO

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils.timezone import localtime

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online.admin import OnlineNowAdmin
from whos_online.conf import get_config
from whos_online.models import OnlineNow, Visibility
from whos_online.staff import BOTTOM, LEFT, RIGHT, TOP, history_chart, staff_overview

pytestmark = pytest.mark.django_db

PAGE = "/admin/whos_online/onlinenow/"
POINT = re.compile(r"([ML])([\d.]+),([\d.]+)")
# 2024-05-01 12:00:00 UTC, the start of a minute.
NOON = 1_714_564_800


@pytest.fixture
def staff(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("staff", is_staff=True)


@pytest.fixture
def staff_client(client: Client, staff: User) -> Client:
    client.force_login(staff)
    return client


def page(client: Client) -> str:
    response = client.get(PAGE)
    assert response.status_code == 200
    return response.content.decode()


def row_of(html: str, text: str) -> str:
    """The table row holding ``text``."""
    return next(row for row in html.split("<tr") if text in row)


def points(path: str) -> list[tuple[str, float, float]]:
    return [(move, float(x), float(y)) for move, x, y in POINT.findall(path)]


def test_staff_see_users_and_when_they_were_last_seen(
    staff_client: Client, alice: User
) -> None:
    seen = presence.record_user(alice.pk)
    row = row_of(page(staff_client), "alice")
    expected = localtime(datetime.fromtimestamp(seen, tz=timezone.utc))
    assert f'<time datetime="{expected.isoformat()}"' in row
    assert "(just now)" in row


def test_staff_see_guest_addresses(staff_client: Client) -> None:
    presence.record_guest("192.0.2.1")
    presence.record_guest("2001:db8::1")
    html = page(staff_client)
    assert "<td><bdi>192.0.2.1</bdi></td>" in html
    assert "<td><bdi>2001:db8::1</bdi></td>" in html


def test_staff_see_hidden_users_marked_hidden(
    staff_client: Client, alice: User, bob: User
) -> None:
    presence.record_user(alice.pk, hidden=True)
    presence.record_user(bob.pk)
    html = page(staff_client)
    assert "(hidden)" in row_of(html, "alice")
    assert "(hidden)" not in row_of(html, "bob")


def test_bots_are_listed_by_name(staff_client: Client) -> None:
    presence.record("bots", "Googlebot")
    assert "<td><bdi>Googlebot</bdi></td>" in row_of(page(staff_client), "Googlebot")


def test_staff_see_the_counts(staff_client: Client, alice: User, bob: User) -> None:
    presence.record_user(alice.pk)
    presence.record_user(bob.pk, hidden=True)
    presence.record_guest("192.0.2.1")
    presence.record("bots", "Googlebot")
    html = page(staff_client)  # the staff member reading it counts too
    assert "4 visitors online" in html
    assert "<li>2 users</li>" in html
    assert "<li>1 hidden user</li>" in html
    assert "<li>1 guest</li>" in html
    assert "<li>1 crawler (not counted)</li>" in html


def test_staff_see_the_most_ever_online(staff_client: Client, alice: User) -> None:
    presence.record_user(alice.pk)
    presence.record_guest("192.0.2.1")
    assert "Most ever online: 3 on " in page(staff_client)  # with the reader


def test_staff_see_the_rooms_in_use(staff_client: Client, alice: User) -> None:
    presence.record_in_room("thread:1", "users", str(alice.pk))
    html = page(staff_client)
    assert "1 room in use" in html
    assert "<code>thread:1</code>" in html


def test_usernames_are_escaped(
    staff_client: Client, django_user_model: type[User]
) -> None:
    user = django_user_model.objects.create_user("<script>alert(1)</script>")
    presence.record_user(user.pk)
    html = page(staff_client)
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_bot_names_are_escaped(staff_client: Client) -> None:
    presence.record("bots", "<b>Bot</b>")
    html = page(staff_client)
    assert "<b>Bot</b>" not in html
    assert "&lt;b&gt;Bot&lt;/b&gt;" in html


def test_users_link_to_their_admin_change_page(
    admin_client: Client, alice: User
) -> None:
    presence.record_user(alice.pk)
    html = page(admin_client)
    assert f'<a href="/admin/auth/user/{alice.pk}/change/"><bdi>alice</bdi></a>' in html


def test_users_are_not_links_for_staff_who_may_not_view_users(
    staff_client: Client, alice: User
) -> None:
    presence.record_user(alice.pk)
    html = page(staff_client)
    assert "/admin/auth/user/" not in html
    assert "<td><bdi>alice</bdi></td>" in row_of(html, "alice")


def test_users_are_not_links_where_their_model_is_not_in_the_admin(
    alice: User,
) -> None:
    presence.record_user(alice.pk)
    (online,) = staff_overview(admin_site=admin.AdminSite(name="bare")).users
    assert online.admin_url is None


def test_a_non_staff_user_is_sent_to_the_admin_login(
    client: Client, alice: User
) -> None:
    client.force_login(alice)
    response = client.get(PAGE)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_an_anonymous_visitor_is_sent_to_the_admin_login(client: Client) -> None:
    response = client.get(PAGE)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_the_view_refuses_non_staff_on_a_site_that_lets_them_in(
    rf: RequestFactory, alice: User
) -> None:
    request = rf.get(PAGE)
    request.user = alice
    with pytest.raises(PermissionDenied):
        OnlineNowAdmin(OnlineNow, admin.site).changelist_view(request)


def test_the_admin_index_links_to_the_page(staff_client: Client) -> None:
    html = staff_client.get("/admin/").content.decode()
    assert f'<a href="{PAGE}"' in html
    assert "Online now" in html
    assert f"{PAGE}add/" not in html


def test_there_are_no_object_pages(staff_client: Client) -> None:
    assert staff_client.get(f"{PAGE}add/").status_code == 404
    assert staff_client.get(f"{PAGE}1/change/").status_code == 404


def test_the_page_says_unavailable_when_redis_is_unreachable(
    staff_client: Client, unreachable_redis: None
) -> None:
    assert "unavailable" in page(staff_client)


def test_the_overview_costs_two_queries_for_the_users(
    django_user_model: type[User],
) -> None:
    for n in range(30):
        user = django_user_model.objects.create_user(f"user{n}")
        presence.record_user(user.pk, hidden=n % 2 == 0)
    with CaptureQueriesContext(connection) as captured:
        overview = staff_overview(admin_site=admin.site)
    made = [q["sql"] for q in captured if "SAVEPOINT" not in q["sql"]]
    assert len(made) == 2  # the users' choices to appear offline, the users
    assert len(overview.users) == 30


def test_the_overview_marks_hidden_a_user_whose_choice_redis_missed(
    alice: User,
) -> None:
    presence.record_user(alice.pk)  # Redis holds her as visible
    Visibility.objects.create(user=alice, invisible=True)
    overview = staff_overview()
    (online,) = overview.users
    assert online.hidden
    assert (overview.counts.users, overview.counts.hidden) == (0, 1)


def test_the_page_costs_no_more_queries_with_more_users_online(
    staff_client: Client, django_user_model: type[User]
) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            page(staff_client)
        return len(captured)

    presence.record_user(django_user_model.objects.create_user("user0").pk)
    page(staff_client)  # the staff member's own record, made once, aside
    one_online = queries()
    for n in range(1, 30):
        presence.record_user(django_user_model.objects.create_user(f"user{n}").pk)
    assert queries() == one_online


def test_the_overview_costs_three_redis_round_trips(
    alice: User, redis_commands: CommandCounter
) -> None:
    presence.record_user(alice.pk)
    staff_overview()  # loads the scripts
    redis_commands.commands.clear()
    redis_commands.round_trips = 0
    staff_overview()
    assert redis_commands.round_trips == 3


def test_the_overview_lists_at_most_limit_of_each_kind_and_counts_the_rest() -> None:
    for n in range(3):
        presence.record_guest(f"192.0.2.{n}")
        presence.record("bots", f"Bot{n}")
    overview = staff_overview(limit=2)
    assert [guest.name for guest in overview.guests] == ["192.0.2.2", "192.0.2.1"]
    assert overview.unlisted_guests == 1
    assert len(overview.bots) == 2
    assert overview.unlisted_bots == 1


def test_history_after_a_record_has_a_point_with_the_count(
    alice: User, clock: Clock
) -> None:
    presence.record_user(alice.pk)
    presence.record_guest("192.0.2.1")
    clock.advance(60)
    presence.record_guest("192.0.2.1")
    history = presence.history().minutes
    assert history[-1][1] == 2
    assert all(start % 60 == 0 for start, _ in history)


def test_the_page_draws_the_recorded_minutes(
    staff_client: Client, alice: User, clock: Clock
) -> None:
    presence.record_user(alice.pk)
    clock.advance(60)
    presence.record_guest("192.0.2.1")  # the minute's first record: two online
    path = re.search(r'class="whos-online-line" d="([^"]*)"', page(staff_client))
    assert path is not None
    half = (TOP + BOTTOM) / 2
    assert [(move, y) for move, _, y in points(path[1])] == [
        ("M", BOTTOM - (BOTTOM - TOP) / 4),  # alice alone, of four at most
        ("L", half),
    ]


def test_the_chart_has_one_point_per_sampled_minute() -> None:
    samples = [(NOON - 60 * n, n + 1) for n in (0, 1, 2, 10, 11, 500)]
    chart = history_chart(samples, NOON + 30)
    assert len(points(chart.path)) == 6
    assert chart.samples == 6


def test_the_chart_scales_to_the_most_online() -> None:
    chart = history_chart([(NOON - 120, 4), (NOON - 60, 2), (NOON, 0)], NOON)
    assert chart.max_count == 4
    assert [y for _, _, y in points(chart.path)] == [TOP, (TOP + BOTTOM) / 2, BOTTOM]


def test_the_chart_runs_from_24_hours_ago_to_now() -> None:
    first = NOON - 60 * (presence.HISTORY_MINUTES - 1)
    chart = history_chart([(first, 1), (NOON, 1)], NOON + 59)
    assert [x for _, x, _ in points(chart.path)] == [LEFT + 0.5, RIGHT]


def test_the_chart_leaves_out_minutes_outside_the_24_hours() -> None:
    too_old = NOON - 60 * presence.HISTORY_MINUTES
    chart = history_chart([(too_old, 9), (NOON, 1), (NOON + 60, 9)], NOON)
    assert chart.samples == 1
    assert chart.max_count == 4  # the least scale, not the 9s left out


def test_the_chart_leaves_gaps_where_no_minute_was_sampled() -> None:
    samples = [(NOON - 600, 1), (NOON - 540, 1), (NOON - 60, 1), (NOON, 1)]
    chart = history_chart(samples, NOON)
    assert [move for move, _, _ in points(chart.path)] == ["M", "L", "M", "L"]


def test_the_chart_draws_a_lone_sample_as_a_dot() -> None:
    chart = history_chart([(NOON - 600, 4), (NOON, 4)], NOON)
    assert chart.path == f"M{RIGHT - 5},{TOP}h0M{RIGHT},{TOP}h0"


def test_an_empty_chart_scales_to_four() -> None:
    chart = history_chart([], NOON)
    assert (chart.path, chart.samples, chart.max_count) == ("", 0, 4)


def test_a_quiet_sites_chart_is_not_drawn_at_the_top() -> None:
    chart = history_chart([(NOON, 1)], NOON)
    assert [y for _, _, y in points(chart.path)] == [BOTTOM - (BOTTOM - TOP) / 4]


def test_the_migrations_are_up_to_date() -> None:
    call_command(
        "makemigrations", "whos_online", "--check", "--dry-run", stdout=StringIO()
    )


def test_a_count_is_held_no_longer_than_a_guard_period(
    alice: User, clock: Clock
) -> None:
    presence.record_user(alice.pk)
    clock.advance(10 * 60)
    guard_minutes = get_config().guard_seconds // 60
    assert len(presence.history().minutes) == 1 + guard_minutes
