"""Settings that cannot work: `check` says so, and where it does not run
(under gunicorn), pages are served without presence."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from whos_online import checks

pytestmark = pytest.mark.django_db


# Room names of WHOS_ONLINE_ROOMS that cannot be formatted.


@pytest.mark.parametrize(
    "pattern",
    [
        "topic:{pk.title}",
        "topic:{pk[0]}",
        "topic:{0}",
        "topic:{}",
        "topic:{pk!z}",
        "topic:{pk",
        "topic:pk}",
        "topic:{pk:{width}}",
    ],
)
def test_a_room_pattern_that_cannot_format_fails_check(
    settings: SettingsWrapper, pattern: str
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": pattern}
    (message,) = checks.check_rooms()
    assert message.id == "whos_online.E011"
    assert repr(pattern) in message.msg


@pytest.mark.parametrize(
    "pattern", ["topic:{pk}", "topic:{pk!s}", "topic:{pk:>5}", "all-topics", "{{x}}"]
)
def test_a_room_pattern_that_formats_passes_check(
    settings: SettingsWrapper, pattern: str
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": pattern}
    assert checks.check_rooms() == []


@pytest.mark.parametrize("pattern", ["topic:{pk.title}", "topic:{pk[0]}"])
def test_a_page_whose_room_pattern_cannot_format_is_served_in_no_room(
    browser: Client, settings: SettingsWrapper, pattern: str
) -> None:
    settings.WHOS_ONLINE_ROOMS = {"board:topic": pattern}
    topic = Group.objects.create(name="Rules")
    assert browser.get(f"/forum/{topic.pk}/").status_code == 200
    assert presence.rooms() == []
