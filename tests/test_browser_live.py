"""Live presence in a real browser: the example project under a real server.

Under uvicorn (ASGI) the widgets, the room boxes and the admin's notice of
who else is editing are pushed each change by their streams, within a
second, their refreshes every minute so that only a stream could be that
quick; under gunicorn (WSGI) the same pages poll exactly as before, and no
stream is opened. A page whose stream fails polls as before too.

The servers, the browser, logging in and the admin's helpers are
tests/test_browser.py's (its fixtures are imported here), and so is what
makes a missing Chromium a skip, or an error under ``REQUIRE_BROWSER``.
How long each push took is printed (``pytest -s``) for the changelog.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.test_browser import (
    EXAMPLE_PROJECT,
    HAS_PLAYWRIGHT,
    NOTICE,
    REFRESH_SECONDS,
    REFRESH_WAIT_MS,
    ROOT,
    SHARED_SNAPSHOT_MS,
    SITE_NAMES,
    THREAD_NAMES,
    browser,
    browser_available,
    close_admin,
    demo_set_up,
    free_port,
    logging_in,
    names,
    open_change_form,
    screenshot,
    serving,
)

if HAS_PLAYWRIGHT:
    from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.browser
__all__ = ["browser", "browser_available"]  # fixtures of tests/test_browser.py

# Under an ASGI server the widgets are pushed each change by the live stream
# (whos-online/stream/), the change form's notice by its own
# (<pk>/presence/stream/); they refresh and ask every minute here, so only a
# stream can show a change within a second.
LIVE_SECONDS = 60
STREAM = "**/whos-online/stream/*"
NOTICE_STREAM = "**/presence/stream/*"
FRAGMENT = "/whos-online/widget/"
ASK = "/presence/"
PUSHED_MS = 1000
CLOSED_MS = 2000


@contextmanager
def uvicorn(workdir: Path, refresh: int, editing: int) -> Iterator[str]:
    """The example project served by one uvicorn worker (its asgi.py), with
    a fresh database and the embedded fakeredis, in the worker's process as
    every request is: its URL, while it serves."""
    env = demo_set_up(workdir, refresh, editing)
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "example_project.asgi:application"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    log = workdir / "uvicorn.log"
    with serving(command, port, EXAMPLE_PROJECT, env, log) as url:
        yield url


@contextmanager
def gunicorn(workdir: Path, refresh: int) -> Iterator[str]:
    """The example project served by one gunicorn worker (WSGI; threads, so
    the embedded fakeredis is one for every request), its static files
    served as the other servers serve them (tests/served_wsgi.py)."""
    env = demo_set_up(workdir, refresh)
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "tests.served_wsgi:application"]
    command += ["--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "8"]
    command += ["--pythonpath", str(ROOT)]
    log = workdir / "gunicorn.log"
    with serving(command, port, EXAMPLE_PROJECT, env, log) as url:
        yield url


@pytest.fixture(scope="module")
def live_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workdir = tmp_path_factory.mktemp("live")
    with uvicorn(workdir, LIVE_SECONDS, LIVE_SECONDS) as url:
        yield url


@pytest.fixture(scope="module")
def asgi_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Under uvicorn too, refreshing and asking every 2 s as the demo's."""
    workdir = tmp_path_factory.mktemp("asgi")
    with uvicorn(workdir, REFRESH_SECONDS, REFRESH_SECONDS) as url:
        yield url


@pytest.fixture(scope="module")
def wsgi_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Under gunicorn, refreshing and asking every 2 s as the demo's."""
    with gunicorn(tmp_path_factory.mktemp("wsgi"), REFRESH_SECONDS) as url:
        yield url


def asked(page: Page, part: str) -> list[str]:
    """The URLs with ``part`` in them that ``page`` asks for from now on."""
    urls: list[str] = []
    page.on(
        "request",
        lambda request: urls.append(request.url) if part in request.url else None,
    )
    return urls


@contextmanager
def timed(what: str) -> Iterator[None]:
    """Print how long the block took (``pytest -s``), in ms."""
    started = time.monotonic()
    yield
    print(f"\n{what}: {(time.monotonic() - started) * 1000:.0f} ms")


def test_under_asgi_an_arrival_is_pushed_to_the_widget_within_a_second(
    browser: Browser, live_demo: str
) -> None:
    with logging_in(browser, live_demo) as log_in:
        alice = log_in("alice")
        with alice.expect_response(STREAM) as opened:
            alice.goto("/")
        assert opened.value.status == 200
        assert opened.value.headers["content-type"] == "text/event-stream"
        breakdown = alice.locator("#online-now .whos-online-breakdown")
        expect(breakdown).to_contain_text("1 user")
        alice.evaluate("window.notReloaded = true")
        polls = asked(alice, FRAGMENT)

        with timed("bob's login, in alice's widget"):
            log_in("bob")  # his login records him: the stream's event
            expect(breakdown).to_contain_text("2 users", timeout=PUSHED_MS)
        assert "bob" in names(alice)
        assert alice.evaluate("window.notReloaded") is True
        assert polls == []  # the stream brought it, not a refresh


def test_under_asgi_an_arrival_is_pushed_to_the_room_box_within_a_second(
    browser: Browser, live_demo: str
) -> None:
    with logging_in(browser, live_demo) as log_in:
        alice, bob = log_in("alice"), log_in("bob")
        alice.goto("/forum/3/")
        expect(alice.locator(THREAD_NAMES)).to_have_text(["alice"])
        polls = asked(alice, FRAGMENT)

        with timed("bob opening the thread, in alice's room box"):
            bob.goto("/forum/3/")
            expect(alice.locator(THREAD_NAMES)).to_have_count(2, timeout=PUSHED_MS)
        assert sorted(names(alice, THREAD_NAMES)) == ["alice", "bob"]
        assert polls == []
        screenshot(alice, "live-room-box", alice.locator("#thread-viewers"))


@pytest.mark.parametrize(
    "tabs", ["the page his device opened last", "a page before his latest"]
)
def test_under_asgi_a_closed_tab_leaves_the_room_box_within_two_seconds(
    browser: Browser, live_demo: str, tabs: str
) -> None:
    with logging_in(browser, live_demo) as log_in:
        alice, bob = log_in("alice"), log_in("bob")
        reading = bob.context.new_page()
        reading.goto("/forum/3/")  # a tab of its own, its script keeping it there
        if tabs == "a page before his latest":
            bob.goto("/forum/5/")  # the device's latest page: another thread
        alice.goto("/forum/3/")
        expect(alice.locator(THREAD_NAMES)).to_have_count(2)
        polls = asked(alice, FRAGMENT)

        with timed(f"bob closing {tabs}, out of alice's room box"):
            reading.close(run_before_unload=True)  # its pagehide says it closed
            expect(alice.locator(THREAD_NAMES)).to_have_count(1, timeout=CLOSED_MS)
        assert names(alice, THREAD_NAMES) == ["alice"]
        assert polls == []


def test_under_asgi_appearing_offline_is_pushed_to_the_others_at_once(
    browser: Browser, live_demo: str
) -> None:
    with logging_in(browser, live_demo) as log_in:
        alice, bob = log_in("alice"), log_in("bob")
        alice.reload()
        expect(alice.locator(SITE_NAMES, has_text="bob")).to_have_count(1)
        polls = asked(alice, FRAGMENT)

        with timed("bob appearing offline, out of alice's widget"):
            bob.get_by_role("button", name="Appear offline").click()
            expect(alice.locator(SITE_NAMES, has_text="bob")).to_have_count(
                0, timeout=PUSHED_MS
            )
        expect(bob.get_by_role("button", name="Appear online")).to_be_visible()
        assert polls == []
        bob.get_by_role("button", name="Appear online").click()


def notice_followed(
    admin: Page, act: Callable[[], object], text: str, what: str
) -> None:
    """After ``act``, the admin's notice says ``text`` within a second."""
    with timed(what):
        act()
        expect(admin.locator(NOTICE)).to_have_text(text, timeout=PUSHED_MS)


def test_under_asgi_the_change_form_notice_follows_the_others_within_a_second(
    browser: Browser, live_demo: str
) -> None:
    with logging_in(browser, live_demo) as log_in:
        admin, editor = log_in("admin"), log_in("editor")
        with admin.expect_response(NOTICE_STREAM) as opened:
            open_change_form(admin, "alice")
        assert opened.value.status == 200
        assert opened.value.headers["content-type"] == "text/event-stream"
        expect(admin.locator(NOTICE)).to_have_text("")
        admin.evaluate("window.notReloaded = true")

        opening = "editor opening the form, in admin's notice"
        notice_followed(
            admin,
            lambda: open_change_form(editor, "alice"),
            "editor is viewing this user.",
            opening,
        )
        notice_followed(
            admin,
            lambda: editor.fill("#id_first_name", "Alice"),
            "editor is editing this user.",
            "editor changing a field, in admin's notice",
        )
        screenshot(admin, "admin-editing-live", admin.locator(NOTICE))
        notice_followed(
            admin,
            lambda: editor.goto("/admin/"),  # the form closes, and says so
            "",
            "editor closing the form, out of admin's notice",
        )
        assert admin.evaluate("window.notReloaded") is True
        close_admin(admin, editor)


@pytest.mark.parametrize("why", ["its stream fails", "no EventSource"])
def test_under_asgi_a_change_form_that_cannot_stream_asks_as_before(
    browser: Browser, asgi_demo: str, why: str
) -> None:
    with logging_in(browser, asgi_demo) as log_in:
        admin, editor = log_in("admin"), log_in("editor")
        if why == "no EventSource":
            admin.add_init_script("delete window.EventSource")
        # As a proxy that cannot hold it open, or a process that cannot
        # listen to Redis: the stream's connection fails.
        admin.route(NOTICE_STREAM, lambda route: route.abort("connectionrefused"))
        streams = asked(admin, "/presence/stream/")
        open_change_form(admin, "alice")
        asks = asked(admin, ASK)

        open_change_form(editor, "alice")
        expect(admin.locator(NOTICE)).to_have_text(
            "editor is viewing this user.", timeout=REFRESH_WAIT_MS
        )
        assert asks
        assert len(streams) == (0 if why == "no EventSource" else 1)
        close_admin(admin, editor)


def test_under_asgi_a_page_whose_stream_fails_polls_as_before(
    browser: Browser, asgi_demo: str
) -> None:
    with logging_in(browser, asgi_demo) as log_in:
        alice = log_in("alice")
        # As a proxy that cannot hold it open, or a process that cannot
        # listen to Redis: the stream's connection fails.
        alice.route(STREAM, lambda route: route.abort("connectionrefused"))
        alice.goto("/")
        breakdown = alice.locator("#online-now .whos-online-breakdown")
        expect(breakdown).to_contain_text("1 user")
        polls = asked(alice, FRAGMENT)

        log_in("bob")
        expect(breakdown).to_contain_text(
            "2 users", timeout=REFRESH_WAIT_MS + SHARED_SNAPSHOT_MS
        )
        assert "bob" in names(alice)
        assert polls  # by the widget's refresh


def test_under_gunicorn_the_pages_poll_as_before_and_open_no_stream(
    browser: Browser, wsgi_demo: str
) -> None:
    with logging_in(browser, wsgi_demo) as log_in:
        alice = log_in("alice")
        streams = asked(alice, "/stream/")
        alice.goto("/forum/3/")
        assert alice.locator("[data-whos-online-stream]").count() == 0
        polls = asked(alice, FRAGMENT)

        bob = log_in("bob")
        bob.goto("/forum/3/")
        expect(alice.locator(THREAD_NAMES)).to_have_count(
            2, timeout=REFRESH_WAIT_MS + SHARED_SNAPSHOT_MS
        )
        assert polls  # by the widgets' refresh
        assert streams == []


def test_under_gunicorn_the_change_form_asks_as_before_and_opens_no_stream(
    browser: Browser, wsgi_demo: str
) -> None:
    with logging_in(browser, wsgi_demo) as log_in:
        admin, editor = log_in("admin"), log_in("editor")
        streams = asked(admin, "/stream/")
        open_change_form(admin, "alice")
        config = admin.locator("#whos-online-editing-script").text_content() or ""
        assert '"stream"' not in config
        asks = asked(admin, ASK)

        open_change_form(editor, "alice")
        expect(admin.locator(NOTICE)).to_have_text(
            "editor is viewing this user.", timeout=REFRESH_WAIT_MS
        )
        assert asks
        assert streams == []
        close_admin(admin, editor)
