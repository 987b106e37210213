"""Who else is editing this, in the Django admin.

A change form of a ModelAdmin with ``ConcurrentEditingMixin`` (or of every
ModelAdmin, with ``WHOS_ONLINE_ADMIN_EDITING``) shows the other staff who
have the same object open, and which of them are editing it rather than
viewing it; the form's script keeps that current by asking the form's
presence URL every ``WHOS_ONLINE_ADMIN_EDITING_SECONDS``. Saving over
someone else's save since the form was opened is refused until the staff
member says they mean it. Everything named goes through the gate.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin as django_admin
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group, User
from django.db import connection, connections
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import translation
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import Clock, CommandCounter
from whos_online import editing
from whos_online.admin import ConcurrentEditingMixin, EditingAdminSite
from whos_online.models import Visibility

pytestmark = pytest.mark.django_db

ADMIN = "/editing-admin/auth/group"
NOTICE = re.compile(r'<div class="whos-online-editing"[^>]*>(.*?)</div>', re.S)


@pytest.fixture
def topic() -> Group:
    return Group.objects.create(name="Release notes")


def staff(name: str, **extra: Any) -> Client:
    User.objects.create_superuser(name, f"{name}@example.com", "pw", **extra)
    client = Client()
    client.login(username=name, password="pw")
    return client


@pytest.fixture
def ana() -> Client:
    return staff("ana")


@pytest.fixture
def bo() -> Client:
    return staff("bo")


def open_form(client: Client, topic: Group) -> str:
    response = client.get(f"{ADMIN}/{topic.pk}/change/")
    assert response.status_code == 200
    return response.content.decode()


def notice(page: str) -> str:
    """The text of the change form's notice, tags left out."""
    found = NOTICE.search(page)
    assert found is not None, "the change form has no notice of who else is here"
    return text(found.group(1))


def opened(page: str) -> str:
    """The mark the change form carries to its save."""
    found = re.search(r'name="whos_online_opened" value="([^"]*)"', page)
    assert found is not None
    return found.group(1)


def script_config(page: str) -> dict[str, Any]:
    found = re.search(r'id="whos-online-editing-script"[^>]*>(.*?)</script>', page)
    assert found is not None
    config: dict[str, Any] = json.loads(found.group(1))
    return config


def tab(client: Client, topic: Group) -> str:
    """The mark the asks of ``client``'s page of ``topic`` send (its tab):
    the form is opened once per client and object, as a tab would be."""
    tabs: dict[Any, str] = client.__dict__.setdefault("tabs", {})
    if topic.pk not in tabs:
        tabs[topic.pk] = script_config(open_form(client, topic))["mark"]
    return tabs[topic.pk]


def text(html: str) -> str:
    """What a reader sees of ``html``: its words, tags left out."""
    return " ".join(re.sub(r"<[^>]+>", "", html).split())


def ping(client: Client, topic: Group, **data: str) -> dict[str, Any]:
    """An ask of ``client``'s tab of ``topic`` (``opened``: another mark)."""
    data = {"opened": tab(client, topic), **data}
    response = client.post(f"{ADMIN}/{topic.pk}/presence/", data)
    assert response.status_code == 200
    answer: dict[str, Any] = response.json()
    answer["text"] = text(answer["html"])
    return answer


def close_form(client: Client, topic: Group) -> None:
    data = {"opened": tab(client, topic), "leaving": "1"}
    response = client.post(f"{ADMIN}/{topic.pk}/presence/", data)
    assert response.status_code == 204


def save(client: Client, topic: Group, name: str, **extra: str) -> Any:
    form = {"name": name, **extra}
    return client.post(f"{ADMIN}/{topic.pk}/change/", form)


def test_a_change_form_shows_who_else_has_the_object_open(
    topic: Group, ana: Client, bo: Client
) -> None:
    open_form(ana, topic)
    assert notice(open_form(bo, topic)) == "ana is viewing this group."


def test_a_model_admin_of_djangos_own_keeps_working(ana: Client, bo: Client) -> None:
    subject = User.objects.create_user("carl")
    url = f"/editing-admin/auth/user/{subject.pk}/change/"
    mark = opened(ana.get(url).content.decode())
    form = {"username": "carl", "date_joined_0": "2026-01-01", "date_joined_1": "00:00"}
    assert bo.post(url, form).status_code == 302
    refused = ana.post(url, {**form, "whos_online_opened": mark})
    assert "bo saved this user after you opened it." in text(refused.content.decode())


def test_nobody_else_here_shows_no_names(topic: Group, ana: Client) -> None:
    open_form(ana, topic)
    assert notice(open_form(ana, topic)) == ""


def test_someone_changing_the_form_shows_as_editing(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(ana, topic, editing="1")
    answer = ping(bo, topic)
    assert answer["text"] == "ana is editing this group."
    assert answer["editing"] == 1


def test_the_others_are_kept_current_while_the_form_is_open(
    topic: Group, ana: Client, bo: Client
) -> None:
    open_form(bo, topic)
    assert ping(bo, topic)["text"] == ""
    ping(ana, topic)
    assert ping(bo, topic)["text"] == "ana is viewing this group."


def test_someone_who_closes_the_form_leaves_at_once(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(ana, topic, editing="1")
    close_form(ana, topic)
    assert ping(bo, topic)["text"] == ""


def another_tab(client: Client, topic: Group, **data: str) -> str:
    """Open ``topic``'s form in another tab of ``client`` and ask from it:
    the new tab's mark."""
    mark = str(script_config(open_form(client, topic))["mark"])
    response = client.post(f"{ADMIN}/{topic.pk}/presence/", {"opened": mark, **data})
    assert response.status_code == 200
    return mark


def test_closing_one_of_two_tabs_keeps_the_other_in_the_notice(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(ana, topic)
    second = another_tab(ana, topic)
    response = ana.post(
        f"{ADMIN}/{topic.pk}/presence/", {"opened": second, "leaving": "1"}
    )
    assert response.status_code == 204
    assert ping(bo, topic)["text"] == "ana is viewing this group."


def test_a_tab_only_viewing_leaves_another_tab_editing(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(ana, topic, editing="1")
    another_tab(ana, topic)  # asks without editing=1
    assert ping(bo, topic)["text"] == "ana is editing this group."


def test_a_site_full_of_users_leaves_staff_in_the_admin_rooms(
    topic: Group, ana: Client, bo: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 2
    for n in (1, 2, 3):
        presence.record_in_room(f"thread:{n}", "users", str(100 + n))
    assert presence.record_in_room("thread:3", "users", "103") is None  # full
    ping(ana, topic)
    assert ping(bo, topic)["text"] == "ana is viewing this group."


def test_someone_whose_form_stops_asking_drops_off(
    topic: Group, ana: Client, bo: Client, clock: Clock, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_ADMIN_EDITING_SECONDS = 10
    ping(ana, topic)
    clock.advance(59)
    assert ping(bo, topic)["text"] == "ana is viewing this group."
    clock.advance(2)  # six pings missed
    assert ping(bo, topic)["text"] == ""


def test_editing_turns_back_to_viewing_at_once_when_the_changes_are_undone(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(ana, topic, editing="1")
    ping(ana, topic)  # the form is as it was opened again: no editing=1
    assert ping(bo, topic)["text"] == "ana is viewing this group."


def test_editing_turns_back_to_viewing_once_the_changes_are_gone(
    topic: Group, ana: Client, bo: Client, clock: Clock
) -> None:
    ping(ana, topic, editing="1")
    clock.advance(61)
    ping(ana, topic)  # the form is as it was opened again
    assert ping(bo, topic)["text"] == "ana is viewing this group."


def test_other_objects_are_other_rooms(ana: Client, bo: Client) -> None:
    first, second = Group.objects.create(name="a"), Group.objects.create(name="b")
    ping(ana, first, editing="1")
    assert ping(bo, second)["text"] == ""


def test_a_save_by_someone_else_since_the_form_was_opened_is_told_at_once(
    topic: Group, ana: Client, bo: Client
) -> None:
    mark = opened(open_form(ana, topic))
    assert save(bo, topic, "Release notes 2").status_code == 302
    answer = ping(ana, topic, opened=mark)
    assert answer["saved"] is True
    assert "bo saved this group after you opened it." in answer["text"]


def test_saving_over_someone_elses_save_is_refused_with_a_warning(
    topic: Group, ana: Client, bo: Client
) -> None:
    mark = opened(open_form(ana, topic))
    save(bo, topic, "Bo's title")
    response = save(ana, topic, "Ana's title", whos_online_opened=mark)
    assert response.status_code == 200
    page = response.content.decode()
    refusal = re.search(r'<ul class="errorlist nonfield">(.*?)</ul>', page, re.S)
    assert refusal is not None
    # The reason, then the box to tick: never the box before the why.
    assert text(refusal.group(1)).startswith("bo saved this group after you opened")
    assert refusal.group(1).index("saved this group") < refusal.group(1).index(
        'name="whos_online_overwrite"'
    )
    topic.refresh_from_db()
    assert topic.name == "Bo's title"


def test_a_refusal_is_told_once_and_a_later_save_again(
    topic: Group, ana: Client, bo: Client
) -> None:
    mark = opened(open_form(ana, topic))
    save(bo, topic, "Bo's title")
    refused = save(ana, topic, "Ana's title", whos_online_opened=mark).content
    after = str(script_config(refused.decode())["mark"])
    assert ping(ana, topic, opened=after)["saved"] is False  # the page says it
    save(bo, topic, "Bo's second title")
    assert ping(ana, topic, opened=after)["saved"] is True


def test_saving_over_it_on_purpose_is_kept(
    topic: Group, ana: Client, bo: Client
) -> None:
    mark = opened(open_form(ana, topic))
    save(bo, topic, "Bo's title")
    response = save(
        ana, topic, "Ana's title", whos_online_opened=mark, whos_online_overwrite="1"
    )
    assert response.status_code == 302
    topic.refresh_from_db()
    assert topic.name == "Ana's title"


def test_a_save_from_ones_own_other_tab_is_refused_and_told(
    topic: Group, ana: Client
) -> None:
    first, second = opened(open_form(ana, topic)), opened(open_form(ana, topic))
    assert save(ana, topic, "First", whos_online_opened=first).status_code == 302
    response = save(ana, topic, "Second", whos_online_opened=second)
    assert response.status_code == 200
    assert "You saved this group in another tab." in text(response.content.decode())
    topic.refresh_from_db()
    assert topic.name == "First"


def test_a_save_from_ones_own_other_tab_is_told_by_the_asks(
    topic: Group, ana: Client
) -> None:
    mark = opened(open_form(ana, topic))
    save(
        ana,
        topic,
        "Saved in the other tab",
        whos_online_opened=opened(open_form(ana, topic)),
    )
    assert (
        "You saved this group in another tab." in ping(ana, topic, opened=mark)["text"]
    )


def test_a_save_that_changes_nothing_stored_is_no_conflict(
    topic: Group, ana: Client, bo: Client
) -> None:
    mark = opened(open_form(ana, topic))
    save(bo, topic, topic.name)  # the same values: nothing of bo's is lost
    assert save(ana, topic, "Ana's title", whos_online_opened=mark).status_code == 302


def test_a_change_made_outside_the_admin_is_found(topic: Group, ana: Client) -> None:
    mark = opened(open_form(ana, topic))
    Group.objects.filter(pk=topic.pk).update(name="Renamed by a script")
    response = save(ana, topic, "Ana's title", whos_online_opened=mark)
    page = text(response.content.decode())
    assert "Someone else saved this group after you opened it." in page


def test_a_save_between_the_objects_load_and_its_lock_is_found(
    topic: Group, ana: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark = opened(open_form(ana, topic))
    locked = editing.stored_fingerprint

    def saved_just_before(model: Any, pk: Any, *, lock: bool = False) -> Any:
        Group.objects.filter(pk=pk).update(name="Saved in between")
        return locked(model, pk, lock=lock)

    monkeypatch.setattr(editing, "stored_fingerprint", saved_just_before)
    response = save(ana, topic, "Ana's title", whos_online_opened=mark)
    assert response.status_code == 200
    topic.refresh_from_db()
    assert topic.name == "Saved in between"


def test_a_form_sent_without_the_mark_saves_as_django_would(
    topic: Group, ana: Client, bo: Client
) -> None:
    open_form(ana, topic)
    save(bo, topic, "Bo's title")
    assert save(ana, topic, "Ana's title").status_code == 302


def test_a_form_sent_back_without_the_mark_then_carries_what_is_stored(
    topic: Group, ana: Client, bo: Client
) -> None:
    invalid = save(ana, topic, "")  # a name is required: the form comes back
    mark = opened(invalid.content.decode())
    save(bo, topic, "Bo's title")
    refused = save(ana, topic, "Ana's title", whos_online_opened=mark)
    assert "bo saved this group after you opened it." in text(refused.content.decode())


def test_a_form_sent_back_for_another_error_keeps_the_mark_it_was_opened_with(
    topic: Group, ana: Client
) -> None:
    mark = opened(open_form(ana, topic))
    invalid = save(ana, topic, "", whos_online_opened=mark)  # a name is required
    assert opened(invalid.content.decode()) == mark


def test_a_deletion_since_the_form_was_opened_is_told(
    topic: Group, ana: Client, bo: Client
) -> None:
    mark = opened(open_form(ana, topic))
    bo.post(f"{ADMIN}/{topic.pk}/delete/", {"post": "yes"})
    response = ana.post(f"{ADMIN}/{topic.pk}/presence/", {"opened": mark})
    assert response.status_code == 404
    assert text(response.json()["html"]) == "bo deleted this group after you opened it."


def test_a_user_who_appears_offline_is_shown_to_staff_as_hidden(
    topic: Group, ana: Client, bo: Client
) -> None:
    Visibility.objects.create(user=User.objects.get(username="ana"), invisible=True)
    ping(ana, topic)
    assert ping(bo, topic)["text"] == "ana (appears offline) is viewing this group."


def test_the_sites_rule_keeps_people_out_of_the_notice(
    topic: Group, ana: Client, bo: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.friends_only"
    ping(ana, topic, editing="1")
    assert ping(bo, topic)["text"] == ""


def test_below_the_names_minimum_the_notice_counts_without_names(
    topic: Group, ana: Client, bo: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_MIN_NAMES_LISTED = 5
    ping(ana, topic, editing="1")
    assert ping(bo, topic)["text"] == "1 other person has this group open."


def test_a_saver_the_sites_rule_hides_is_someone(
    topic: Group, ana: Client, bo: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.friends_only"
    mark = opened(open_form(ana, topic))
    save(bo, topic, "Bo's title")
    answer = ping(ana, topic, opened=mark)
    assert "Someone else saved this group after you opened it." in answer["text"]
    assert "bo" not in answer["html"]


def test_names_are_escaped_and_isolated(topic: Group, bo: Client) -> None:
    mallory = staff("<b>mallory</b>")
    ping(mallory, topic)
    html = ping(bo, topic)["html"]
    assert "<bdi>&lt;b&gt;mallory&lt;/b&gt;</bdi>" in html


def test_the_presence_url_is_for_staff_who_may_see_the_object(
    topic: Group, alice: User
) -> None:
    client = Client()
    client.force_login(alice)
    response = client.post(f"{ADMIN}/{topic.pk}/presence/")
    assert response.status_code == 302  # to the admin's login
    User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer = Client()
    viewer.login(username="viewer", password="pw")
    assert viewer.post(f"{ADMIN}/{topic.pk}/presence/").status_code == 403


def test_what_became_of_an_object_is_told_only_to_who_may_see_its_kind(
    topic: Group,
) -> None:
    User.objects.create_user("outsider", password="pw", is_staff=True)
    outsider = Client()
    outsider.login(username="outsider", password="pw")
    assert outsider.post(f"{ADMIN}/999/presence/").status_code == 403


def test_the_add_form_is_djangos_own(ana: Client) -> None:
    page = ana.get(f"{ADMIN}/add/").content.decode()
    assert "whos-online-editing" not in page


def test_an_object_whose_key_makes_no_room_name_has_no_presence(
    ana: Client,
) -> None:
    viewer = User.objects.get(username="ana")
    odd = Group(pk="a key with spaces", name="odd")
    request = RequestFactory().post("/")
    request.user = viewer
    editing.enter(request, odd)
    editing.stay(request, odd, editing.new_tab(), editing=True)
    editing.leave(request, odd, editing.new_tab())
    assert editing.others_here(viewer, odd) == editing.Others()


def test_the_presence_url_answers_posts_only(topic: Group, ana: Client) -> None:
    assert ana.get(f"{ADMIN}/{topic.pk}/presence/").status_code == 405


def test_the_presence_url_needs_the_csrf_token(topic: Group) -> None:
    User.objects.create_superuser("csrf", "c@example.com", "pw")
    client = Client(enforce_csrf_checks=True)
    client.login(username="csrf", password="pw")
    assert client.post(f"{ADMIN}/{topic.pk}/presence/").status_code == 403


def test_the_presence_answer_is_never_cached(topic: Group, ana: Client) -> None:
    response = ana.post(f"{ADMIN}/{topic.pk}/presence/")
    assert "no-store" in response["Cache-Control"]


def test_an_outage_shows_no_notice_and_saves_as_ever(
    topic: Group, ana: Client, unreachable_redis: None
) -> None:
    page = open_form(ana, topic)
    assert notice(page) == ""
    assert ping(ana, topic)["available"] is False
    assert save(ana, topic, "Saved in an outage").status_code == 302


EDITING_IN = {
    "de": "ana bearbeitet diesen Eintrag (Gruppe).",
    "es": "ana está editando este elemento (grupo).",
    "fr": "ana modifie cet élément (groupe).",
    "pt_BR": "ana está editando este item (grupo).",
    "ru": "ana редактирует этот объект (группа).",
}


@pytest.mark.parametrize("language", sorted(EDITING_IN))
def test_the_notice_speaks_the_staff_members_language(
    topic: Group, ana: Client, bo: Client, language: str
) -> None:
    ping(ana, topic, editing="1")
    with translation.override(language):
        assert ping(bo, topic)["text"] == EDITING_IN[language]


@pytest.mark.usefixtures("warm_scripts")
def test_a_ping_costs_three_round_trips_and_five_queries(
    topic: Group, ana: Client, bo: Client, redis_commands: CommandCounter
) -> None:
    ping(bo, topic)  # bo's guard is issued: the site need not record bo again
    ping(ana, topic, editing="1")
    redis_commands.reset()
    with CaptureQueriesContext(connection) as captured:
        ping(bo, topic)
    # Recorded in the object's room; who is there; which of them edit.
    assert redis_commands.round_trips == 3
    made = [q["sql"] for q in captured if "SAVEPOINT" not in q["sql"]]
    # The session, the user, the object, the others' choices and the others;
    # a save since is told by the object itself, with no query of its own.
    assert len(made) == 5, made


@pytest.mark.usefixtures("warm_scripts")
def test_opening_a_change_form_costs_two_round_trips(
    topic: Group, ana: Client, bo: Client, redis_commands: CommandCounter
) -> None:
    ping(ana, topic)
    open_form(bo, topic)  # bo's guard is issued
    redis_commands.reset()
    open_form(bo, topic)
    # Who is there and which of them edit; bo is recorded by the form's
    # pings, and was in the room already.
    assert redis_commands.round_trips == 2


def test_without_the_mixin_a_change_form_is_djangos_own(
    topic: Group, ana: Client
) -> None:
    page = ana.get(f"/admin/auth/group/{topic.pk}/change/").content.decode()
    assert "whos-online-editing" not in page
    response = ana.post(f"/admin/auth/group/{topic.pk}/presence/")
    assert response.status_code != 200


EVERY = "/every-admin/auth/group"


def test_a_site_with_the_site_mixin_gives_every_change_form_the_notice(
    topic: Group, ana: Client, bo: Client
) -> None:
    ana.get(f"{EVERY}/{topic.pk}/change/")
    page = bo.get(f"{EVERY}/{topic.pk}/change/").content.decode()
    assert notice(page) == "ana is viewing this group."


def test_the_site_mixin_subclasses_the_class_registered_changing_no_instance() -> None:
    site = EditingAdminSite(name="every_model")
    site.register(Group, GroupAdmin, list_per_page=5)
    site.register(User)
    group_admin = site.get_model_admin(Group)
    assert isinstance(group_admin, ConcurrentEditingMixin)
    assert isinstance(group_admin, GroupAdmin)
    assert group_admin.list_per_page == 5
    assert isinstance(site.get_model_admin(User), ConcurrentEditingMixin)


def test_a_model_admin_registered_after_the_urls_were_read_gets_it_too() -> None:
    site = EditingAdminSite(name="later")
    assert site.urls  # the site's URLs are read before anything is registered
    site.register(Group, GroupAdmin)
    assert isinstance(site.get_model_admin(Group), ConcurrentEditingMixin)


def test_a_model_admin_that_opted_in_is_left_as_it_is() -> None:
    site = EditingAdminSite(name="opted_in")

    class Chosen(ConcurrentEditingMixin, GroupAdmin):
        pass

    site.register(Group, Chosen)
    assert type(site.get_model_admin(Group)) is Chosen


def test_a_model_admin_that_opts_out_is_left_as_it_is() -> None:
    site = EditingAdminSite(name="opted_out")

    class Plain(GroupAdmin):
        whos_online_editing = False

    site.register(Group, Plain)
    assert type(site.get_model_admin(Group)) is Plain


def test_the_app_runs_no_admin_discovery_when_ready(
    settings: SettingsWrapper, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.WHOS_ONLINE_ADMIN_EDITING = True  # deprecated: changes nothing

    def discovered() -> None:
        raise AssertionError("ready() ran admin.autodiscover()")

    monkeypatch.setattr(django_admin, "autodiscover", discovered)
    apps.get_app_config("whos_online").ready()
    assert not isinstance(
        django_admin.site.get_model_admin(Group), ConcurrentEditingMixin
    )


HOSTILE_MARKS = ["²", "9" * 5000, "", "\x00", "a:b:c", "é" * 300]


@pytest.mark.parametrize("sent", HOSTILE_MARKS)
def test_no_mark_sent_to_the_ask_makes_an_error_of_it(
    topic: Group, ana: Client, sent: str
) -> None:
    response = ana.post(f"{ADMIN}/{topic.pk}/presence/", {"opened": sent})
    assert response.status_code == 400


@pytest.mark.parametrize("sent", HOSTILE_MARKS)
def test_no_mark_sent_with_a_save_makes_an_error_of_it(
    topic: Group, ana: Client, sent: str
) -> None:
    response = save(ana, topic, "Ana's title", whos_online_opened=sent)
    assert response.status_code == 200
    assert "This form cannot tell whether this group was saved" in text(
        response.content.decode()
    )
    topic.refresh_from_db()
    assert topic.name == "Release notes"


def test_an_ask_for_an_object_key_of_5000_digits_is_not_found(ana: Client) -> None:
    response = ana.post(f"{ADMIN}/{'9' * 5000}/presence/", {"opened": "²"})
    assert response.status_code == 404


def test_a_mark_made_for_someone_else_is_refused(
    topic: Group, ana: Client, bo: Client
) -> None:
    bos = opened(open_form(bo, topic))
    response = save(ana, topic, "Ana's title", whos_online_opened=bos)
    assert "This form cannot tell" in text(response.content.decode())


def test_a_mark_made_for_another_object_is_refused(topic: Group, ana: Client) -> None:
    other = opened(open_form(ana, Group.objects.create(name="Other")))
    response = save(ana, topic, "Ana's title", whos_online_opened=other)
    assert "This form cannot tell" in text(response.content.decode())


def test_a_refused_form_sent_again_unticked_is_refused_again(
    topic: Group, ana: Client, bo: Client
) -> None:
    mark = opened(open_form(ana, topic))
    save(bo, topic, "Bo's title")
    refused = save(ana, topic, "Ana's title", whos_online_opened=mark)
    again = save(
        ana, topic, "Ana's title", whos_online_opened=opened(refused.content.decode())
    )
    assert "bo saved this group after you opened it." in text(again.content.decode())


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    not connection.features.has_select_for_update,
    reason="no row locks on this database (SQLite): docs/admin-editing.md",
)
def test_of_two_saves_at_once_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    topic = Group.objects.create(name="Release notes")
    clients = {"Ana's title": staff("ana"), "Bo's title": staff("bo")}
    marks = {name: opened(open_form(client, topic)) for name, client in clients.items()}
    # Both saves have loaded the object, and neither has checked it yet.
    both_loaded = threading.Barrier(len(clients), timeout=10)
    read = editing.stored_fingerprint

    def when_both_loaded(model: Any, pk: Any, *, lock: bool = False) -> Any:
        both_loaded.wait()
        return read(model, pk, lock=lock)

    monkeypatch.setattr(editing, "stored_fingerprint", when_both_loaded)
    answers: dict[str, int] = {}

    def saving(name: str) -> None:
        try:
            response = save(clients[name], topic, name, whos_online_opened=marks[name])
            answers[name] = response.status_code
        finally:
            connections.close_all()  # each thread's own connection

    threads = [threading.Thread(target=saving, args=(name,)) for name in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(answers.values()) == [200, 302]  # one saved, one refused
    saved = next(name for name, status in answers.items() if status == 302)
    topic.refresh_from_db()
    assert topic.name == saved
