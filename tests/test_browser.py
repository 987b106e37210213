"""The example project in a real browser: users see each other come and go.

The demo is served by ``runserver`` on a free loopback port, with a fresh
SQLite database and its embedded fakeredis (the server process holds the
presence data; every request goes through it). Debian's Chromium
(``apt-get install chromium``) is driven by Playwright; Playwright's own
browser downloads are never used.

Run with ``make test-browser``. Where Chromium or Playwright is missing the
tests are skipped, unless ``REQUIRE_BROWSER`` is set (``make test-browser``
and so CI set it): then that is an error.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright  # type: ignore[import-not-found, unused-ignore]

    HAS_PLAYWRIGHT = True
except ImportError:
    HAS_PLAYWRIGHT = False

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EXAMPLE_PROJECT = Path(__file__).resolve().parent.parent / "example_project"
PASSWORD = "whos-online"
# The widgets refresh in place every 15 seconds in the demo, every 2 here.
REFRESH_SECONDS = 2
REFRESH_WAIT_MS = 5 * REFRESH_SECONDS * 1000

SITE_NAMES = "#online-now .whos-online-users > *"
THREAD_NAMES = "#thread-viewers .whos-online-users > *"

LogIn = Callable[[str], "Page"]
# Headless Chromium says "HeadlessChrome", which counts as a crawler; the
# tests browse as an ordinary desktop Chrome.
USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/156.0.0.0 Safari/537.36"
)


def missing() -> str | None:
    """Why the browser tests cannot run here, if they cannot."""
    if not HAS_PLAYWRIGHT:
        return "Playwright is not installed (pip install -r requirements/browser.txt)"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


@pytest.fixture(scope="module", autouse=True)
def browser_available() -> None:
    reason = missing()
    if reason is None:
        return
    if os.environ.get("REQUIRE_BROWSER"):
        pytest.fail(f"REQUIRE_BROWSER is set, but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example project's URL, served with a fresh database."""
    workdir = tmp_path_factory.mktemp("demo")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "example_project.settings",
        "DEMO_DB_PATH": str(workdir / "db.sqlite3"),
        "PYTHONUNBUFFERED": "1",
        "DEMO_REFRESH_SECONDS": str(REFRESH_SECONDS),
    }
    env.pop("REDIS_URL", None)  # always the embedded fakeredis: no shared keys

    def manage(*args: str) -> list[str]:
        return [sys.executable, str(EXAMPLE_PROJECT / "manage.py"), *args]

    for command in (["migrate", "--verbosity", "0"], ["create_demo_users"]):
        subprocess.run(
            manage(*command), cwd=EXAMPLE_PROJECT, env=env, check=True, timeout=60
        )
    port = free_port()
    log_path = workdir / "runserver.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            manage("runserver", f"127.0.0.1:{port}", "--noreload"),
            cwd=EXAMPLE_PROJECT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url, server, log_path)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_serving(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    # A static file: served without the middleware, so no visitor is recorded.
    probe = f"{url}/static/whos_online/refresh.js"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"runserver exited:\n{log.read_text()}", pytrace=False)
        try:
            with urllib.request.urlopen(probe, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(
        f"runserver did not answer within 30 s:\n{log.read_text()}", pytrace=False
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def log_in(browser: Browser, demo: str) -> Iterator[LogIn]:
    """Log a user in, in a browser session of their own; each is logged out
    (so off the online lists) and closed after the test."""
    pages: list[Page] = []

    def log_in(username: str) -> Page:
        page = browser.new_context(base_url=demo, user_agent=USER_AGENT).new_page()
        page.set_default_timeout(10_000)
        pages.append(page)
        page.goto("/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", PASSWORD)
        page.click("form.login button[type=submit]")
        expect(page.locator("header .account")).to_contain_text(
            f"Logged in as {username}"
        )
        return page

    yield log_in
    for page in pages:
        if page.locator(".account form button").count():
            log_out(page)
        page.context.close()


def log_out(page: Page) -> None:
    page.click(".account form button")  # a POST, as Django's LogoutView wants
    expect(page.locator("header .account")).to_contain_text("Not logged in")


def names(page: Page, where: str = SITE_NAMES) -> list[str]:
    return [
        text.removesuffix(" (hidden)") for text in page.locator(where).all_inner_texts()
    ]


def site_counts(page: Page) -> Any:
    return page.locator("#online-now .whos-online-counts")


# First in the module: nobody has visited the fresh demo yet.
def test_the_first_page_a_guest_opens_already_counts_them(
    browser: Browser, demo: str
) -> None:
    page = browser.new_context(base_url=demo, user_agent=USER_AGENT).new_page()
    page.goto("/")
    expect(site_counts(page)).to_have_text("1 visitor online")
    page.context.close()


def test_logging_in_leaves_one_visitor_not_a_user_and_a_guest(log_in: LogIn) -> None:
    alice = log_in("alice")  # she browsed the login page as a guest first
    expect(site_counts(alice)).to_have_text("1 visitor online")
    expect(alice.locator("#online-now .whos-online-breakdown")).to_contain_text(
        "0 guests"
    )


def test_logging_out_in_one_of_two_sessions_keeps_the_other_online(
    log_in: LogIn,
) -> None:
    phone = log_in("alice")
    laptop = log_in("alice")
    log_out(phone)
    laptop.reload()
    assert "alice" in names(laptop)


def test_a_cached_page_with_the_beacon_counts_its_visitor(
    browser: Browser, demo: str
) -> None:
    page = browser.new_context(base_url=demo, user_agent=USER_AGENT).new_page()
    with page.expect_response("**/whos-online/beacon/") as beacon:
        page.goto("/news/")
    assert beacon.value.status == 204
    counts = page.evaluate(
        "async () => (await (await fetch('/whos-online/online.json')).json()).counts"
    )
    assert counts["guests"] >= 1
    page.context.close()


def test_the_header_count_follows_the_refreshing_widget(log_in: LogIn) -> None:
    alice = log_in("alice")
    header = alice.locator("header .online-now [data-whos-online-count=people]")
    expect(header).to_have_text("1")
    log_in("bob")
    expect(header).to_have_text("2", timeout=REFRESH_WAIT_MS)


def test_each_user_sees_the_other_after_a_reload_until_they_log_out(
    log_in: LogIn,
) -> None:
    alice = log_in("alice")
    bob = log_in("bob")
    alice.reload()

    assert "bob" in names(alice)
    assert "alice" in names(bob)

    log_out(bob)
    alice.reload()

    assert "bob" not in names(alice)
    assert "alice" in names(alice)


def test_the_widget_refreshes_in_place_when_someone_logs_in(log_in: LogIn) -> None:
    alice = log_in("alice")
    breakdown = alice.locator("#online-now .whos-online-breakdown")
    expect(breakdown).not_to_contain_text("hidden")
    alice.evaluate("window.notReloaded = true")

    log_in("carol")  # hidden: counted for alice, not named

    expect(breakdown).to_contain_text("1 hidden user", timeout=REFRESH_WAIT_MS)
    assert alice.evaluate("window.notReloaded") is True


def test_only_staff_see_hidden_carol_listed_and_her_status(log_in: LogIn) -> None:
    log_in("carol")
    admin = log_in("admin")
    alice = log_in("alice")
    admin.reload()

    hidden = admin.locator("#online-now .whos-online-users .whos-online-hidden")
    expect(hidden).to_have_text("carol (hidden)")
    assert "carol" not in names(alice)
    for page, carol_status in ((admin, "online"), (alice, "offline")):
        page.goto("/members/")
        row = page.locator("#members tr[data-member=carol]")
        expect(row.locator(".status")).to_have_text(carol_status)
    alice_row = alice.locator("#members tr[data-member=alice]")
    expect(alice_row.locator(".status")).to_have_text("online")
    expect(alice_row).to_contain_text(re.compile(r"\d+\sminutes? ago"))


def test_a_thread_lists_who_is_viewing_it(log_in: LogIn) -> None:
    alice = log_in("alice")
    bob = log_in("bob")
    alice.goto("/forum/3/")
    bob.goto("/forum/3/")
    alice.reload()

    assert sorted(names(alice, THREAD_NAMES)) == ["alice", "bob"]
    alice.goto("/forum/4/")
    assert "bob" not in names(alice, THREAD_NAMES)


def test_the_heartbeat_is_accepted_from_the_page(log_in: LogIn) -> None:
    alice = log_in("alice")
    status = alice.evaluate(
        """async () => {
            const script = document.querySelector("script[data-whos-online-heartbeat]");
            const response = await fetch(script.dataset.whosOnlineHeartbeat, {
                method: "POST",
                headers: {"X-CSRFToken": script.dataset.whosOnlineCsrf},
            });
            return response.status;
        }"""
    )
    # 204 recorded, 429 too soon after the login recorded her; a CSRF or
    # login failure would be a 403.
    assert status in (204, 429)


def test_staff_find_online_now_through_the_admin_link(log_in: LogIn) -> None:
    alice = log_in("alice")
    admin = log_in("admin")

    expect(alice.locator("nav").get_by_role("link", name="Admin")).to_have_count(0)
    admin.locator("nav").get_by_role("link", name="Admin").click()
    admin.get_by_role("link", name="Online now").click()
    expect(admin.locator("h1")).to_contain_text("Online now")
