"""The beacon of a page served from a cache answers with the page's widgets
as they are now, so the page brings itself up to date with no second
request."""

from __future__ import annotations

import json
from urllib.parse import unquote

import pytest
from django.contrib.auth.models import Group
from django.template import engines
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import CommandCounter
from whos_online.tokens import room_from_token, room_token

pytestmark = pytest.mark.django_db

BEACON = "/whos-online/beacon/"


def fresh_widgets(response: object) -> dict[str, str]:
    assert response.status_code == 200  # type: ignore[attr-defined]
    assert response["Content-Type"] == "application/json"  # type: ignore[index]
    widgets: dict[str, str] = json.loads(response.content)["widgets"]  # type: ignore[attr-defined]
    return widgets


def test_a_beacon_asking_for_widgets_gets_the_site_widget_as_it_is_now(
    browser: Client,
) -> None:
    for n in range(5):
        presence.record_guest(f"192.0.2.{n}")
    widgets = fresh_widgets(browser.post(BEACON, {"widgets": "1"}))
    assert list(widgets) == [""]
    assert "6 visitors online" in widgets[""]  # five guests and the caller
    assert 'class="whos-online-widget"' in widgets[""]


def test_a_beacon_naming_a_room_gets_the_rooms_widget_with_its_caller_in_it(
    browser: Client,
) -> None:
    token = room_token("thread:1", None)
    widgets = fresh_widgets(browser.post(f"{BEACON}?room={token}", {"widgets": "1"}))
    assert sorted(widgets) == ["", "thread:1"]
    assert "1 visitor online" in widgets["thread:1"]


def test_a_beacon_that_asks_for_no_widgets_answers_204(browser: Client) -> None:
    assert browser.post(BEACON).status_code == 204


def test_a_beacon_with_widgets_is_never_cached(browser: Client) -> None:
    response = browser.post(BEACON, {"widgets": "1"})
    assert "no-store" in response["Cache-Control"]


def test_no_widget_goes_to_a_visitor_who_may_not_see_it(
    browser: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_ANONYMOUS_CAN_VIEW = False
    assert fresh_widgets(browser.post(BEACON, {"widgets": "1"})) == {}


@pytest.mark.usefixtures("warm_scripts")
def test_a_guarded_beacon_with_widgets_costs_one_round_trip(
    browser: Client, redis_commands: CommandCounter
) -> None:
    browser.post(BEACON)
    redis_commands.round_trips = 0
    browser.post(BEACON, {"widgets": "1"})
    assert redis_commands.round_trips == 1


def test_each_widget_on_a_page_says_which_room_it_lists() -> None:
    html = Client().get("/thread/3/").content.decode()
    assert 'data-whos-online-room="thread:3"' in html
    assert 'data-whos-online-room=""' in Client().get("/widget/").content.decode()


def test_a_widget_of_a_refused_room_is_never_replaced_by_a_fresh_one() -> None:
    html = Client().get("/room-widget/not%20a%20room/").content.decode()
    assert "data-whos-online-room" not in html


def test_the_beacon_tag_loads_the_script_that_applies_fresh_widgets() -> None:
    html = Client().get("/cached/").content.decode()
    assert html.index("whos_online/refresh.js") < html.index("whos_online/beacon.js")


def test_the_beacon_tag_names_a_room_from_a_model_instance() -> None:
    topic = Group.objects.create(name="Rules")
    html = (
        engines["django"]
        .from_string("{% load whos_online %}{% whos_online_beacon room=topic %}")
        .render({"topic": topic})
    )
    token = unquote(html.split("?room=")[1].split('"')[0])
    assert room_from_token(token, None) == f"auth.group:{topic.pk}"
