"""Live streams served by Django's ASGI handler, as uvicorn runs it: what
they hold of the process while they are open.

The handler gives each request a thread of its own for its sync code (the
middleware's, the view's renderings), kept until the response ends; a
stream's response ends when its tab closes. These tests call the handler
as an ASGI server would, on an event loop of their own, so that the
request's sync code runs where it would under uvicorn: not in the test's
thread, hence a database whose writes other threads see.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from asgiref.sync import ThreadSensitiveContext
from django.core.handlers.asgi import ASGIHandler

from whos_online import api

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("retired_hubs"),
]

URL = "/whos-online/stream/"


def scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 40000),
        "server": ("testserver", 80),
    }


class Tab:
    """A browser tab with a stream open, until :meth:`close`."""

    def __init__(self, app: ASGIHandler) -> None:
        self.app = app
        self.asked = False
        self.gone = asyncio.Event()
        self.sent: asyncio.Queue[Mapping[str, Any]] = asyncio.Queue()
        self.served: asyncio.Task[None] | None = None

    async def open(self) -> bytes:
        """Open the stream; its first event."""
        self.served = asyncio.ensure_future(
            self.app(scope(URL), self.receive, self.send)
        )
        while (message := await self.sent.get())["type"] != "http.response.body":
            assert message["status"] == 200
        return bytes(message["body"])

    async def receive(self) -> dict[str, Any]:
        if not self.asked:
            self.asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Mapping[str, Any]) -> None:
        await self.sent.put(message)

    async def close(self) -> None:
        self.gone.set()
        assert self.served is not None
        await self.served


async def settled_thread_count() -> int:
    """The process's threads, once those on their way out are gone."""
    counted = threading.active_count()
    for _ in range(40):
        await asyncio.sleep(0.05)
        counted, before = threading.active_count(), counted
        if counted == before:
            break
    return counted


async def threads_while_open_and_after(streams: int) -> tuple[int, int]:
    app = ASGIHandler()
    tabs = [Tab(app) for _ in range(streams)]
    for tab in tabs:
        assert (await tab.open()).startswith(b"id: ")
    while_open = await settled_thread_count()
    for tab in tabs:
        await tab.close()
    return while_open, await settled_thread_count()


#: Threads of the process's own that may come or go while a test counts
#: (a database connection's, a finished test's): one a stream would be twenty.
UNRELATED_THREADS = 2


def test_open_streams_hold_no_thread_of_their_own() -> None:
    """Closing twenty streams frees no thread: what renders them is shared,
    so a worker with thousands of tabs open does not hold thousands of
    threads."""
    while_open, after_closing = asyncio.run(threads_while_open_and_after(20))
    assert while_open - after_closing <= UNRELATED_THREADS


@pytest.mark.skipif(
    "executor" not in inspect.signature(ThreadSensitiveContext).parameters,
    reason="asgiref before 3.13 gives a ThreadSensitiveContext no thread of its own",
)
def test_a_thread_the_server_gave_its_requests_is_left_working() -> None:
    """A server may run the app in asgiref's ``ThreadSensitiveContext``
    with a thread of its own for the requests' sync code: a stream does not
    close it."""
    own = ThreadPoolExecutor(max_workers=1)

    async def scenario() -> None:
        async with ThreadSensitiveContext(executor=own):
            tab = Tab(ASGIHandler())
            await tab.open()
            await tab.close()

    asyncio.run(scenario())
    assert own.submit(str.upper, "still working").result() == "STILL WORKING"
    own.shutdown()


async def threads_while_following_changes_and_after(followers: int) -> tuple[int, int]:
    """Each follower in a context of its own, as a Channels consumer is."""
    started, done = asyncio.Semaphore(0), asyncio.Event()

    async def follower() -> None:
        async with ThreadSensitiveContext():
            changes = api.changes()
            await anext(changes)
            started.release()
            await done.wait()
            await changes.aclose()  # type: ignore[attr-defined]

    tasks = [asyncio.ensure_future(follower()) for _ in range(followers)]
    for _ in tasks:
        await started.acquire()
    while_following = await settled_thread_count()
    done.set()
    await asyncio.gather(*tasks)
    return while_following, await settled_thread_count()


def test_followers_of_changes_hold_no_thread_of_their_own() -> None:
    while_following, after = asyncio.run(threads_while_following_changes_and_after(20))
    assert while_following - after <= UNRELATED_THREADS
