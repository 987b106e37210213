"""What a page asks of the database: users' choices (invisible mode, a
hidden last seen) read at most once per ``WHOS_ONLINE_SNAPSHOT_MAX_AGE``
per process, the viewer's own every page, and no transaction of its own
where the connection commits each query."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import Clock
from whos_online.models import Visibility

pytestmark = pytest.mark.django_db

VISIBILITY = "/whos-online/visibility/"


def choices_read(client: Client, path: str) -> int:
    """How many queries of users' choices ``client``'s page of ``path`` made."""
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    return sum(Visibility._meta.db_table in query["sql"] for query in captured)


def test_a_guests_page_reuses_the_choices_this_process_read_within_snapshot_max_age(
    settings: SettingsWrapper, clock: Clock, alice: User, bob: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    for user in (alice, bob):
        presence.record_user(user.pk)
    assert choices_read(Client(REMOTE_ADDR="192.0.2.1"), "/busy-page/") == 1
    assert choices_read(Client(REMOTE_ADDR="192.0.2.2"), "/busy-page/") == 0
    clock.advance(31)
    assert choices_read(Client(REMOTE_ADDR="192.0.2.3"), "/busy-page/") == 1


def test_with_snapshot_max_age_zero_every_page_reads_the_choices(
    settings: SettingsWrapper, alice: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 0
    presence.record_user(alice.pk)
    assert choices_read(Client(REMOTE_ADDR="192.0.2.1"), "/busy-page/") == 1
    assert choices_read(Client(REMOTE_ADDR="192.0.2.2"), "/busy-page/") == 1


def test_a_choice_another_process_kept_shows_once_what_this_one_read_ages_out(
    settings: SettingsWrapper, clock: Clock, alice: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    presence.record_user(alice.pk)
    assert "alice" in Client().get("/busy-page/").content.decode()
    # Another process keeps her choice; Redis still lists her as visible.
    Visibility.objects.create(user=alice, invisible=True)
    clock.advance(31)
    presence.record_user(alice.pk)
    assert "alice" not in Client().get("/busy-page/").content.decode()


def test_a_choice_taken_in_this_process_shows_on_its_next_page_at_once(
    settings: SettingsWrapper, alice: User, bob: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    presence.record_user(alice.pk)
    bobs = Client()
    bobs.force_login(bob)
    assert "alice" in bobs.get("/busy-page/").content.decode()
    alices = Client()
    alices.force_login(alice)
    alices.post(VISIBILITY, {"hide_last_seen": "1"})
    alices.post(VISIBILITY, {"invisible": "1"})
    assert "alice" not in bobs.get("/busy-page/").content.decode()


def test_a_users_own_choice_read_on_their_page_is_what_the_next_guest_sees(
    settings: SettingsWrapper, alice: User, bob: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    for user in (alice, bob):
        presence.record_user(user.pk)
    assert "alice" in Client().get("/busy-page/").content.decode()
    Visibility.objects.create(user=alice, invisible=True)  # from another process
    alices = Client()
    alices.force_login(alice)
    alices.get("/busy-page/")  # her own page reads her choice anew
    assert "alice" not in Client().get("/busy-page/").content.decode()


def test_a_users_page_with_the_widget_and_the_toggle_reads_the_choices_once(
    settings: SettingsWrapper, alice: User, bob: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 0
    presence.record_in_room("thread:1", "users", str(bob.pk))
    alices = Client()
    alices.force_login(alice)
    alices.get("/uncached-thread/1/")  # recorded: her next page is guarded
    assert choices_read(alices, "/uncached-thread/1/") == 1


def test_the_toggle_shows_the_viewers_own_choice_as_the_database_has_it_now(
    settings: SettingsWrapper, alice: User
) -> None:
    settings.WHOS_ONLINE_SNAPSHOT_MAX_AGE = 30
    alices = Client()
    alices.force_login(alice)
    assert "Appear offline" in alices.get("/uncached-thread/1/").content.decode()
    Visibility.objects.create(user=alice, invisible=True)  # from another process
    assert "Appear online" in alices.get("/uncached-thread/1/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_where_each_query_commits_the_choices_are_read_without_a_transaction(
    alice: User,
) -> None:
    presence.record_user(alice.pk)
    with mock.patch.object(
        connection, "set_autocommit", wraps=connection.set_autocommit
    ) as switched:
        assert "alice" in Client().get("/busy-page/").content.decode()
    switched.assert_not_called()
