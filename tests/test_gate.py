"""Every output about a user, against every rule that hides them from a
viewer: nothing leaks. The outputs ask one gate; a new output or a new rule
is a new row here."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import AsyncClient, Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import hiding, presence
from tests.conftest import Clock
from whos_online import api
from whos_online.models import Visibility
from whos_online.roster import online_roster

pytestmark = pytest.mark.django_db

SUBJECT = "ghost1"  # a name WHOS_ONLINE_IS_HIDDEN = tests.hiding.is_ghost hides


@pytest.fixture
def subject(django_user_model: type[User]) -> User:
    """A user online, in the site and in the room thread:1."""
    user = django_user_model.objects.create_user(SUBJECT)
    browser = Client()
    browser.force_login(user)
    browser.get("/thread/1/")
    return user


# The rules, each making the subject someone a guest may not learn about.


def chose_invisible_while_redis_missed_it(subject: User, _: SettingsWrapper) -> None:
    """The database says invisible; Redis still holds them as visible."""
    Visibility.objects.create(user=subject, invisible=True)


def hidden_by_the_site_rule(subject: User, settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_IS_HIDDEN = "tests.hiding.is_ghost"
    browser = Client()
    browser.force_login(subject)
    browser.get("/thread/1/")  # a new session: recorded under the rule


def invisible_and_counted_apart(subject: User, settings: SettingsWrapper) -> None:
    chose_invisible_while_redis_missed_it(subject, settings)
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "separate"


def invisible_and_counted_in_the_total(
    subject: User, settings: SettingsWrapper
) -> None:
    chose_invisible_while_redis_missed_it(subject, settings)
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "in-total"


def names_for_users_only(_: User, settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_NAMES_VISIBLE_TO = "users"


def too_few_names_to_list(_: User, settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_MIN_NAMES_LISTED = 2


Rule = Callable[[User, SettingsWrapper], None]
HIDING: list[Rule] = [chose_invisible_while_redis_missed_it, hidden_by_the_site_rule]
RULES: list[Rule] = [
    *HIDING,
    invisible_and_counted_apart,
    invisible_and_counted_in_the_total,
    names_for_users_only,
    too_few_names_to_list,
]


# The outputs, each as the text a guest is given.


def page_of_every_tag(subject: User) -> str:
    return Client().get(f"/every-output/{subject.username}/").content.decode()


def json_endpoint(_: User) -> str:
    return Client().get("/whos-online/online.json").content.decode()


def fragment_endpoint(_: User) -> str:
    return Client().get("/whos-online/widget/").content.decode()


def public_page(_: User) -> str:
    return Client().get("/whos-online/").content.decode()


def python_api(subject: User) -> str:
    answers = {
        "status": api.status(subject),
        "online": api.is_online(subject),
        "last seen": api.last_seen(subject),
        "statuses": api.statuses([subject])[subject.pk].status,
        "users": [online.name for online in api.online_users()],
        "viewing": api.is_viewing(subject, "thread:1"),
        "viewers": [online.name for online in api.viewers("thread:1")],
    }
    return repr(answers)


OUTPUTS = [page_of_every_tag, json_endpoint, fragment_endpoint, public_page, python_api]


# A status that says the subject is here: a filter's, a presence_list row's,
# the API's or a badge's.
STATUS_TOLD = (
    r"\b(online|away)\]|\[list (online|away)\b|: '(online|away)'|badge-(online|away)"
)


def learnt_about(text: str) -> list[str]:
    """What ``text`` tells of the subject: their name, a status that says
    they are here, or when they were last seen."""
    found = []
    if SUBJECT in text:
        found.append("name")
    if re.search(STATUS_TOLD, text):
        found.append("status")
    if re.search(r"\[seen \d|\[list \w+ \d|datetime\.datetime|<time ", text):
        found.append("last seen")
    if re.search(r"'(online|viewing)': True", text):
        found.append("online")
    return found


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("rule", RULES)
def test_no_output_tells_a_guest_what_a_rule_hides(
    subject: User, settings: SettingsWrapper, rule: Rule, output: Callable[[User], str]
) -> None:
    rule(subject, settings)
    assert learnt_about(output(subject)) == []


@pytest.mark.parametrize("rule", HIDING)
def test_no_count_tells_a_guest_a_hidden_user_is_online(
    subject: User, settings: SettingsWrapper, rule: Rule
) -> None:
    rule(subject, settings)
    shown = re.sub(r"<[^>]+>", "", page_of_every_tag(subject))
    assert "[count 1 users 0]" in shown  # the guest looking, and no user
    assert "[rooms 0]" in shown
    assert api.counts().users == 0
    assert api.room_counts(["thread:1"])["thread:1"].users == 0
    assert Client().get("/whos-online/online.json").json()["counts"]["users"] == 0


def test_the_api_says_unknown_where_the_audience_may_not_learn(
    subject: User, settings: SettingsWrapper
) -> None:
    names_for_users_only(subject, settings)
    assert api.status(subject) == "unknown"
    assert not api.is_online(subject)


# When a user was last seen: each rule that keeps the time from a guest.


def hides_their_last_seen(subject: User, _: SettingsWrapper) -> None:
    Visibility.objects.create(user=subject, hide_last_seen=True)


def the_site_shows_last_seen_roughly(_: User, settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_LAST_SEEN_SHOWN = "approximate"


def the_site_shows_no_last_seen(_: User, settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_LAST_SEEN_SHOWN = "never"


TIMING: list[Rule] = [
    hides_their_last_seen,
    the_site_shows_last_seen_roughly,
    the_site_shows_no_last_seen,
]


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("rule", TIMING)
def test_no_output_tells_a_guest_the_time_a_rule_keeps_from_them(
    subject: User, settings: SettingsWrapper, rule: Rule, output: Callable[[User], str]
) -> None:
    rule(subject, settings)
    assert "last seen" not in learnt_about(output(subject))


# A page kept by Django's cache is made for nobody in particular.


@pytest.fixture
def empty_cache() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


@pytest.mark.usefixtures("empty_cache")
def test_a_staff_members_view_never_reaches_a_cached_page(
    subject: User, django_user_model: type[User]
) -> None:
    Visibility.objects.create(user=subject, invisible=True)
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    staff.get(f"/cached-output/{SUBJECT}/")  # rendered first, for staff
    kept = Client().get(f"/cached-output/{SUBJECT}/").content.decode()
    assert learnt_about(kept) == []
    assert "(hidden)" not in kept
    assert 'data-whos-online-hidden="1"' not in kept


def test_a_page_showing_a_staff_members_view_is_private(
    subject: User, django_user_model: type[User]
) -> None:
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    response = staff.get(f"/every-output/{SUBJECT}/")
    assert "private" in response["Cache-Control"]
    assert "Cookie" in response["Vary"]


def test_a_page_a_guest_sees_stays_cacheable(subject: User) -> None:
    response = Client().get(f"/every-output/{SUBJECT}/")
    assert "private" not in response.get("Cache-Control", "")


def test_a_subject_who_may_be_seen_is_seen(subject: User) -> None:
    """The other side of every row above: with no rule, each output tells."""
    for output in OUTPUTS:
        assert "name" in learnt_about(output(subject)), output.__name__
    assert "last seen" in learnt_about(page_of_every_tag(subject))
    assert "last seen" in learnt_about(public_page(subject))
    presence.record_user(subject.pk)


def test_a_logged_in_viewer_in_the_audience_sees_every_output(
    subject: User, settings: SettingsWrapper, bob: User
) -> None:
    names_for_users_only(subject, settings)
    viewer = Client()
    viewer.force_login(bob)
    html = viewer.get(f"/every-output/{SUBJECT}/").content.decode()
    assert "[status online]" in html
    assert "badge-online" in html


# The site's own rule of who may see whom (WHOS_ONLINE_CAN_SEE).


@pytest.fixture
def friends_only(settings: SettingsWrapper) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.friends_only"


@pytest.mark.usefixtures("friends_only")
@pytest.mark.parametrize("output", OUTPUTS)
def test_no_output_tells_a_viewer_what_the_sites_rule_keeps_from_them(
    subject: User, output: Callable[[User], str]
) -> None:
    assert learnt_about(output(subject)) == []


@pytest.mark.usefixtures("friends_only")
def test_the_sites_rule_keeps_users_out_of_the_counts_it_hides_them_from(
    subject: User,
) -> None:
    shown = re.sub(r"<[^>]+>", "", page_of_every_tag(subject))
    assert "[count 1 users 0]" in shown
    assert api.counts().users == 0


@pytest.mark.usefixtures("friends_only")
def test_a_viewer_the_sites_rule_allows_sees_every_output(
    subject: User, django_user_model: type[User]
) -> None:
    friend = Client()
    friend.force_login(django_user_model.objects.create_user(f"friend-of-{SUBJECT}"))
    html = friend.get(f"/every-output/{SUBJECT}/").content.decode()
    assert "[status online]" in html
    assert f"<bdi>{SUBJECT}</bdi>" in html
    assert api.status(subject, viewer=friend_user(django_user_model)) == "online"


def friend_user(django_user_model: type[User]) -> User:
    return django_user_model.objects.get(username=f"friend-of-{SUBJECT}")


@pytest.mark.usefixtures("friends_only")
def test_the_sites_rule_is_asked_once_for_a_page_of_names(
    subject: User, django_user_model: type[User]
) -> None:
    for n in range(20):
        presence.record_user(django_user_model.objects.create_user(f"user{n}").pk)
    asked = hiding.ASKED
    asked.clear()
    Client().get("/widget/")
    assert len(asked) == 1


def test_a_sites_rule_that_fails_hides_everyone_and_serves_the_page(
    subject: User, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.broken_rule"
    response = Client().get(f"/every-output/{SUBJECT}/")
    assert response.status_code == 200
    assert learnt_about(response.content.decode()) == []


@pytest.mark.usefixtures("friends_only")
def test_a_page_made_under_the_sites_rule_is_private(subject: User) -> None:
    response = Client().get(f"/every-output/{SUBJECT}/")
    assert "private" in response["Cache-Control"]


@pytest.mark.parametrize(
    ("rule", "users", "hidden"),
    [
        (invisible_and_counted_apart, 0, 1),
        (invisible_and_counted_in_the_total, 1, None),
    ],
)
def test_a_hidden_user_counts_as_the_site_chose(
    subject: User, settings: SettingsWrapper, rule: Rule, users: int, hidden: int | None
) -> None:
    rule(subject, settings)
    counts = Client().get("/whos-online/online.json").json()["counts"]
    assert (counts["users"], counts["hidden"]) == (users, hidden)


def test_a_page_showing_a_staff_members_view_is_private_over_asgi(
    subject: User, django_user_model: type[User]
) -> None:
    staff = AsyncClient()
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    response = async_to_sync(staff.get)(f"/every-output/{SUBJECT}/")
    assert "private" in response["Cache-Control"]


# Outputs only staff reach: the rules that bind staff too are the site's own
# (WHOS_ONLINE_CAN_SEE) and the least number of names.


def admin_editing_notice(subject: User, django_user_model: type[User]) -> str:
    """A staff member's ask of a change form the subject has open (editing)."""
    from django.contrib.auth.models import Group

    topic, _ = Group.objects.get_or_create(name="topic")
    for room in (
        f"admin:auth.group:{topic.pk}",
        f"admin-editing:auth.group:{topic.pk}",
    ):
        presence.record_in_room(room, "users", str(subject.pk))
    from whos_online import editing

    editor = django_user_model.objects.create_superuser("editor", "", "pw")
    staff = Client()
    staff.login(username="editor", password="pw")
    mark = editing.form_mark(editor, topic, editing.new_tab())
    url = f"/editing-admin/auth/group/{topic.pk}/presence/"
    answer = staff.post(url, {"opened": mark}).json()
    return str(answer["html"])


def test_the_admin_notice_names_nobody_below_the_least_number(
    subject: User, settings: SettingsWrapper, django_user_model: type[User]
) -> None:
    settings.WHOS_ONLINE_MIN_NAMES_LISTED = 3  # the subject and the staff member
    assert learnt_about(admin_editing_notice(subject, django_user_model)) == []


@pytest.mark.usefixtures("friends_only")
def test_the_admin_notice_names_nobody_the_sites_rule_keeps_from_staff(
    subject: User, django_user_model: type[User]
) -> None:
    assert learnt_about(admin_editing_notice(subject, django_user_model)) == []


def test_the_admin_notice_names_whom_staff_may_see(
    subject: User, django_user_model: type[User]
) -> None:
    assert learnt_about(admin_editing_notice(subject, django_user_model)) == ["name"]


# Every output, to every viewer: a guest, a user, a user who chose to appear
# offline, a user who hides their own last seen, staff, and staff under the
# site's rule (WHOS_ONLINE_CAN_SEE, which binds staff too), against each
# setting that hides the subject or their time from some of them.


def nothing_hides(_: User, __: SettingsWrapper) -> None:
    """The subject may be seen by anyone the viewer's own state allows."""


HIDDEN: list[Rule] = [
    *HIDING,
    invisible_and_counted_apart,
    invisible_and_counted_in_the_total,
]
SETTINGS: list[Rule] = [nothing_hides, *HIDDEN, names_for_users_only, *TIMING]

ViewerMaker = Callable[[type[User], SettingsWrapper], tuple[Client, User | None]]


def logged_in(user: User) -> tuple[Client, User]:
    """A browser of ``user``, recorded online (the API asks for no page)."""
    browser = Client()
    browser.force_login(user)
    browser.get("/")
    return browser, user


def a_guest(_: type[User], __: SettingsWrapper) -> tuple[Client, User | None]:
    return Client(), None


def a_user(model: type[User], _: SettingsWrapper) -> tuple[Client, User | None]:
    return logged_in(model.objects.create_user("viewer"))


def an_invisible_user(
    model: type[User], _: SettingsWrapper
) -> tuple[Client, User | None]:
    user = model.objects.create_user("viewer")
    Visibility.objects.create(user=user, invisible=True)
    return logged_in(user)


def a_user_hiding_their_last_seen(
    model: type[User], _: SettingsWrapper
) -> tuple[Client, User | None]:
    """Who sees others' last seen only roughly, as Telegram does it."""
    user = model.objects.create_user("viewer")
    Visibility.objects.create(user=user, hide_last_seen=True)
    return logged_in(user)


def staff(model: type[User], _: SettingsWrapper) -> tuple[Client, User | None]:
    return logged_in(model.objects.create_user("viewer", is_staff=True))


def staff_under_a_rule(
    model: type[User], settings: SettingsWrapper
) -> tuple[Client, User | None]:
    """Staff whom the site's rule shows nobody (they are no one's friend)."""
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.friends_only"
    return logged_in(model.objects.create_user("viewer", is_staff=True))


VIEWERS: list[ViewerMaker] = [
    a_guest,
    a_user,
    an_invisible_user,
    a_user_hiding_their_last_seen,
    staff,
    staff_under_a_rule,
]

EVERYTHING = {"name", "status", "last seen", "online"}


def may_learn(viewer: ViewerMaker, setting: Rule) -> set[str]:
    """What ``viewer`` may learn of the subject under ``setting``."""
    if viewer is staff_under_a_rule:
        return set()
    if setting is names_for_users_only and viewer is a_guest:
        return set()
    if setting in HIDDEN and viewer is not staff:
        return set()
    exact = viewer is staff or (
        viewer is not a_user_hiding_their_last_seen
        and setting not in (hides_their_last_seen, the_site_shows_last_seen_roughly)
    )
    if setting is the_site_shows_no_last_seen or not exact:
        return EVERYTHING - {"last seen"}
    return set(EVERYTHING)


def every_tag_seen_by(browser: Client, _: User | None, subject: User) -> str:
    return browser.get(f"/every-output/{subject.username}/").content.decode()


def json_seen_by(browser: Client, _: User | None, __: User) -> str:
    return browser.get("/whos-online/online.json").content.decode()


def fragment_seen_by(browser: Client, _: User | None, __: User) -> str:
    return browser.get("/whos-online/widget/").content.decode()


def public_page_seen_by(browser: Client, _: User | None, __: User) -> str:
    """The public page's rows about the subject, and the users seen today."""
    html = browser.get("/whos-online/").content.decode()
    return re.sub(
        r"<tr\b.*?</tr>",
        lambda row: row[0] if SUBJECT in row[0] else "",
        html,
        flags=re.S,
    )


def api_seen_by(_: Client, viewer: User | None, subject: User) -> str:
    answers = {
        "status": api.status(subject, viewer=viewer),
        "online": api.is_online(subject, viewer=viewer),
        "last seen": api.last_seen(subject, viewer=viewer),
        "statuses": api.statuses([subject], viewer=viewer)[subject.pk].status,
        "users": [online.name for online in api.online_users(viewer=viewer)],
        "viewing": api.is_viewing(subject, "thread:1", viewer=viewer),
        "viewers": [online.name for online in api.viewers("thread:1", viewer=viewer)],
    }
    return repr(answers)


SeenBy = Callable[[Client, User | None, User], str]
# Each output with what it can tell of the subject at most.
VIEWED: list[tuple[SeenBy, set[str]]] = [
    (every_tag_seen_by, {"name", "status", "last seen"}),
    (json_seen_by, {"name"}),
    (fragment_seen_by, {"name"}),
    (public_page_seen_by, {"name", "last seen"}),
    (api_seen_by, EVERYTHING),
]


@pytest.mark.parametrize(("output", "can_tell"), VIEWED)
@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("viewer", VIEWERS)
def test_every_output_tells_each_viewer_what_they_may_learn_and_no_more(
    subject: User,
    settings: SettingsWrapper,
    django_user_model: type[User],
    viewer: ViewerMaker,
    setting: Rule,
    output: SeenBy,
    can_tell: set[str],
) -> None:
    setting(subject, settings)
    browser, user = viewer(django_user_model, settings)
    learnt = set(learnt_about(output(browser, user, subject)))
    assert learnt == may_learn(viewer, setting) & can_tell


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("viewer", VIEWERS)
def test_the_users_seen_today_name_whom_the_viewer_may_know_was_here(
    clock: Clock,  # first: the day it may start afresh is the subject's
    subject: User,
    settings: SettingsWrapper,
    django_user_model: type[User],
    viewer: ViewerMaker,
    setting: Rule,
) -> None:
    """Being among the users seen today, once they left, tells when they
    were last seen: only where the viewer may learn it to the minute."""
    setting(subject, settings)
    browser, user = viewer(django_user_model, settings)
    clock.advance(20 * 60)  # the subject left the window, but was seen today
    html = browser.get("/whos-online/").content.decode()
    told = "last seen" in may_learn(viewer, setting)
    assert ("name" in learnt_about(html)) is told


# Counts agree with the names a viewer is given: whoever a list leaves out,
# its count leaves out too (but where the site counts hidden users in the
# total, by its own choice, for everyone but staff).


def counts_agree(viewer: ViewerMaker, setting: Rule) -> bool:
    return viewer is staff or setting is not invisible_and_counted_in_the_total


def named_in_json(data: dict[str, Any], viewer: ViewerMaker) -> tuple[int, int]:
    """(users counted, users named or told of as "more") in the JSON."""
    counts = data["counts"]
    counted = counts["users"] + (counts["hidden"] if viewer is staff else 0)
    return counted, len(data["users"]) + data["more"]


def named_in_fragment(html: str, viewer: ViewerMaker) -> tuple[int, int]:
    """(users counted, users named or told of as "more") in the widget."""
    counted = int(re.search(r'data-whos-online-users="(\d+)"', html)[1])  # type: ignore[index]
    if viewer is staff:
        counted += int(re.search(r'data-whos-online-hidden="(\d+)"', html)[1])  # type: ignore[index]
    more = re.search(r"and (\d+) more", html)
    named = html.count('<span class="whos-online-user')
    return counted, named + (int(more[1]) if more else 0)


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("viewer", VIEWERS)
def test_every_count_agrees_with_the_names_its_viewer_is_given(
    subject: User,
    settings: SettingsWrapper,
    django_user_model: type[User],
    viewer: ViewerMaker,
    setting: Rule,
) -> None:
    setting(subject, settings)
    browser, user = viewer(django_user_model, settings)
    if not counts_agree(viewer, setting):
        pytest.skip("the site counts hidden users in the total, unnamed")
    data = browser.get("/whos-online/online.json").json()
    if data["names_shown"]:
        assert named_in_json(data, viewer)[0] == named_in_json(data, viewer)[1]
        html = browser.get("/whos-online/widget/").content.decode()
        assert named_in_fragment(html, viewer)[0] == named_in_fragment(html, viewer)[1]
    here = api.room_counts(["thread:1"], viewer=user)["thread:1"]
    room = online_roster(room="thread:1", viewer=user)
    assert here == room.counts
    if room.shows_names:
        counted = here.users + (here.hidden if viewer is staff else 0)
        assert counted == len(room.users) + room.more
    if viewer is staff_under_a_rule:  # nobody it may see: none, hidden or not
        assert (data["counts"]["users"], data["counts"]["hidden"]) == (0, 0)
        assert (here.users, here.hidden) == (0, 0)
        assert "more not listed" not in browser.get("/whos-online/").content.decode()


# An invisible user's arrival moves no figure anyone sees: not on a page
# with their session, and not when they log in (the guest their browser was
# recorded as, before the view that logged them in, is taken back).


def figures_a_guest_sees() -> dict[str, Any]:
    data = Client(REMOTE_ADDR="192.0.2.200").get("/whos-online/online.json").json()
    return {"today": data["today"], "record": data["record"], "counts": data["counts"]}


def arrives_with_a_session(user: User) -> None:
    browser = Client(REMOTE_ADDR="192.0.2.100")
    browser.force_login(user)
    browser.get("/")


def logs_in_at_once(user: User) -> None:
    """A login link opened in a new browser: its first request logs in."""
    Client(REMOTE_ADDR="192.0.2.100").get(f"/login/{user.pk}/")


Arrival = Callable[[User], None]


@pytest.mark.parametrize("arrival", [arrives_with_a_session, logs_in_at_once])
@pytest.mark.parametrize("hidden_by", ["their choice", "the site's rule"])
def test_an_invisible_users_arrival_moves_no_public_figure(
    alice: User,
    django_user_model: type[User],
    settings: SettingsWrapper,
    arrival: Arrival,
    hidden_by: str,
) -> None:
    logged_in(alice)  # one user, and the guest reading: two visitors
    if hidden_by == "their choice":
        hidden = django_user_model.objects.create_user("bob")
        Visibility.objects.create(user=hidden, invisible=True)
    else:
        settings.WHOS_ONLINE_IS_HIDDEN = "tests.hiding.is_ghost"
        hidden = django_user_model.objects.create_user("ghost2")
    before = figures_a_guest_sees()
    assert (before["today"]["visitors"], before["today"]["guests"]) == (2, 1)
    arrival(hidden)
    assert figures_a_guest_sees() == before


def test_a_login_after_browsing_as_a_guest_moves_no_public_figure(
    alice: User, bob: User
) -> None:
    """The guest was seen as one; logging in as a hidden user changes none
    of the figures (a drop would tell that they logged in, invisible)."""
    logged_in(alice)
    Visibility.objects.create(user=bob, invisible=True)
    browser = Client(REMOTE_ADDR="192.0.2.100")
    browser.get("/")
    before = figures_a_guest_sees()
    browser.get(f"/login/{bob.pk}/")
    after = figures_a_guest_sees()
    assert after["today"] == before["today"]
    assert after["record"] == before["record"]


@pytest.mark.usefixtures("friends_only")
def test_the_sites_rule_keeps_a_hidden_user_out_of_the_hidden_count_it_tells(
    subject: User, settings: SettingsWrapper, django_user_model: type[User]
) -> None:
    invisible_and_counted_apart(subject, settings)
    assert Client().get("/whos-online/online.json").json()["counts"]["hidden"] == 0
    assert api.room_counts(["thread:1"])["thread:1"].hidden == 0
    friend = django_user_model.objects.create_user(f"friend-of-{SUBJECT}")
    assert api.counts(viewer=friend).hidden == 1
    assert api.room_counts(["thread:1"], viewer=friend)["thread:1"].hidden == 1
