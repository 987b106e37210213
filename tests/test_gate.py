"""Every output about a user, against every rule that hides them from a
viewer: nothing leaks. The outputs ask one gate; a new output or a new rule
is a new row here."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import AsyncClient, Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import hiding, presence
from whos_online import api
from whos_online.models import Visibility

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


def learnt_about(text: str) -> list[str]:
    """What ``text`` tells of the subject: their name, a status that says
    they are here, or when they were last seen."""
    found = []
    if SUBJECT in text:
        found.append("name")
    if re.search(r"\b(online|away)\]|: '(online|away)'|badge-(online|away)", text):
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
