"""Logging out takes a user off the list at once."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from whos_online import presence

pytestmark = pytest.mark.django_db


def test_logging_out_takes_the_user_off_the_list_at_once(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    browser.get("/")
    browser.get("/logout/")
    assert presence.snapshot(limit=10).users == []


def test_logging_out_a_hidden_user_takes_them_off_too(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    presence.record_user(alice.pk, hidden=True)
    browser.get("/logout/")
    assert presence.snapshot(limit=0).counts.hidden == 0


@pytest.mark.usefixtures("unreachable_redis")
def test_with_redis_unreachable_logging_out_still_works(
    browser: Client, alice: User
) -> None:
    browser.force_login(alice)
    assert browser.get("/logout/").status_code == 200


def test_logging_out_when_not_logged_in_is_harmless(browser: Client) -> None:
    assert browser.get("/logout/").status_code == 200
