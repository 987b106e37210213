"""The {% whos_online %} widget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.template import engines
from pytest_django import DjangoAssertNumQueries
from pytest_django.fixtures import Settings as SettingsWrapper

from tests.conftest import CommandCounter
from whos_online import presence

pytestmark = pytest.mark.django_db


def render(source: str = "{% whos_online %}") -> str:
    template = engines["django"].from_string("{% load whos_online %}" + source)
    return template.render({})


def test_it_lists_online_users_most_recently_seen_first(alice: User, bob: User) -> None:
    presence.record_user(alice.pk)
    presence.record_user(bob.pk)
    html = render()
    assert html.index("bob") < html.index("alice")


def test_it_counts_users_and_guests(alice: User) -> None:
    presence.record_user(alice.pk)
    presence.record_guest("192.0.2.1")
    presence.record_guest("192.0.2.2")
    html = render()
    assert "3 visitors online" in html
    assert "1 user" in html
    assert "2 guests" in html


def test_it_says_which_window_it_is_based_on(settings: SettingsWrapper) -> None:
    assert "Based on users active over the past 15 minutes." in render()
    settings.WHOS_ONLINE_WINDOW = 300
    assert "Based on users active over the past 5 minutes." in render()


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
    assert f'<a href="/people/{alice.pk}/">alice</a>' in render()


def test_names_are_not_links_without_absolute_urls(alice: User) -> None:
    presence.record_user(alice.pk)
    html = render()
    assert "<span>alice</span>" in html
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


def test_it_renders_with_one_query_however_many_are_online(
    django_user_model: type[User], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    for n in range(30):
        presence.record_user(django_user_model.objects.create_user(f"user{n}").pk)
    with django_assert_num_queries(1):
        render()


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
    redis_commands.commands.clear()
    render()
    assert redis_commands.commands == ["EVALSHA"]


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
