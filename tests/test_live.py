"""Live presence: the stream endpoint under ASGI, read with Django's
AsyncClient, its fallbacks, and ``api.changes``."""

from __future__ import annotations

import asyncio
import functools
import io
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import AnonymousUser, User
from django.core.handlers.asgi import ASGIRequest
from django.template import engines
from django.test import AsyncClient, Client, RequestFactory
from django.test.signals import template_rendered
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from whos_online import api, live, streams
from whos_online.tokens import room_token

# The streams render in threads of their own (``live.READING_THREADS``):
# what the test writes to the database must be committed for them to see.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("retired_hubs"),
]

T = TypeVar("T")
URL = "/whos-online/stream/"


def run(coroutine: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run on an event loop in the test's thread, as Django's test client
    does (the view's own sync code then runs in the test's thread)."""
    return async_to_sync(coroutine)()


async def first(events: AsyncIterator[Any], seconds: float = 2.0) -> Any:
    return await asyncio.wait_for(anext(events), seconds)


async def opened(url: str = URL, headers: dict[str, str] | None = None) -> Any:
    response: Any = await AsyncClient().get(url, headers=headers)
    response.events = aiter(response.streaming_content)
    return response


async def text(response: Any, seconds: float = 2.0) -> str:
    return bytes(await first(response.events, seconds)).decode()


async def closed(response: Any) -> None:
    await response.events.aclose()


def record_soon(record: Callable[[], object]) -> asyncio.Task[None]:
    """``record`` a moment after the stream is open, from another thread as
    a web request would."""

    async def later() -> None:
        await asyncio.sleep(0.1)
        await asyncio.to_thread(record)

    return asyncio.ensure_future(later())


def test_a_stream_opens_with_the_widget_as_the_fragment_renders_it() -> None:
    presence.record_guest("g1")
    fragment = Client().get("/whos-online/widget/").content.decode()

    async def scenario() -> str:
        response = await opened()
        try:
            return await text(response)
        finally:
            await closed(response)

    event = run(scenario)
    assert event.startswith("id: ")
    data = "\n".join(
        line.removeprefix("data: ") for line in event.splitlines()[1:] if line
    )
    assert data == fragment.rstrip("\n")


def test_a_stream_is_never_cached_nor_buffered_by_a_proxy() -> None:
    async def scenario() -> Any:
        response = await opened()
        await closed(response)
        return response

    response = run(scenario)
    assert response["Content-Type"] == "text/event-stream"
    assert response["X-Accel-Buffering"] == "no"
    assert "no-cache" in response["Cache-Control"]


def test_a_guest_arriving_is_sent_to_open_streams_within_a_second() -> None:
    async def scenario() -> str:
        response = await opened()
        await text(response)
        record_soon(lambda: presence.record_guest("g1"))
        try:
            return await text(response, 1.0)
        finally:
            await closed(response)

    assert "2 visitors online" in run(scenario)  # the viewer, and the guest


def test_a_renewal_sends_nothing() -> None:
    presence.record_guest("g1")

    async def scenario() -> None:
        response = await opened()
        await text(response)
        record_soon(lambda: presence.record_guest("g1"))
        try:
            with pytest.raises(asyncio.TimeoutError):
                await text(response, 0.6)
        finally:
            await closed(response)

    run(scenario)


def test_a_room_stream_is_sent_its_rooms_changes_only() -> None:
    token = room_token("thread:1", None)

    async def scenario() -> str:
        response = await opened(f"{URL}?room={token}")
        await text(response)
        record_soon(lambda: presence.record_in_room("thread:2", "guests", "g2"))
        await asyncio.sleep(0.5)
        record_soon(lambda: presence.record_in_room("thread:1", "guests", "g1"))
        try:
            return await text(response, 1.0)
        finally:
            await closed(response)

    assert "1 visitor" in run(scenario)


def test_a_browser_resuming_with_the_last_event_id_is_not_sent_it_again() -> None:
    async def scenario() -> None:
        response = await opened()
        shown = (await text(response)).splitlines()[0].removeprefix("id: ")
        await closed(response)
        again = await opened(headers={"Last-Event-ID": shown})
        try:
            with pytest.raises(asyncio.TimeoutError):
                await text(again, 0.4)
        finally:
            await closed(again)

    run(scenario)


def test_a_quiet_stream_is_kept_alive_with_a_comment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streams, "KEEP_ALIVE", 0.1)

    async def scenario() -> str:
        response = await opened()
        await text(response)
        try:
            return await text(response)
        finally:
            await closed(response)

    assert run(scenario) == ": keep-alive\n\n"


def test_a_stream_kept_alive_still_sends_the_next_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streams, "KEEP_ALIVE", 0.1)

    async def scenario() -> str:
        response = await opened()
        await text(response)
        assert await text(response) == ": keep-alive\n\n"
        record_soon(lambda: presence.record_guest("g1"))
        try:
            while (said := await text(response)).startswith(":"):
                pass
            return said
        finally:
            await closed(response)

    assert "2 visitors online" in run(scenario)


def test_closed_streams_leave_no_task_behind() -> None:
    """What keeps the streams alive is shared by those open on a loop, and
    goes with the last of them."""

    async def scenario() -> set[asyncio.Task[Any]]:
        before = asyncio.all_tasks()
        followed = [live.follow(None, wait=0.1) for _ in range(3)]
        for changes in followed:
            assert await first(changes) == 0
            assert await first(changes) is None  # a keep-alive
        for changes in followed:
            await changes.aclose()  # type: ignore[attr-defined]
        await asyncio.sleep(0.05)  # a cancelled task ends at its next step
        return asyncio.all_tasks() - before

    assert run(scenario) == set()


def test_changes_a_moment_apart_are_sent_one_after_the_other() -> None:
    async def scenario() -> list[str]:
        response = await opened()
        await text(response)
        said = []
        try:
            for guest in ("g1", "g2"):
                record_soon(functools.partial(presence.record_guest, guest))
                said.append(await text(response, 1.5))
        finally:
            await closed(response)
        return said

    first_change, second_change = run(scenario)
    assert "2 visitors online" in first_change
    assert "3 visitors online" in second_change


def test_a_stream_ends_when_redis_stops_answering_its_subscription(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from redis.exceptions import ConnectionError as RedisConnectionError

    from whos_online.store import Subscription

    def broken(self: Subscription, timeout: float) -> list[str] | None:
        raise RedisConnectionError("gone")

    async def scenario() -> list[bytes]:
        response = await opened()
        await text(response)
        monkeypatch.setattr(Subscription, "next", broken)
        return [event async for event in response.events]

    assert run(scenario) == []


def test_a_failed_rendering_fails_every_stream_sharing_it_and_is_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def failing(*args: object) -> str:
        raise RuntimeError("the template broke")

    async def scenario() -> None:
        streams_open = [await opened() for _ in range(2)]
        for response in streams_open:
            await text(response)
        monkeypatch.setattr(streams, "widget_html", failing)
        record_soon(lambda: presence.record_guest("g1"))
        for response in streams_open:
            with pytest.raises(RuntimeError):
                await text(response)

    run(scenario)
    kept = streams._shared.values()
    assert not any(made.done() and made.exception() for made in kept)


def test_shared_renderings_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "SHARED", 1)

    async def scenario() -> None:
        response = await opened()
        await text(response)
        try:
            for guest in ("g1", "g2"):
                record_soon(functools.partial(presence.record_guest, guest))
                await text(response, 1.5)
        finally:
            await closed(response)

    run(scenario)
    assert len(streams._shared) == 1


def test_anonymous_streams_share_one_rendering_of_each_change() -> None:
    rendered: list[str] = []

    def count(sender: object, template: Any, **kwargs: Any) -> None:
        if template.name == "whos_online/widget.html":
            rendered.append(template.name)

    async def scenario() -> None:
        streams_open = [await opened() for _ in range(3)]
        for response in streams_open:
            await text(response)
        rendered.clear()
        record_soon(lambda: presence.record_guest("g1"))
        for response in streams_open:
            await text(response)
            await closed(response)

    template_rendered.connect(count)
    try:
        run(scenario)
    finally:
        template_rendered.disconnect(count)
    assert len(rendered) == 1


def test_a_signed_in_viewer_is_sent_the_names_they_may_see(
    alice: User, bob: User
) -> None:
    async def scenario() -> str:
        client = AsyncClient()
        await client.aforce_login(alice)
        response: Any = await client.get(URL)
        events = aiter(response.streaming_content)
        await first(events)
        record_soon(lambda: presence.record_user(bob.pk))
        try:
            return bytes(await first(events)).decode()
        finally:
            await events.aclose()

    assert "bob" in run(scenario)


def test_under_wsgi_the_stream_answers_so_that_the_page_polls() -> None:
    assert Client().get(URL).status_code == 204


def test_a_bad_room_token_is_refused() -> None:
    async def scenario() -> Any:
        return await AsyncClient().get(f"{URL}?room=nonsense")

    assert run(scenario).status_code == 400


def test_a_visitor_who_may_not_see_who_is_online_is_refused(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_ANONYMOUS_CAN_VIEW = False

    async def scenario() -> Any:
        return await AsyncClient().get(URL)

    assert run(scenario).status_code == 403


def unreachable() -> Any:
    from redis import Redis

    return Redis(port=1, socket_connect_timeout=0.2)


def test_when_redis_cannot_be_listened_to_the_stream_answers_503(
    settings: SettingsWrapper,
) -> None:
    settings.WHOS_ONLINE_CONNECTION_FACTORY = "tests.test_live.unreachable"

    async def scenario() -> Any:
        return await AsyncClient().get(URL)

    assert run(scenario).status_code == 503


def test_a_burst_of_changes_is_sent_as_one_event_and_the_stream_stays() -> None:
    async def scenario() -> list[Any]:
        changes = live.follow(None)
        await first(changes)
        hub = live.hub()
        for _ in range(200):  # far more than a stream could be sent
            hub.announce("*")
        after_the_burst = await first(changes)
        hub.announce("*")
        next_change = await first(changes)
        await changes.aclose()  # type: ignore[attr-defined]
        return [after_the_burst, next_change]

    after_the_burst, next_change = run(scenario)
    assert next_change == after_the_burst + 1


def test_a_stream_whose_client_reads_nothing_while_changes_come_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live, "STALLED", 0.05)

    async def scenario() -> list[Any]:
        changes = live.follow(None)
        await first(changes)
        hub = live.hub()
        hub.announce("*")  # not taken: the client's sending waits
        await asyncio.sleep(0.1)
        hub.announce("*")
        await asyncio.sleep(0)
        return [change async for change in changes]

    assert run(scenario) == []


def test_streams_end_when_the_subscription_is_lost() -> None:
    async def scenario() -> list[Any]:
        changes = live.follow(None)
        await first(changes)
        hub = live.hub()
        assert hub.subscription is not None
        hub.retired = True  # as when the settings change, or Redis fails
        return [change async for change in changes]

    assert run(scenario) == []


def test_changes_yield_the_roster_now_then_after_each_change() -> None:
    async def scenario() -> list[int]:
        seen = []
        changes = api.changes()
        seen.append((await first(changes)).counts.people)
        record_soon(lambda: presence.record_guest("g1"))
        seen.append((await first(changes)).counts.people)
        await changes.aclose()  # type: ignore[attr-defined]
        return seen

    assert run(scenario) == [0, 1]


def test_changes_of_a_room_that_cannot_be_named_yield_nothing() -> None:
    async def scenario() -> list[Any]:
        return [roster async for roster in api.changes(room="no spaces")]

    assert run(scenario) == []


def page_with_widget(request: Any) -> str:
    source = "{% load whos_online %}{% whos_online room='thread:1' refresh=30 %}"
    return engines["django"].from_string(source).render({"request": request})


def test_a_page_served_under_asgi_names_its_widgets_stream() -> None:
    request = RequestFactory().get("/")
    asgi = ASGIRequest(
        {"type": "http", "method": "GET", "path": "/", "headers": []}, io.BytesIO()
    )
    asgi.user = request.user = AnonymousUser()
    assert "data-whos-online-stream=" in page_with_widget(asgi)
    assert "data-whos-online-stream=" not in page_with_widget(request)


def test_changes_end_when_the_subscription_is_lost() -> None:
    async def scenario() -> list[Any]:
        changes = api.changes()
        await first(changes)
        live.hub().retired = True  # as when the settings change, or Redis fails
        return [roster async for roster in changes]

    assert run(scenario) == []
