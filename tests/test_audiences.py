"""Who sees names and who sees counts only, in the widget and the endpoints."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from whos_online import checks

pytestmark = pytest.mark.django_db

VIEWERS = ("anonymous", "user", "staff")
SEES_NAMES = {
    "everyone": {"anonymous", "user", "staff"},
    "users": {"user", "staff"},
    "staff": {"staff"},
    "nobody": set(),
}


@pytest.fixture
def browsers(django_user_model: type[User], alice: User) -> dict[str, Client]:
    """A browser per audience; alice is online for them to see."""
    presence.record_user(alice.pk)
    user, staff = Client(), Client()
    user.force_login(django_user_model.objects.create_user("carol"))
    staff.force_login(django_user_model.objects.create_user("s", is_staff=True))
    return {"anonymous": Client(), "user": user, "staff": staff}


@pytest.mark.parametrize("audience", SEES_NAMES)
@pytest.mark.parametrize("viewer", VIEWERS)
def test_names_are_shown_to_the_audiences_the_setting_names(
    browsers: dict[str, Client], settings: SettingsWrapper, audience: str, viewer: str
) -> None:
    settings.WHOS_ONLINE_NAMES_VISIBLE_TO = audience
    html = browsers[viewer].get("/widget/").content.decode()
    assert ("<bdi>alice</bdi>" in html) == (viewer in SEES_NAMES[audience])
    assert "visitors online" in html  # everyone sees the counts


@pytest.mark.parametrize("viewer", VIEWERS)
def test_the_json_endpoint_follows_the_same_rule(
    browsers: dict[str, Client], settings: SettingsWrapper, viewer: str
) -> None:
    settings.WHOS_ONLINE_NAMES_VISIBLE_TO = "staff"
    data = browsers[viewer].get("/whos-online/online.json").json()
    assert data["names_shown"] == (viewer == "staff")
    assert bool(data["users"]) == (viewer == "staff")
    assert data["counts"]["users"] >= 1


def test_below_the_least_number_of_visible_users_only_counts_show(
    browsers: dict[str, Client], settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_MIN_NAMES_LISTED = 3  # alice and the reader: two
    html = browsers["user"].get("/widget/").content.decode()
    assert "<bdi>alice</bdi>" not in html
    assert "and 0 more" not in html


def test_at_the_least_number_of_visible_users_names_show(
    browsers: dict[str, Client], settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_MIN_NAMES_LISTED = 2
    assert "<bdi>alice</bdi>" in browsers["user"].get("/widget/").content.decode()


@pytest.mark.parametrize(
    ("name", "value"),
    [("NAMES_VISIBLE_TO", "friends"), ("MIN_NAMES_LISTED", -1)],
)
def test_bad_audience_settings_are_e007(
    settings: SettingsWrapper, name: str, value: object
) -> None:
    setattr(settings, f"WHOS_ONLINE_{name}", value)
    assert [m.id for m in checks.check_settings()] == ["whos_online.E007"]
