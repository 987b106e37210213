"""The public "Who is online" page as phpBB's: sorted by name, last seen or
where; filtered to users or crawlers; pages of any size, one round trip
each; the users seen today beside it; all as the viewer may learn it."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online import board
from whos_online.models import Visibility

pytestmark = pytest.mark.django_db

PAGE = "/whos-online/"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def listed(html: str) -> list[str]:
    """The users of the table, in order."""
    table = html.split('<table class="whos-online-table">')[1].split("</table>")[0]
    return re.findall(r"<bdi>([^<]+)</bdi>", table)


def today(html: str) -> list[str]:
    if "whos-online-today-users" not in html:
        return []
    section = html.split('class="whos-online-today-users"')[1].split("</section>")[0]
    return re.findall(r"<bdi>([^<]+)</bdi>", section)


@pytest.fixture
def three_users(django_user_model: type[User], clock: Clock) -> list[User]:
    """carol first, then alice reading the forum, then bob on the members."""
    users = []
    for name, path in (("carol", "/"), ("alice", "/forum/"), ("bob", "/members/")):
        user = django_user_model.objects.create_user(name)
        browser = Client()
        browser.force_login(user)
        browser.get(path)
        users.append(user)
        clock.advance(10)
    return users


@pytest.mark.usefixtures("three_users")
def test_the_list_is_the_newest_first_by_default() -> None:
    assert listed(Client().get(PAGE).content.decode()) == ["bob", "alice", "carol"]


@pytest.mark.usefixtures("three_users")
def test_the_list_can_be_sorted_by_name() -> None:
    html = Client().get(PAGE, {"sort": "name"}).content.decode()
    assert listed(html) == ["alice", "bob", "carol"]
    assert '<strong aria-current="true">name</strong>' in html


@pytest.mark.usefixtures("three_users")
def test_the_list_can_be_sorted_by_where_those_nowhere_last() -> None:
    html = Client().get(PAGE, {"sort": "where"}).content.decode()
    assert listed(html) == ["bob", "alice", "carol"]  # Looking…, Reading…, —


@pytest.mark.usefixtures("three_users")
def test_pages_of_any_size_follow_the_sort() -> None:
    first = Client().get(PAGE, {"sort": "name", "per": "2"}).content.decode()
    second = Client().get(PAGE, {"sort": "name", "per": "2", "page": "2"})
    assert listed(first) == ["alice", "bob"]
    assert listed(second.content.decode()) == ["carol"]
    assert 'rel="next"' in first and "Page 1 of 2" in first
    assert 'rel="prev"' in second.content.decode()


@pytest.mark.usefixtures("three_users", "warm_scripts")
def test_each_page_costs_one_round_trip(redis_commands: CommandCounter) -> None:
    reader = Client()
    reader.get("/")  # recorded and guarded
    for page in ("1", "2", "3"):
        redis_commands.reset()
        reader.get(PAGE, {"per": "1", "page": page})
        assert redis_commands.round_trips == 1


@pytest.mark.usefixtures("three_users")
def test_a_page_past_the_last_is_the_last() -> None:
    html = Client().get(PAGE, {"per": "2", "page": "9"}).content.decode()
    assert listed(html) == ["carol"]


@pytest.mark.usefixtures("three_users")
def test_nonsense_asks_read_as_the_defaults() -> None:
    html = Client().get(PAGE, {"sort": "x", "show": "y", "per": "z"}).content.decode()
    assert listed(html) == ["bob", "alice", "carol"]


@pytest.mark.usefixtures("three_users")
def test_the_list_can_show_crawlers_only() -> None:
    Client(HTTP_USER_AGENT=GOOGLEBOT).get("/")
    html = Client().get(PAGE, {"show": "crawlers"}).content.decode()
    assert "whos-online-table" not in html
    assert "<bdi>Googlebot</bdi>" in html


@pytest.mark.usefixtures("three_users")
def test_the_list_can_show_users_only() -> None:
    Client(HTTP_USER_AGENT=GOOGLEBOT).get("/")
    html = Client().get(PAGE, {"show": "users"}).content.decode()
    assert listed(html) == ["bob", "alice", "carol"]
    assert "<bdi>Googlebot</bdi>" not in html


def test_the_users_seen_today_are_named_beside_the_list(
    three_users: list[User], clock: Clock
) -> None:
    clock.advance(20 * 60)  # they left the window, but were seen today
    html = Client().get(PAGE).content.decode()
    assert today(html) == ["alice", "bob", "carol"]


def test_the_users_seen_today_leave_out_whoever_appears_offline(
    three_users: list[User],
) -> None:
    Visibility.objects.create(user=three_users[0], invisible=True)  # carol
    assert today(Client().get(PAGE).content.decode()) == ["alice", "bob"]


def test_the_users_seen_today_follow_who_sees_names(
    three_users: list[User], settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_NAMES_VISIBLE_TO = "users"
    assert today(Client().get(PAGE).content.decode()) == []


def test_the_users_seen_today_leave_out_whom_the_site_hides(
    django_user_model: type[User], settings: SettingsWrapper
) -> None:
    ghost = django_user_model.objects.create_user("ghost")
    presence.record_user(ghost.pk)  # seen today before the rule
    settings.WHOS_ONLINE_IS_HIDDEN = "tests.hiding.is_ghost"
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    assert "ghost" not in today(Client().get(PAGE).content.decode())
    assert "ghost" in today(staff.get(PAGE).content.decode())


def test_the_page_is_refused_to_guests_where_the_site_says(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_ANONYMOUS_CAN_VIEW = False
    assert Client().get(PAGE).status_code == 403


# Every sort pages alike: five users, pages of one to four.

FIVE = {
    # name: where they are, in the order they arrive (the newest last)
    "erin": "/forum/",
    "carol": "/",
    "alice": "/members/",
    "dave": "/forum/",
    "bob": "/",
}
IN_ORDER = {
    "seen": ["bob", "dave", "alice", "carol", "erin"],
    "name": ["alice", "bob", "carol", "dave", "erin"],
    # "Looking at the members", "Reading the forum", then those nowhere.
    "where": ["alice", "dave", "erin", "bob", "carol"],
}


@pytest.fixture
def five_users(django_user_model: type[User], clock: Clock) -> None:
    for name, path in FIVE.items():
        browser = Client()
        browser.force_login(django_user_model.objects.create_user(name))
        browser.get(path)
        clock.advance(10)


def page_of(html: str) -> tuple[int, int]:
    """This page's number and how many there are, as the page says them."""
    found = re.search(r"Page (\d+) of (\d+)", html)
    return (1, 1) if found is None else (int(found[1]), int(found[2]))


@pytest.mark.usefixtures("five_users")
@pytest.mark.parametrize("sort", sorted(IN_ORDER))
def test_each_sort_lists_everyone_on_one_page(sort: str) -> None:
    html = Client().get(PAGE, {"sort": sort}).content.decode()
    assert listed(html) == IN_ORDER[sort]
    assert page_of(html) == (1, 1)
    assert "more not listed" not in html


@pytest.mark.usefixtures("five_users")
@pytest.mark.parametrize("per", [1, 2, 3, 4])
@pytest.mark.parametrize("sort", sorted(IN_ORDER))
def test_each_sort_pages_through_everyone(sort: str, per: int) -> None:
    pages = -(-len(FIVE) // per)
    seen: list[str] = []
    for number in range(1, pages + 1):
        asked = {"sort": sort, "per": str(per), "page": str(number)}
        html = Client().get(PAGE, asked).content.decode()
        assert page_of(html) == (number, pages)
        assert ('rel="next"' in html) == (number < pages)
        assert ('rel="prev"' in html) == (number > 1)
        # Everyone is on some page: none is "not listed".
        assert "more not listed" not in html
        seen += listed(html)
    assert seen == IN_ORDER[sort]


@pytest.mark.usefixtures("five_users")
@pytest.mark.parametrize("sort", sorted(IN_ORDER))
def test_each_sort_reads_a_page_past_the_last_as_the_last(sort: str) -> None:
    html = Client().get(PAGE, {"sort": sort, "per": "2", "page": "4"}).content.decode()
    assert page_of(html) == (3, 3)
    assert listed(html) == IN_ORDER[sort][4:]
    assert 'rel="next"' not in html


# Numbers no one would write: still a page, never an error.

THOUSANDS_OF_DIGITS = "9" * 5000  # past int()'s 4,300 digits


@pytest.mark.usefixtures("five_users")
@pytest.mark.parametrize("sort", sorted(IN_ORDER))
def test_a_page_of_thousands_of_digits_is_the_last(sort: str) -> None:
    asked = {"sort": sort, "per": "2", "page": THOUSANDS_OF_DIGITS}
    response = Client().get(PAGE, asked)
    assert response.status_code == 200
    assert page_of(response.content.decode()) == (3, 3)


@pytest.mark.usefixtures("five_users")
def test_leading_zeros_are_read_past() -> None:
    html = Client().get(PAGE, {"per": "0" * 5000 + "2", "page": "003"}).content
    assert page_of(html.decode()) == (3, 3)


@pytest.mark.usefixtures("five_users")
def test_a_per_of_thousands_of_digits_is_the_most_a_page_shows() -> None:
    response = Client().get(PAGE, {"per": THOUSANDS_OF_DIGITS})
    assert response.status_code == 200
    html = response.content.decode()
    assert listed(html) == IN_ORDER["seen"]
    assert "per=200" in html


@pytest.mark.usefixtures("five_users")
@pytest.mark.parametrize(
    "number", ["-1", "²", "１", "٣", "2.0", " 2", "+2", "2\x00", "0x2", "1e3", ""]
)
def test_a_page_or_per_that_is_no_plain_number_reads_as_the_default(
    number: str,
) -> None:
    for asked in ({"per": number}, {"page": number, "per": "2"}):
        response = Client().get(PAGE, asked)
        assert response.status_code == 200
        assert listed(response.content.decode())[0] == "bob"


@pytest.mark.usefixtures("five_users")
@pytest.mark.parametrize("sort", sorted(IN_ORDER))
def test_past_the_newest_listed_each_sort_says_how_many_more(
    sort: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(board, "MOST_LISTED", 3)
    first = Client().get(PAGE, {"sort": sort, "per": "1"}).content.decode()
    last = Client().get(PAGE, {"sort": sort, "per": "1", "page": "3"}).content
    assert page_of(first) == (1, 3)
    assert "And 2 more not listed." in first
    assert "And 2 more not listed." in last.decode()
