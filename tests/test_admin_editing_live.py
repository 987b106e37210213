"""Who else is editing, live: under ASGI a change form's notice follows a
stream of its object's two rooms (``<pk>/presence/stream/``) and asks at
once when what its staff member may learn of the others changed; under
WSGI, or when the stream cannot open, it asks every few seconds as before.

The stream says only that something changed: the notice's words always come
from the form's ask, through the gate. Streams are read with Django's
AsyncClient, as tests/test_live.py reads the widget's.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group, User
from django.test import AsyncClient, Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests.test_admin_editing import ADMIN, close_form, open_form, ping, staff
from tests.test_live import first, run
from whos_online import editing, live, streams

# The streams ask in threads of their own (``live.READING_THREADS``):
# what the test writes to the database must be committed for them to see.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("retired_hubs"),
]


@pytest.fixture
def topic() -> Group:
    return Group.objects.create(name="Release notes")


@pytest.fixture
def ana() -> Client:
    return staff("ana")


@pytest.fixture
def bo() -> Client:
    return staff("bo")


def stream_url(topic: Group) -> str:
    return f"{ADMIN}/{topic.pk}/presence/stream/"


class Stream:
    """An open stream, read as it comes: a wait for its next event that
    times out leaves the stream open (cancelling a read would end it)."""

    def __init__(self, response: Any) -> None:
        self.response = response
        self.events: asyncio.Queue[str | None] = asyncio.Queue()
        self.reader = asyncio.ensure_future(self.read())

    async def read(self) -> None:
        async for event in self.response.streaming_content:
            await self.events.put(bytes(event).decode())
        await self.events.put(None)

    async def close(self) -> None:
        self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.reader

    async def all(self) -> list[str]:
        """Every event until the stream ends."""
        told = []
        with contextlib.suppress(StopAsyncIteration):
            while True:
                told.append(await said(self, 3.0))
        return told


async def opened(
    name: str, topic: Group, url: str | None = None, **headers: str
) -> Stream:
    """The notice's stream of ``topic`` for the staff member ``name``."""
    client = AsyncClient()
    await client.aforce_login(await User.objects.aget(username=name))
    response: Any = await client.get(url or stream_url(topic), headers=headers)
    return Stream(response)


async def said(stream: Stream, seconds: float = 2.0) -> str:
    event = await asyncio.wait_for(stream.events.get(), seconds)
    if event is None:
        raise StopAsyncIteration
    return event


async def quiet(stream: Stream, seconds: float = 0.6) -> bool:
    """Whether the stream says nothing for ``seconds``."""
    try:
        await said(stream, seconds)
    except asyncio.TimeoutError:
        return True
    return False


def soon(act: Callable[[], object]) -> asyncio.Task[None]:
    """``act`` a moment after, in the test's thread (its database), as the
    other staff member's browser would."""

    async def later() -> None:
        await asyncio.sleep(0.1)
        await sync_to_async(act)()

    return asyncio.ensure_future(later())


def status_of(name: str, url: str) -> int:
    """What the stream at ``url`` answers the staff member ``name``."""

    async def scenario() -> int:
        client = AsyncClient()
        await client.aforce_login(await User.objects.aget(username=name))
        return int((await client.get(url)).status_code)

    return run(scenario)


def event_id(event: str) -> str:
    found = re.match(r"id: (\S+)\n", event)
    assert found is not None, event
    return found.group(1)


def script_config(page: str) -> dict[str, Any]:
    found = re.search(r'id="whos-online-editing-script"[^>]*>(.*?)</script>', page)
    assert found is not None
    config: dict[str, Any] = json.loads(found.group(1))
    return config


def followed(
    topic: Group, act: Callable[[], object], *, viewer: str = "ana"
) -> tuple[str, bool]:
    """What ``viewer``'s stream of ``topic`` says first, then whether it
    says anything at ``act``."""

    async def scenario() -> tuple[str, bool]:
        response = await opened(viewer, topic)
        try:
            opening = await said(response)
            soon(act)
            return opening, not await quiet(response)
        finally:
            await response.close()

    return run(scenario)


def pushed_within(topic: Group, act: Callable[[], object], seconds: float) -> str:
    """What ana's stream of ``topic`` says after ``act``, within ``seconds``."""

    async def scenario() -> str:
        response = await opened("ana", topic)
        try:
            await said(response)
            soon(act)
            return await said(response, seconds)
        finally:
            await response.close()

    return run(scenario)


def test_under_asgi_a_change_form_names_the_stream_of_its_notice(
    topic: Group, ana: Client
) -> None:
    async def page() -> str:
        client = AsyncClient()
        await client.aforce_login(await User.objects.aget(username="ana"))
        response: Any = await client.get(f"{ADMIN}/{topic.pk}/change/")
        return str(response.content.decode())

    stream = script_config(run(page))["stream"]
    assert stream.startswith(stream_url(topic) + "?shown=")
    assert "stream" not in script_config(open_form(ana, topic))  # under WSGI


def test_someone_else_opening_the_form_is_pushed_within_a_second(
    topic: Group, ana: Client, bo: Client
) -> None:
    event = pushed_within(topic, functools.partial(ping, bo, topic), 1.0)
    assert event.startswith("id: ")
    assert "data: changed\n" in event


def test_someone_starting_to_edit_is_pushed(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(bo, topic)
    act = functools.partial(ping, bo, topic, editing="1")
    assert "data: changed" in pushed_within(topic, act, 1.0)


def test_someone_closing_the_form_is_pushed(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(bo, topic)
    act = functools.partial(close_form, bo, topic)
    assert "data: changed" in pushed_within(topic, act, 1.0)


def test_a_renewal_pushes_nothing(topic: Group, ana: Client, bo: Client) -> None:
    ping(bo, topic)
    _, told = followed(topic, functools.partial(ping, bo, topic))
    assert not told


def test_the_stream_names_nobody(topic: Group, ana: Client, bo: Client) -> None:
    ping(bo, topic, editing="1")
    opening, _ = followed(topic, lambda: None)
    # Only that something changed: what changed is the ask's to say.
    assert re.fullmatch(r"id: [0-9a-f]{32}\ndata: changed\n\n", opening)


def test_a_change_the_sites_rule_hides_from_the_viewer_is_not_pushed(
    topic: Group, ana: Client, bo: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_CAN_SEE = "tests.hiding.friends_only"
    _, told = followed(topic, functools.partial(ping, bo, topic, editing="1"))
    assert not told
    assert ping(ana, topic)["text"] == ""  # and the ask shows nobody, as ever


def test_a_stream_opened_on_what_the_page_shows_says_nothing_at_first(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(bo, topic)

    async def scenario() -> tuple[bool, bool]:
        client = AsyncClient()
        await client.aforce_login(await User.objects.aget(username="ana"))
        page: Any = await client.get(f"{ADMIN}/{topic.pk}/change/")
        url = script_config(page.content.decode())["stream"]
        response = await opened("ana", topic, url)
        try:
            at_first = await quiet(response, 0.3)
            soon(functools.partial(close_form, bo, topic))
            return at_first, not await quiet(response)
        finally:
            await response.close()

    assert run(scenario) == (True, True)


def test_a_browser_resuming_with_the_last_event_id_is_not_told_again(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(bo, topic)

    async def scenario() -> bool:
        response = await opened("ana", topic)
        shown = event_id(await said(response))
        await response.close()
        again = await opened("ana", topic, **{"Last-Event-ID": shown})
        try:
            return await quiet(again, 0.4)
        finally:
            await again.close()

    assert run(scenario)


def test_a_quiet_stream_is_kept_alive_with_a_comment(
    topic: Group, ana: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "KEEP_ALIVE", 0.1)

    async def scenario() -> list[str]:
        response = await opened("ana", topic)
        try:
            return [await said(response), await said(response)]
        finally:
            await response.close()

    assert run(scenario)[1] == ": keep-alive\n\n"


def test_a_deleted_object_is_told_once_and_the_stream_ends(
    topic: Group, ana: Client, bo: Client
) -> None:
    ping(bo, topic)

    def deleted() -> None:  # bo's form closes as he goes to delete it
        close_form(bo, topic)
        Group.objects.filter(pk=topic.pk).delete()

    async def scenario() -> list[str]:
        response = await opened("ana", topic)
        await said(response)
        soon(deleted)
        return await response.all()

    told = run(scenario)
    assert len(told) == 1
    assert "data: changed" in told[0]


def test_the_stream_ends_when_the_subscription_is_lost(
    topic: Group, ana: Client
) -> None:
    async def scenario() -> list[str]:
        response = await opened("ana", topic)
        await said(response)
        live.hub().retired = True  # as when the settings change, or Redis fails
        return await response.all()

    assert run(scenario) == []


def test_under_wsgi_the_stream_answers_so_that_the_form_asks(
    topic: Group, ana: Client
) -> None:
    assert ana.get(stream_url(topic)).status_code == 204


def test_the_stream_is_never_cached_nor_buffered_by_a_proxy(
    topic: Group, ana: Client
) -> None:
    async def scenario() -> Any:
        stream = await opened("ana", topic)
        await stream.close()
        return stream.response

    response = run(scenario)
    assert response["Content-Type"] == "text/event-stream"
    assert response["X-Accel-Buffering"] == "no"
    assert "no-cache" in response["Cache-Control"]


def test_the_stream_is_for_staff_who_may_see_the_object(
    topic: Group, alice: User
) -> None:
    User.objects.create_user("viewer", password="pw", is_staff=True)
    assert status_of("alice", stream_url(topic)) == 302  # to the admin's login
    assert status_of("viewer", stream_url(topic)) == 403


def test_the_stream_of_an_object_that_is_gone_is_not_found(ana: Client) -> None:
    assert status_of("ana", f"{ADMIN}/999/presence/stream/") == 404


def test_what_became_of_an_object_is_streamed_only_to_who_may_see_its_kind(
    topic: Group,
) -> None:
    User.objects.create_user("outsider", password="pw", is_staff=True)

    assert status_of("outsider", f"{ADMIN}/999/presence/stream/") == 403


def test_an_object_whose_rooms_cannot_be_named_has_no_stream(
    topic: Group, ana: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(editing, "rooms_of", lambda obj: None)

    assert (
        status_of("ana", stream_url(topic)) == 204
    )  # nobody to follow: the form asks as before


def test_the_stream_answers_gets_only(topic: Group, ana: Client) -> None:
    assert ana.post(stream_url(topic)).status_code == 405


def test_when_redis_cannot_be_listened_to_the_stream_answers_503(
    topic: Group, ana: Client, settings: SettingsWrapper
) -> None:
    settings.WHOS_ONLINE_CONNECTION_FACTORY = "tests.test_live.unreachable"

    assert status_of("ana", stream_url(topic)) == 503


def test_streams_of_both_rooms_follow_one_subscription() -> None:
    async def scenario() -> list[Any]:
        changes: AsyncIterator[int | None] = live.follow("admin:a", "admin-editing:a")
        await first(changes)
        hub = live.hub()
        hub.announce("admin-editing:a")
        told = [await first(changes)]
        hub.announce("admin:a")
        told.append(await first(changes))
        await changes.aclose()  # type: ignore[attr-defined]
        return [bool(event) for event in told] + [hub.listeners["admin:a"] == set()]

    assert run(scenario) == [True, True, True]
