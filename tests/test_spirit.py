"""docs/third-party.md's recipe in a real forum: django-spirit, with the
settings and the notification hook exactly as the page shows them
(tests/spirit_site/). A subscriber who left the topic is notified of a new
comment (Spirit's bell and e-mail); one reading it is not. The topic list
and a topic's authors are decorated by the endpoint, through Spirit's own
URLs.

Spirit supports Django 5.2 but not 6, so it is not in the suite's
requirements: ``make test-spirit`` installs requirements/spirit.txt and
runs this module with tests/settings_spirit.py. Elsewhere it is skipped."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.core import mail
from django.test import Client
from django.urls import reverse

from tests import presence
from tests.spirit_site import documented_settings
from whos_online import api
from whos_online.statuses import badge_html

if not apps.is_installed("spirit.topic"):
    pytest.skip(
        "django-spirit's test: make test-spirit (tests/settings_spirit.py)",
        allow_module_level=True,
    )

from spirit.comment.models import Comment  # noqa: E402
from spirit.core.tests import utils  # noqa: E402
from spirit.topic.notification.models import (  # noqa: E402
    TopicNotification,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic() -> Any:
    """A topic with its first comment."""
    started = utils.create_topic(utils.create_category(), title="Which Redis?")
    utils.create_comment(topic=started)
    return started


def subscribed(username: str, topic: Any) -> Any:
    """A user who follows ``topic`` and had read it all, and asks for an
    e-mail of each reply (Spirit's "immediately" choice)."""
    user = utils.create_user(username=username)
    user.st.notify = user.st.Notify.IMMEDIATELY | user.st.Notify.REPLY
    user.st.save()
    first = Comment.objects.filter(topic=topic).earliest("pk")
    utils.create_notification(comment=first, user=user, is_read=True)
    return user


def browsing(user: Any) -> Client:
    client = Client(REMOTE_ADDR=f"192.0.2.{user.pk}")
    client.force_login(user)
    return client


def topic_url(topic: Any) -> str:
    return reverse("spirit:topic:detail", kwargs={"pk": topic.pk, "slug": topic.slug})


def reply(user: Any, topic: Any, django_capture_on_commit_callbacks: Any) -> None:
    """``user`` comments on ``topic`` through Spirit's own form; Spirit
    e-mails once the transaction commits."""
    url = reverse("spirit:comment:publish", kwargs={"topic_id": topic.pk})
    with django_capture_on_commit_callbacks(execute=True):
        response = browsing(user).post(url, {"comment": "Redis 8, with a replica."})
    assert response.status_code == 302, response.content


def unread(user: Any) -> bool:
    return bool(
        TopicNotification.objects.filter(
            user=user, comment=Comment.objects.latest("pk"), is_read=False
        ).exists()
    )


def test_a_reader_of_the_topic_is_not_notified_and_one_who_left_is(
    topic: Any, django_capture_on_commit_callbacks: Any
) -> None:
    alice, bob = subscribed("alice", topic), subscribed("bob", topic)
    carol = utils.create_user(username="carol")
    leaving = browsing(alice)
    assert leaving.get(topic_url(topic)).status_code == 200
    assert leaving.get(reverse("spirit:index")).status_code == 200  # moved on
    assert browsing(bob).get(topic_url(topic)).status_code == 200  # still reading

    reply(carol, topic, django_capture_on_commit_callbacks)

    assert unread(alice)
    assert not unread(bob)
    assert [message.to for message in mail.outbox] == [[alice.email]]


def test_a_subscriber_who_never_came_is_notified(
    topic: Any, django_capture_on_commit_callbacks: Any
) -> None:
    dave = subscribed("dave", topic)
    reply(
        utils.create_user(username="carol"), topic, django_capture_on_commit_callbacks
    )
    assert unread(dave)


def test_the_topic_instance_names_the_room_its_page_is_in(topic: Any) -> None:
    bob = utils.create_user(username="bob")
    browsing(bob).get(topic_url(topic))
    assert api.is_viewing(bob, topic)


def test_an_authors_profile_link_gets_their_badge(topic: Any) -> None:
    alice = utils.create_user(username="alice")
    presence.record_user(alice.pk)
    path = reverse("spirit:user:detail", kwargs={"pk": alice.pk, "slug": "alice"})
    answer = Client().post("/whos-online/decorate/", {"path": path}).json()
    assert answer["badges"] == {path: badge_html("online")}


def test_a_topic_rows_link_says_how_many_are_viewing(topic: Any) -> None:
    browsing(utils.create_user(username="bob")).get(topic_url(topic))
    path = topic_url(topic)
    answer = Client().post("/whos-online/decorate/", {"path": path}).json()
    assert "1 viewing" in answer["viewing"][path]


def test_the_documented_settings_pass_the_checks() -> None:
    from django.core.management import call_command

    assert set(documented_settings()) == {
        "WHOS_ONLINE_ROOMS",
        "WHOS_ONLINE_DECORATE",
    }
    call_command("check", fail_level="WARNING")
