"""What a template may hand the tags and filters by mistake: a page is
served whatever they are given."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.template import engines
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence

pytestmark = pytest.mark.django_db


def render(source: str, **context: Any) -> str:
    template = engines["django"].from_string("{% load whos_online %}" + source)
    return template.render(context)


def online_users(django_user_model: type[User], count: int) -> None:
    for n in range(count):
        presence.record_user(django_user_model.objects.create_user(f"user{n}").pk)


# A post whose author was deleted: its author is None.


def test_the_badge_of_no_user_is_empty() -> None:
    assert render("{% online_badge author %}", author=None) == ""


def test_the_badge_of_a_missing_variable_is_empty() -> None:
    assert render("{% online_badge post.author %}") == ""


def test_the_badge_of_an_anonymous_user_is_empty() -> None:
    assert render("{% online_badge author %}", author=AnonymousUser()) == ""


def test_the_status_of_no_user_is_empty() -> None:
    assert render("[{{ author|online_status }}]", author=None) == "[]"


def test_the_last_seen_of_no_user_is_none() -> None:
    source = "{% if author|last_seen is None %}never{% endif %}"
    assert render(source, author=None) == "never"


def test_a_badge_beside_a_deleted_author_leaves_the_other_badges(alice: User) -> None:
    presence.record_user(alice.pk)
    html = render(
        "{% for author in authors %}{% online_badge author %}{% endfor %}",
        authors=[None, alice],
    )
    assert html.count("whos-online-badge-online") == 1


# Numbers written as text, as template authors often do.


def test_a_limit_given_as_text_is_a_number(django_user_model: type[User]) -> None:
    online_users(django_user_model, 3)
    html = render('{% whos_online limit="1" %}')
    assert "user2" in html
    assert "user1" not in html
    assert "and 2 more" in html


def test_a_limit_that_is_not_a_number_is_the_default(
    django_user_model: type[User], settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_MAX_NAMES = 2
    online_users(django_user_model, 3)
    html = render('{% whos_online limit="ten" %}')
    assert "user2" in html and "user1" in html
    assert "and 1 more" in html


def test_a_refresh_given_as_text_is_a_number() -> None:
    html = render('{% whos_online refresh="30" %}')
    assert 'data-whos-online-seconds="30"' in html


def test_a_refresh_that_is_not_a_number_leaves_the_widget_static() -> None:
    html = render('{% whos_online refresh="soon" %}')
    assert "<script" not in html
    assert "whos-online-widget" in html


def test_a_heading_given_as_text_is_a_number() -> None:
    assert '<h3 class="whos-online-heading">' in render('{% whos_online heading="3" %}')


def test_a_heading_that_is_not_a_number_is_the_default() -> None:
    assert '<h2 class="whos-online-heading">' in render('{% whos_online heading="x" %}')


def test_a_negative_refresh_leaves_the_widget_static() -> None:
    assert "<script" not in render("{% whos_online refresh=-5 %}")


def test_a_true_limit_is_not_taken_for_one(django_user_model: type[User]) -> None:
    online_users(django_user_model, 2)
    assert "user0" in render("{% whos_online limit=True %}")
