"""Daily figures: unique visitors today, the most online today, and the
daily peaks of the past 90 days."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from redis import Redis

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online.store import Raised

pytestmark = pytest.mark.django_db

DAY = 86400


def test_users_today_are_counted_once_each(alice: User, bob: User) -> None:
    for pk in (alice.pk, bob.pk, alice.pk):
        presence.record_user(pk)
    assert presence.snapshot(0).today.users == 2


def test_guests_today_are_estimated_within_two_percent() -> None:
    for n in range(500):
        presence.record_guest(f"10.0.{n // 256}.{n % 256}")
    assert presence.snapshot(0).today.guests == pytest.approx(500, rel=0.02)


def test_crawlers_are_not_visitors_today() -> None:
    presence.record("bots", "Googlebot")
    assert presence.snapshot(0).today.visitors == 0


def test_the_most_online_today_is_kept(alice: User, bob: User) -> None:
    presence.record_user(alice.pk)
    presence.record_user(bob.pk)
    assert presence.snapshot(0).today.most_online == 2


def test_visitors_who_left_still_count_for_today(
    alice: User, redis_client: Redis
) -> None:
    presence.record_user(alice.pk)
    presence.log_out(str(alice.pk), "")
    today = presence.snapshot(0).today
    assert (today.users, today.most_online) == (1, 1)


def test_a_new_day_starts_from_nothing(alice: User, clock: Clock) -> None:
    presence.record_user(alice.pk)
    clock.advance(DAY)
    assert presence.snapshot(0).today.visitors == 0


def test_the_daily_peaks_cover_each_day(alice: User, bob: User, clock: Clock) -> None:
    presence.record_user(alice.pk)
    presence.record_user(bob.pk)
    clock.advance(60)
    presence.record_user(bob.pk)  # the minute's first record keeps its figures
    clock.advance(DAY)
    presence.record_user(alice.pk)
    assert [most for _, most in presence.history().days] == [2, 1]


def test_daily_peaks_older_than_90_days_are_forgotten(
    alice: User, clock: Clock
) -> None:
    presence.record_user(alice.pk)
    clock.advance(90 * DAY)
    presence.record_user(alice.pk)
    assert len(presence.history().days) == 1


def test_the_widget_says_how_many_visited_today(alice: User) -> None:
    presence.record_user(alice.pk)
    html = Client().get("/widget/").content.decode()  # the reader is a guest
    assert "2 visitors today." in html
    assert "Most online today: 2." in html


def test_the_json_endpoint_has_todays_figures(alice: User) -> None:
    presence.record_user(alice.pk)
    today = Client().get("/whos-online/online.json").json()["today"]
    assert today == {"visitors": 2, "users": 1, "guests": 1, "most_online": 2}


@pytest.mark.usefixtures("warm_scripts")
def test_todays_figures_come_with_the_snapshot(
    redis_commands: CommandCounter,
) -> None:
    presence.snapshot(10)
    assert redis_commands.round_trips == 1


def test_a_room_has_no_figures_of_its_own(alice: User) -> None:
    presence.record_user(alice.pk)
    presence.record_in_room("thread:1", "users", str(alice.pk))
    assert presence.snapshot(0, room="thread:1").today.visitors == 0


def test_staff_see_30_days_of_peaks(django_user_model: type[User]) -> None:
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    html = staff.get("/admin/whos_online/onlinenow/").content.decode()
    assert html.count("<rect ") == 30
    assert "1 visitor today" in html


# Figures that can both be true.


def test_a_user_who_logs_out_is_not_counted_again_as_a_guest(
    alice: User, bob: User
) -> None:
    for n, user in enumerate((alice, bob)):
        browser = Client(REMOTE_ADDR=f"192.0.2.{n + 1}")
        browser.get("/")
        browser.post(f"/login/{user.pk}/")
        browser.get("/logout/")  # the same browser, a guest again
        browser.get("/")
    assert presence.snapshot(0).today.visitors == 2


def test_visitors_today_are_never_fewer_than_the_most_online_today(
    redis_client: Redis, isolated_presence: str
) -> None:
    """A user's second device, seen as a guest at the minute's figures, then
    logged in: more were online at once than visitors are left today."""
    presence.record_user(1)
    day = int(presence.snapshot(0).now // DAY)
    redis_client.hset(f"{{{isolated_presence}}}:daily-peaks", str(day), 3)
    today = Client().get("/whos-online/online.json").json()
    assert today["today"]["most_online"] >= today["counts"]["people"]
    assert today["today"]["visitors"] >= today["today"]["most_online"] == 3


def test_the_most_online_never_falls_back_when_someone_leaves_before_the_next_minute(
    alice: User, bob: User
) -> None:
    """Two online at once, between two minutes' figures; one turns invisible
    before the next: the most ever and the most today still say two."""
    presence.record_user(alice.pk)  # the minute's first record: its figures say 1
    presence.record_user(bob.pk)  # two online now
    presence.set_invisible(str(bob.pk), True)
    snapshot = presence.snapshot(0)
    assert snapshot.record is not None and snapshot.record[0] == 2
    assert snapshot.today.most_online == 2


# A guest who logs in as a hidden user, having arrived with the same request:
# what their arrival raised is taken back (one shard; tests/test_gate.py
# runs it through a browser).


def arrives(guest: str) -> Raised:
    """A guest's arrival: what it found raising the site's figures."""
    stamp = presence.record("guests", guest)
    assert stamp is not None and stamp.entered and stamp.raised is not None
    return stamp.raised


def test_a_hidden_login_takes_back_what_its_guest_raised(alice: User) -> None:
    presence.record_user(alice.pk)
    presence.record_guest("192.0.2.1")
    before = presence.snapshot(0)
    raised = arrives("192.0.2.2")
    assert raised.online == 3 and presence.snapshot(0).today.most_online == 3
    presence.log_in("hidden", "99", left_guest="192.0.2.2", takes_back=raised)
    after = presence.snapshot(0)
    assert after.record == before.record
    assert after.today == before.today


def test_the_days_first_arrival_logging_in_hidden_leaves_no_figure() -> None:
    """The minute's figures its record opened made the day's first peak;
    the record had none before: both are taken back."""
    raised = arrives("192.0.2.1")
    assert raised.peak_before == raised.record_before == "none"
    assert presence.most_ever_online() is not None
    presence.log_in("hidden", "99", left_guest="192.0.2.1", takes_back=raised)
    snapshot = presence.snapshot(0)
    assert snapshot.record is None
    assert snapshot.today.most_online == snapshot.today.visitors == 0


def test_a_figure_raised_further_since_the_guest_arrived_stands(
    alice: User,
) -> None:
    presence.record_user(alice.pk)
    raised = arrives("192.0.2.1")
    presence.record_guest("192.0.2.2")  # three online at once, then
    presence.log_in("hidden", "99", left_guest="192.0.2.1", takes_back=raised)
    snapshot = presence.snapshot(0)
    assert snapshot.record is not None and snapshot.record[0] == 3
    assert snapshot.today.most_online == 3


def test_a_visible_login_takes_nothing_back(alice: User, bob: User) -> None:
    presence.record_user(alice.pk)
    arrives("192.0.2.1")
    presence.log_in("users", str(bob.pk), left_guest="192.0.2.1")
    snapshot = presence.snapshot(0)
    assert snapshot.record is not None and snapshot.record[0] == 2
    assert (snapshot.today.most_online, snapshot.today.visitors) == (2, 2)
