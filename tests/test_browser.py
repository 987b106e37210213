"""The example project in a real browser: users see each other come and go.

The demo is served by ``runserver`` on a free loopback port, with a fresh
SQLite database and its embedded fakeredis (the server process holds the
presence data; every request goes through it). Debian's Chromium
(``apt-get install chromium``) is driven by Playwright; Playwright's own
browser downloads are never used.

The pages are checked with axe-core (``npm ci`` puts the version pinned in
package-lock.json in node_modules/), and the computed styles that make them
look finished: the widget takes the page's background and colours on the
demo's light and dark themes (``?theme=dark``), the tables have padded
cells and a ruled-off header, the visibility toggle is no browser-default
button. Screenshots of the widget, a room's box, the public page (in the
demo's layout and on the app's own base), the toggle and the staff page,
light, dark, phone-sized and in German, are left in .screenshots/ for a
person to look at; docs/styling.md shows some of them.

Run with ``make test-browser``. Where Chromium, Playwright or axe-core is
missing the tests are skipped, unless ``REQUIRE_BROWSER`` is set (``make
test-browser`` and so CI set it): then that is an error.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import pytest
from django.test import Client

try:
    from playwright.sync_api import (  # type: ignore[import-not-found, unused-ignore]
        Browser,
        Locator,
        Page,
        Route,
        expect,
        sync_playwright,
    )

    HAS_PLAYWRIGHT = True
except ImportError:
    HAS_PLAYWRIGHT = False

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = ROOT / ".screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EXAMPLE_PROJECT = ROOT / "example_project"
PASSWORD = "whos-online"
# The widgets refresh in place every 15 seconds in the demo, every 2 here.
REFRESH_SECONDS = 2
REFRESH_WAIT_MS = 5 * REFRESH_SECONDS * 1000
# How long the example project's process may show others a snapshot it took
# (WHOS_ONLINE_SNAPSHOT_MAX_AGE, default 2 s): what a reload waits for.
SHARED_SNAPSHOT_MS = 2100

STAFF_PAGE = "/admin/whos_online/onlinenow/"
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
}

# The demo's own look, chosen with ?theme=: the widget must fit either.
THEMES = ["light", "dark"]
# The app's own pages, with no site around them (see serve()).
APP_SITE = "http://whos-online.test"

SITE_NAMES = "#online-now .whos-online-users > *"
THREAD_NAMES = "#thread-viewers .whos-online-users > *"

# log_in("alice"), or log_in("alice", color_scheme="dark") with any other
# option of Playwright's Browser.new_context.
LogIn = Callable[..., "Page"]
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
    if not AXE.exists():
        return f"no axe-core at {AXE} (npm ci)"
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
    env = demo_set_up(workdir, REFRESH_SECONDS)
    with runserver(manage(), EXAMPLE_PROJECT, env, workdir) as url:
        yield url


def manage(*args: str) -> list[str]:
    return [sys.executable, str(EXAMPLE_PROJECT / "manage.py"), *args]


def demo_set_up(
    workdir: Path, refresh: int, editing: int = REFRESH_SECONDS
) -> dict[str, str]:
    """A fresh database for the example project in ``workdir``, its users
    made; the environment it is served with, its widgets refreshing every
    ``refresh`` seconds and its change forms asking every ``editing``."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "example_project.settings",
        "DEMO_DB_PATH": str(workdir / "db.sqlite3"),
        "PYTHONUNBUFFERED": "1",
        "DEMO_REFRESH_SECONDS": str(refresh),
        "DEMO_EDITING_SECONDS": str(editing),
    }
    env.pop("REDIS_URL", None)  # always the embedded fakeredis: no shared keys
    for command in (["migrate", "--verbosity", "0"], ["create_demo_users"]):
        subprocess.run(
            manage(*command), cwd=EXAMPLE_PROJECT, env=env, check=True, timeout=60
        )
    return env


@contextmanager
def runserver(
    django: list[str], cwd: Path, env: dict[str, str], workdir: Path
) -> Iterator[str]:
    """``runserver`` on a free loopback port, by the command ``django``
    (manage.py, or ``python -m django``): its URL, while it serves. Its
    output goes to WORKDIR/runserver.log."""
    port = free_port()
    command = [*django, "runserver", f"127.0.0.1:{port}", "--noreload"]
    with serving(command, port, cwd, env, workdir / "runserver.log") as url:
        yield url


@contextmanager
def serving(
    command: list[str], port: int, cwd: Path, env: dict[str, str], log_path: Path
) -> Iterator[str]:
    """The server ``command`` starts on ``port``: its URL, while it serves."""
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT
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
            pytest.fail(f"the server exited:\n{log.read_text()}", pytrace=False)
        try:
            with urllib.request.urlopen(probe, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(
        f"the server did not answer within 30 s:\n{log.read_text()}", pytrace=False
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Playwright keeps an event loop in this thread, so Django would refuse
    # the queries of the tests that render the app's pages in-process; they
    # run while Playwright waits, never beside it.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def log_in(browser: Browser, demo: str) -> Iterator[LogIn]:
    """Log a user in, in a browser session of their own; each is logged out
    (so off the online lists) and closed after the test."""
    with logging_in(browser, demo) as log_in:
        yield log_in


@contextmanager
def logging_in(browser: Browser, site: str) -> Iterator[LogIn]:
    """``log_in`` on the site served at ``site``."""
    pages: list[Page] = []

    def log_in(username: str, **options: Any) -> Page:
        page = browser.new_context(
            base_url=site, user_agent=USER_AGENT, **options
        ).new_page()
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
        if not page.is_closed():
            # From a page of the site (a test may end in the admin), so the
            # next test finds nobody of this one still online.
            page.goto("/")
            if page.locator(".account form.logout button").count():
                log_out(page)
        page.context.close()


def log_out(page: Page) -> None:
    page.click(".account form.logout button")  # a POST, as Django's LogoutView wants
    expect(page.locator("header .account")).to_contain_text("Not logged in")


def names(page: Page, where: str = SITE_NAMES) -> list[str]:
    return [
        text.removesuffix(" (hidden)") for text in page.locator(where).all_inner_texts()
    ]


def site_counts(page: Page) -> Any:
    return page.locator("#online-now .whos-online-counts")


def axe_violations(page: Page, part: str | None = None) -> list[str]:
    """What axe-core finds wrong with the page as it is now (or with the
    ``part`` of it a selector names), one line each."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        "async (part) => (await axe.run(part ? {include: [part]} : document,"
        " {resultTypes: ['violations']})).violations",
        part,
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(" ".join(node["target"]) for node in v["nodes"])
        for v in found
    ]


def screenshot(
    page: Page, name: str, part: Locator | None = None, *, whole: bool = True
) -> None:
    """Keep the page (``whole``, or as much as the window shows), or a part
    of it with a little of the page around it, in .screenshots/NAME.png, to
    be looked at."""
    SCREENSHOTS.mkdir(exist_ok=True)
    path = str(SCREENSHOTS / f"{name}.png")
    if part is None:
        page.screenshot(path=path, full_page=whole)
        return
    box = part.bounding_box()
    assert box is not None, f"{name}: nothing to see"
    margin = 12
    left, top = max(box["x"] - margin, 0), max(box["y"] - margin, 0)
    page.screenshot(
        path=path,
        full_page=True,
        clip={
            "x": left,
            "y": top,
            "width": box["x"] + box["width"] + margin - left,
            "height": box["y"] + box["height"] + margin - top,
        },
    )


def no_sideways_scroll(page: Page) -> bool:
    return bool(
        page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    )


def style(element: Locator, name: str) -> str:
    """The computed value of the CSS property NAME."""
    return str(element.evaluate("(e, name) => getComputedStyle(e)[name]", _camel(name)))


def _camel(name: str) -> str:
    head, *rest = name.split("-")
    return head + "".join(part.title() for part in rest)


def background_behind(element: Locator) -> str:
    """The colour seen behind the element: its own background, or the first
    one that is not transparent on the way up."""
    return str(
        element.evaluate(
            """e => {
                for (; e; e = e.parentElement) {
                    const colour = getComputedStyle(e).backgroundColor;
                    if (colour !== "rgba(0, 0, 0, 0)" && colour !== "transparent") {
                        return colour;
                    }
                }
                return "rgb(255, 255, 255)";
            }"""
        )
    )


def lightness(colour: str) -> float:
    """From 0 (black) to 1 (white): the mean of an rgb() colour's channels."""
    red, green, blue = map(float, re.findall(r"[\d.]+", colour)[:3])
    return (red + green + blue) / (3 * 255)


def cells_are_padded(table: Locator) -> bool:
    """Every header and data cell has room around its text on all sides."""
    return bool(
        table.evaluate(
            """t => [...t.querySelectorAll("th, td")].every(cell => {
                const s = getComputedStyle(cell);
                return parseFloat(s.paddingTop) > 0 && parseFloat(s.paddingBottom) > 0
                    && (cell === cell.parentElement.firstElementChild
                        || parseFloat(s.paddingLeft) >= 4)
                    && (cell === cell.parentElement.lastElementChild
                        || parseFloat(s.paddingRight) >= 4);
            })"""
        )
    )


def header_is_ruled_off(table: Locator) -> bool:
    """The column headings stand apart from each other and from the rows:
    space between them, and a visible line under them."""
    return bool(
        table.evaluate(
            """t => {
                const heads = [...t.querySelectorAll("thead th")];
                const apart = heads.slice(1).every((th, i) => {
                    const text = document.createRange();
                    text.selectNodeContents(heads[i]);
                    const gap = th.getBoundingClientRect().left
                        - text.getBoundingClientRect().right;
                    return gap >= 8;
                });
                const s = getComputedStyle(heads[0]);
                return apart && parseFloat(s.borderBottomWidth) >= 1
                    && s.borderBottomStyle !== "none"
                    && s.borderBottomColor !== "rgba(0, 0, 0, 0)";
            }"""
        )
    )


def serve(page: Page, html: bytes) -> None:
    """Show HTML the test's own Django rendered (the app's page, with no
    site around it) at APP_SITE, with the app's static files beside it."""

    def answer(route: Route) -> None:
        path = urllib.parse.urlsplit(route.request.url).path
        if path.startswith("/static/"):
            route.fulfill(path=str(ROOT / "whos_online" / path.removeprefix("/")))
        else:
            route.fulfill(content_type="text/html; charset=utf-8", body=html)

    page.route(f"{APP_SITE}/**", answer)


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
    alice.wait_for_timeout(SHARED_SNAPSHOT_MS)
    alice.reload()

    assert "bob" in names(alice)
    assert "alice" in names(bob)

    log_out(bob)
    alice.wait_for_timeout(SHARED_SNAPSHOT_MS)
    alice.reload()

    assert "bob" not in names(alice)
    assert "alice" in names(alice)


def test_the_widget_refreshes_in_place_when_someone_logs_in(log_in: LogIn) -> None:
    alice = log_in("alice")
    breakdown = alice.locator("#online-now .whos-online-breakdown")
    expect(breakdown).to_contain_text("1 user")
    alice.evaluate("window.notReloaded = true")

    log_in("bob")

    expect(breakdown).to_contain_text("2 users", timeout=REFRESH_WAIT_MS)
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
    expect(alice_row).to_contain_text("just now")  # not "0 minutes ago"


def test_a_thread_lists_who_is_viewing_it(log_in: LogIn) -> None:
    alice = log_in("alice")
    bob = log_in("bob")
    alice.goto("/forum/3/")
    bob.goto("/forum/3/")
    alice.wait_for_timeout(SHARED_SNAPSHOT_MS)
    alice.reload()

    assert sorted(names(alice, THREAD_NAMES)) == ["alice", "bob"]
    expect(alice.locator("#thread-viewers h2")).to_have_text("Who's here")
    screenshot(alice, "thread")
    alice.goto("/forum/4/")
    assert "bob" not in names(alice, THREAD_NAMES)


def test_a_reader_who_opens_another_thread_leaves_the_first_at_once(
    log_in: LogIn,
) -> None:
    alice = log_in("alice")
    bob = log_in("bob")
    bob.goto("/forum/3/")
    alice.goto("/forum/3/")
    bob.goto("/forum/4/")
    alice.wait_for_timeout(SHARED_SNAPSHOT_MS)
    alice.reload()
    assert names(alice, THREAD_NAMES) == ["alice"]


def test_a_forum_page_is_decorated_with_badges_and_viewers(log_in: LogIn) -> None:
    """The forum's table knows nothing of presence: {% whos_online_decorate %}
    in the base template adds a badge after each author's link and
    "N viewing" after each thread's link, from one request."""
    alice = log_in("alice")
    bob = log_in("bob")
    bob.goto("/forum/3/")
    asked: list[str] = []
    # Only the forum's asks: the page alice logged in on may still ask late.
    alice.on(
        "request",
        lambda r: (
            asked.append(r.post_data or "")
            if r.url.endswith("/decorate/")
            and (r.header_value("referer") or "").endswith("/forum/")
            else None
        ),
    )
    alice.goto("/forum/")
    bobs = alice.locator("tbody tr", has_text="Show us your Django side projects")
    expect(bobs.locator(".whos-online-viewing")).to_have_text("1 viewing")
    expect(bobs.locator(".whos-online-badge")).to_have_attribute("title", "online")
    carols = alice.locator("tbody tr", has_text="How many visitors")
    # carol is hidden (demo/presence.py): offline to alice; nobody reads her thread.
    expect(carols.locator(".whos-online-badge")).to_have_attribute("title", "offline")
    assert carols.locator(".whos-online-viewing").count() == 0
    # One request for the whole page: every author's and thread's link.
    first = urllib.parse.parse_qs(asked[0])["path"]
    assert {"/members/bob/", "/members/carol/", "/forum/3/", "/forum/4/"} <= set(first)
    screenshot(alice, "decorated-forum", alice.locator("main table"))
    assert axe_violations(alice, "main") == []

    bob.goto("/forum/4/")  # bob moves on: the next refresh follows
    expect(carols.locator(".whos-online-viewing")).to_have_text(
        "1 viewing", timeout=REFRESH_WAIT_MS
    )
    expect(bobs.locator(".whos-online-viewing")).to_have_count(0)


def test_a_closed_tab_leaves_the_room_by_the_next_refresh(log_in: LogIn) -> None:
    alice = log_in("alice")
    bob = log_in("bob")
    reading = bob.context.new_page()
    reading.goto("/forum/3/")  # a tab of its own, its script keeping it there
    bob.goto("/forum/5/")  # the device's latest page: another thread
    alice.goto("/forum/3/")
    alice.wait_for_timeout(SHARED_SNAPSHOT_MS)
    alice.reload()
    assert sorted(names(alice, THREAD_NAMES)) == ["alice", "bob"]
    screenshot(alice, "room-two-tabs")

    reading.close(run_before_unload=True)  # its pagehide says it closed
    # Gone at alice's next refresh (and the snapshot her process shares).
    expect(alice.locator(THREAD_NAMES)).to_have_count(
        1, timeout=REFRESH_SECONDS * 1000 + SHARED_SNAPSHOT_MS + 2000
    )
    assert names(alice, THREAD_NAMES) == ["alice"]


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


def test_appearing_offline_hides_a_user_from_others_at_once(log_in: LogIn) -> None:
    alice = log_in("alice")
    bob = log_in("bob")
    admin = log_in("admin")
    bob.reload()
    assert "alice" in names(bob)

    alice.get_by_role("button", name="Appear offline").click()
    expect(alice.get_by_role("button", name="Appear online")).to_be_visible()
    bob.reload()
    admin.reload()

    assert "alice" not in names(bob)
    hidden = admin.locator("#online-now .whos-online-users .whos-online-hidden")
    expect(hidden).to_contain_text("alice")
    alice.get_by_role("button", name="Appear online").click()
    bob.reload()
    assert "alice" in names(bob)


def test_the_who_is_online_page_says_where_users_are(log_in: LogIn) -> None:
    alice = log_in("alice")
    bob = log_in("bob")
    # A location is written with a record; dropping the guard cookie stands
    # for her guard period running out.
    alice.context.clear_cookies(name="whos_online")
    alice.goto("/forum/")
    bob.goto("/whos-online/")
    row = bob.locator("tr.whos-online-user", has_text="alice")
    expect(row).to_contain_text("Reading the forum")


def test_staff_find_online_now_through_the_admin_link(log_in: LogIn) -> None:
    alice = log_in("alice")
    admin = log_in("admin")

    expect(alice.locator("nav").get_by_role("link", name="Admin")).to_have_count(0)
    admin.locator("nav").get_by_role("link", name="Admin").click()
    admin.get_by_role("link", name="Online now").click()
    expect(admin.locator("h1")).to_contain_text("Online now")


@pytest.mark.parametrize("theme", THEMES)
def test_the_home_page_passes_axe(log_in: LogIn, theme: str) -> None:
    log_in("bob")
    log_in("carol")  # hidden: alice can no more tell her from someone offline
    alice = log_in("alice")
    alice.goto(f"/?theme={theme}")
    breakdown = alice.locator("#online-now .whos-online-breakdown")
    expect(breakdown).to_contain_text("users")
    expect(breakdown).not_to_contain_text("hidden")
    screenshot(alice, f"home-{theme}")
    screenshot(alice, f"widget-{theme}", alice.locator("#online-now .whos-online"))
    assert axe_violations(alice) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_staff_page_passes_axe(log_in: LogIn, scheme: str) -> None:
    log_in("alice")
    log_in("carol")
    admin = log_in("admin", color_scheme=scheme)
    admin.goto(STAFF_PAGE)
    table = admin.locator(".whos-online-table").first
    expect(table).to_contain_text("carol")
    assert cells_are_padded(table)
    screenshot(admin, f"staff-{scheme}")
    screenshot(admin, f"staff-content-{scheme}", admin.locator("#content"))
    assert axe_violations(admin) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_light_site_the_widget_is_as_light_as_the_page(
    log_in: LogIn, scheme: str
) -> None:
    # The visitor's own preference, dark or light, does not matter.
    alice = log_in("alice", color_scheme=scheme)
    alice.goto("/?theme=light")
    box = alice.locator("#online-now .whos-online")
    assert background_behind(box) == background_behind(alice.locator("body"))
    assert lightness(background_behind(box)) > 0.9
    for inherited in ("color", "font-family"):
        assert style(box, inherited) == style(alice.locator("body"), inherited)


def test_on_a_dark_site_the_widget_is_as_dark_as_the_page(log_in: LogIn) -> None:
    alice = log_in("alice", color_scheme="light")
    alice.goto("/?theme=dark")
    box = alice.locator("#online-now .whos-online")
    assert background_behind(box) == background_behind(alice.locator("body"))
    assert lightness(background_behind(box)) < 0.1
    assert style(box, "color") == style(alice.locator("body"), "color")


@pytest.mark.parametrize(("scheme", "dark"), [("light", False), ("dark", True)])
def test_a_site_can_let_the_widget_follow_the_visitors_preference(
    log_in: LogIn, scheme: str, dark: bool
) -> None:
    alice = log_in("alice", color_scheme=scheme)
    alice.goto("/?theme=light")
    alice.evaluate("document.documentElement.dataset.whosOnlineTheme = 'auto'")
    box = alice.locator("#online-now .whos-online")
    assert (lightness(style(box, "background-color")) < 0.2) is dark
    screenshot(alice, f"widget-auto-{scheme}", box)
    assert axe_violations(alice) == []


@pytest.mark.parametrize("theme", THEMES)
def test_the_public_page_is_a_finished_table_in_the_sites_layout(
    log_in: LogIn, theme: str
) -> None:
    alice = log_in("alice")
    bob = log_in("bob")
    alice.context.clear_cookies(name="whos_online")  # her guard period is over
    alice.goto("/forum/")
    bob.goto(f"/whos-online/?theme={theme}")
    table = bob.locator(".whos-online-table")
    expect(table).to_contain_text("Reading the forum")
    assert cells_are_padded(table)
    assert header_is_ruled_off(table)
    assert style(table, "font-family") == style(bob.locator("body"), "font-family")
    screenshot(bob, f"public-{theme}")
    screenshot(bob, f"public-content-{theme}", bob.locator("main"))
    assert axe_violations(bob) == []


@pytest.mark.parametrize("theme", THEMES)
def test_a_room_box_fits_the_site(log_in: LogIn, theme: str) -> None:
    alice = log_in("alice")
    bob = log_in("bob")
    bob.goto("/forum/2/")
    alice.goto(f"/forum/2/?theme={theme}")
    box = alice.locator("#thread-viewers .whos-online")
    expect(box.locator(".whos-online-users")).to_contain_text("bob")
    assert background_behind(box) == background_behind(alice.locator("body"))
    screenshot(alice, f"room-{theme}")
    screenshot(alice, f"room-box-{theme}", box)
    assert axe_violations(alice) == []


@pytest.mark.parametrize("theme", THEMES)
def test_the_visibility_toggle_is_styled_in_either_state(
    log_in: LogIn, theme: str
) -> None:
    alice = log_in("alice")
    alice.goto(f"/?theme={theme}")
    account = alice.locator("header .account")
    for pressed, name in (("false", "Appear offline"), ("true", "Appear online")):
        button = alice.get_by_role("button", name=name)
        expect(button).to_have_attribute("aria-pressed", pressed)
        assert style(button, "background-color") == "rgba(0, 0, 0, 0)"
        assert style(button, "font-family") == style(
            alice.locator("body"), "font-family"
        )
        assert style(button, "color") == style(account, "color")
        assert float(style(button, "border-top-left-radius").removesuffix("px")) >= 8
        screenshot(alice, f"toggle-{pressed}-{theme}", button)
        assert axe_violations(alice) == []
        button.click()
    expect(alice.get_by_role("button", name="Appear offline")).to_be_visible()


def dot(button: Locator) -> tuple[str, str]:
    """The background and border colours of the button's dot (its ::before)."""
    colours = button.evaluate(
        "b => { const s = getComputedStyle(b, '::before');"
        " return [s.backgroundColor, s.borderTopColor]; }"
    )
    return str(colours[0]), str(colours[1])


@pytest.mark.parametrize("theme", THEMES)
def test_the_last_seen_pill_has_no_online_dot(log_in: LogIn, theme: str) -> None:
    """Two pills: the presence one's dot is the online colour while online;
    the last-seen one's is the text colour, filled while the time is shown,
    hollow while it is hidden."""
    alice = log_in("alice")
    alice.goto(f"/?theme={theme}")
    presence = alice.get_by_role("button", name="Appear offline")
    last_seen = alice.get_by_role("button", name="Hide when I was last seen")
    online = dot(presence)[0]
    text = style(last_seen, "color")
    assert online != text
    assert dot(last_seen) == (text, text)
    screenshot(alice, f"toggle-pills-shown-{theme}", alice.locator("header .account"))
    last_seen.click()
    hidden = alice.get_by_role("button", name="Show when I was last seen")
    expect(hidden).to_have_attribute("aria-pressed", "true")
    assert dot(hidden) == ("rgba(0, 0, 0, 0)", style(hidden, "color"))
    screenshot(alice, f"toggle-pills-hidden-{theme}", alice.locator("header .account"))
    assert axe_violations(alice) == []
    hidden.click()
    expect(
        alice.get_by_role("button", name="Hide when I was last seen")
    ).to_be_visible()


@pytest.mark.django_db
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_public_page_on_the_apps_own_base_is_finished(
    browser: Browser,
    settings: Any,
    django_user_model: Any,
    scheme: Literal["light", "dark"],
) -> None:
    """No site layout: the page extends the app's whos_online/base.html."""
    settings.STATIC_URL = "/static/"
    client = Client()
    for name in ("alice", "bob"):
        client.force_login(django_user_model.objects.create_user(name))
        client.get("/forum/")
    page = browser.new_context(color_scheme=scheme).new_page()
    serve(page, client.get("/whos-online/").content)
    page.goto(f"{APP_SITE}/whos-online/")
    table = page.locator(".whos-online-table")
    expect(table).to_contain_text("Reading the forum")
    body = page.locator("body")
    assert "serif" not in style(body, "font-family").replace("sans-serif", "")
    assert (lightness(background_behind(body)) < 0.2) is (scheme == "dark")
    assert cells_are_padded(table)
    assert header_is_ruled_off(table)
    screenshot(page, f"app-base-{scheme}")
    screenshot(page, f"app-base-content-{scheme}", page.locator("main"))
    assert axe_violations(page) == []
    page.context.close()


def test_the_home_page_fits_a_phone(log_in: LogIn) -> None:
    log_in("bob")
    alice = log_in("alice", **PHONE)
    alice.goto("/")
    expect(alice.locator("#online-now .whos-online-users")).to_contain_text("bob")
    assert no_sideways_scroll(alice)
    screenshot(alice, "home-phone")
    assert axe_violations(alice) == []


def test_the_public_page_fits_a_phone(log_in: LogIn) -> None:
    alice = log_in("alice")
    bob = log_in("bob", **PHONE)
    alice.context.clear_cookies(name="whos_online")  # her guard period is over
    alice.goto("/forum/")
    bob.goto("/whos-online/")
    expect(bob.locator(".whos-online-table")).to_contain_text("Reading the forum")
    assert no_sideways_scroll(bob)
    screenshot(bob, "public-phone")


def test_the_staff_page_fits_a_phone(log_in: LogIn) -> None:
    admin = log_in("admin", **PHONE)
    admin.goto(STAFF_PAGE)
    for name in ("Online over the past 24 hours", "Most online each day, past 30 days"):
        expect(admin.get_by_role("img", name=name)).to_be_visible()
    assert no_sideways_scroll(admin)
    screenshot(admin, "staff-phone")


def test_the_widget_speaks_the_browsers_language(log_in: LogIn) -> None:
    log_in("bob")
    alice = log_in("alice", extra_http_headers={"Accept-Language": "de"})
    alice.goto("/")
    widget = alice.locator("#online-now")
    expect(widget.get_by_role("heading")).to_have_text("Wer ist online")
    expect(site_counts(alice)).to_have_text(re.compile(r"^\d+ Besucher online$"))
    expect(widget.locator(".whos-online-breakdown")).to_contain_text(
        re.compile(r"\d+ Benutzer")
    )
    screenshot(alice, "home-de")


def test_the_staff_page_speaks_the_browsers_language(log_in: LogIn) -> None:
    admin = log_in("admin", extra_http_headers={"Accept-Language": "de"})
    admin.goto(STAFF_PAGE)
    expect(admin.locator("h1")).to_have_text("Jetzt online")
    expect(admin.locator(".whos-online-table").first).to_contain_text("(gerade eben)")
    screenshot(admin, "staff-de")


def test_a_refresh_changes_the_count_sentence_in_place(log_in: LogIn) -> None:
    alice = log_in("alice")
    counts = site_counts(alice)
    before = counts.inner_text()
    counts.evaluate("live => { window.live = live; }")

    log_in("bob")

    expect(counts).not_to_have_text(
        before, timeout=REFRESH_WAIT_MS + SHARED_SNAPSHOT_MS
    )
    listed_bob = alice.locator(SITE_NAMES, has_text="bob")
    expect(listed_bob).to_have_count(1, timeout=REFRESH_WAIT_MS + SHARED_SNAPSHOT_MS)
    assert counts.evaluate("live => live === window.live") is True
    assert alice.locator("#online-now [aria-live]").count() == 1


def test_the_staff_page_refreshes_itself_without_a_reload(log_in: LogIn) -> None:
    admin = log_in("admin")
    admin.clock.install()
    admin.goto(STAFF_PAGE)
    users = admin.locator(".whos-online-table").first
    expect(users).not_to_contain_text("bob")
    admin.evaluate("window.notReloaded = true")

    log_in("bob")
    admin.clock.run_for("00:31")

    expect(users).to_contain_text("bob")
    assert admin.evaluate("window.notReloaded") is True


# Who else is editing, in the admin: the demo's admin site is an
# EditingAdminSite, so every change form has it; admin and editor are both
# superusers.
NOTICE = "#whos-online-editing"


def open_change_form(page: Page, username: str) -> None:
    """Open the admin's change form of the user ``username``, in whatever
    language the browser asks for."""
    page.goto(f"/admin/auth/user/?q={username}")
    page.locator("#result_list").get_by_role("link", name=username, exact=True).click()
    expect(page.locator("#id_username")).to_have_value(username)
    expect(page.locator(NOTICE)).to_be_attached()


def both_on_a_form(
    log_in: LogIn, username: str, **admin_options: Any
) -> tuple[Page, Page]:
    """The editor with the user ``username``'s change form open, then the
    admin on the same form (in the browser ``admin_options`` describe)."""
    editor = log_in("editor")
    open_change_form(editor, username)
    admin = log_in("admin", **admin_options)
    open_change_form(admin, username)
    return admin, editor


def close_admin(*pages: Page) -> None:
    """Back to the demo's pages, where the fixture logs each one out."""
    for page in pages:
        page.goto("/")


def test_two_staff_members_see_each_other_on_one_change_form(log_in: LogIn) -> None:
    admin, editor = log_in("admin"), log_in("editor")
    open_change_form(admin, "alice")
    open_change_form(editor, "alice")
    expect(editor.locator(NOTICE)).to_have_text("admin is viewing this user.")
    expect(admin.locator(NOTICE)).to_have_text(
        "editor is viewing this user.", timeout=REFRESH_WAIT_MS
    )
    editor.fill("#id_first_name", "Alice")
    expect(admin.locator(NOTICE)).to_have_text(
        "editor is editing this user.", timeout=REFRESH_WAIT_MS
    )
    editor.goto("/admin/")  # the form closes, and says so
    expect(admin.locator(NOTICE)).to_have_text("", timeout=REFRESH_WAIT_MS)
    close_admin(admin, editor)


def test_undoing_the_changes_by_hand_turns_editing_back_to_viewing(
    log_in: LogIn,
) -> None:
    admin, editor = both_on_a_form(log_in, "alice")
    initial = editor.locator("#id_first_name").input_value()
    editor.fill("#id_first_name", initial + " changed")
    expect(admin.locator(NOTICE)).to_have_text(
        "editor is editing this user.", timeout=REFRESH_WAIT_MS
    )
    editor.fill("#id_first_name", initial)  # as the page was opened
    expect(admin.locator(NOTICE)).to_have_text(
        "editor is viewing this user.", timeout=REFRESH_WAIT_MS
    )
    close_admin(admin, editor)


def test_a_save_since_the_form_was_opened_is_told_and_needs_a_tick(
    log_in: LogIn,
) -> None:
    admin, editor = log_in("admin"), log_in("editor")
    open_change_form(admin, "bob")
    open_change_form(editor, "bob")
    editor.fill("#id_last_name", "Builder")
    editor.click("input[name=_continue]")
    expect(editor.locator(".messagelist .success")).to_be_visible()
    expect(admin.locator(NOTICE)).to_contain_text(
        "editor saved this user after you opened it.", timeout=REFRESH_WAIT_MS
    )
    screenshot(admin, "admin-editing-saved", admin.locator(NOTICE))
    admin.fill("#id_last_name", "Marley")
    admin.click("input[name=_continue]")
    expect(admin.locator(".errorlist.nonfield")).to_contain_text(
        "editor saved this user"
    )
    screenshot(admin, "admin-editing-refused", whole=False)
    assert axe_violations(admin, ".whos-online-overwrite") == []
    admin.check("input[name=whos_online_overwrite]")
    admin.click("input[name=_continue]")
    expect(admin.locator(".messagelist .success")).to_be_visible()
    expect(admin.locator("#id_last_name")).to_have_value("Marley")
    close_admin(admin, editor)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_change_form_notice_passes_axe(log_in: LogIn, scheme: str) -> None:
    editor = log_in("editor")
    open_change_form(editor, "carol")
    editor.fill("#id_first_name", "Carol")
    admin = log_in("admin", color_scheme=scheme)
    open_change_form(admin, "carol")
    expect(admin.locator(NOTICE)).to_have_text(
        "editor is editing this user.", timeout=REFRESH_WAIT_MS
    )
    screenshot(admin, f"admin-editing-{scheme}", whole=False)
    # Ours only: Django's own widgets on the form have findings of their own.
    assert axe_violations(admin, NOTICE) == []
    close_admin(admin, editor)


def test_the_change_form_notice_reads_right_to_left(log_in: LogIn) -> None:
    admin, editor = both_on_a_form(
        log_in, "alice", extra_http_headers={"Accept-Language": "he"}
    )
    expect(admin.locator("html")).to_have_attribute("dir", "rtl")
    item = admin.locator(f"{NOTICE} li")
    # No Hebrew catalog ships: the app's words are English, the model's Hebrew.
    expect(item).to_have_text(re.compile(r"^editor is viewing this \S+\.$"))
    # The notice's items are replaced at each ask: ask the box they are in.
    box = admin.locator(NOTICE)
    assert box.evaluate("box => getComputedStyle(box).direction") == "rtl"
    # Its English sentence, with no Hebrew catalog, still reads left to right.
    sentence = "box => getComputedStyle(box.querySelector('li')).direction"
    assert box.evaluate(sentence) == "ltr"
    screenshot(admin, "admin-editing-rtl", whole=False)
    assert axe_violations(admin, NOTICE) == []
    close_admin(admin, editor)


def test_the_change_form_notice_speaks_the_browsers_language(log_in: LogIn) -> None:
    admin, editor = both_on_a_form(
        log_in, "alice", extra_http_headers={"Accept-Language": "de"}
    )
    expect(admin.locator(NOTICE)).to_have_text(
        "editor sieht sich diesen Eintrag (Benutzer) an."
    )
    screenshot(admin, "admin-editing-de", admin.locator(NOTICE))
    close_admin(admin, editor)


def test_a_form_whose_object_was_deleted_says_so_and_stops_asking(
    log_in: LogIn,
) -> None:
    editor = log_in("editor")
    editor.goto("/admin/auth/group/add/")
    editor.fill("#id_name", "Moderators")
    editor.click("input[name=_continue]")
    expect(editor.locator(".messagelist .success")).to_be_visible()
    form = editor.url
    admin = log_in("admin")
    admin.goto(form)
    expect(admin.locator(NOTICE)).to_have_text("editor is viewing this group.")
    editor.goto(form.replace("/change/", "/delete/"))
    editor.click("#content input[type=submit]")
    expect(admin.locator(NOTICE)).to_have_text(
        "editor deleted this group after you opened it.", timeout=REFRESH_WAIT_MS
    )
    asked: list[str] = []
    admin.on("request", lambda request: asked.append(request.url))
    admin.wait_for_timeout(3 * REFRESH_SECONDS * 1000)
    assert [url for url in asked if "/presence/" in url] == []
    close_admin(admin, editor)
