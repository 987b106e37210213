"""Who else is editing, and the staff page, in four admin themes.

Each theme boots a tiny admin site of its own (tests/themed_admin/:
Django's own admin, django-unfold, django-grappelli, django-jazzmin, the
versions pinned in requirements/browser.txt), served by ``runserver`` with
an embedded fakeredis, and driven in Debian's Chromium as tests/test_browser.py
drives the demo (its fixtures and helpers are used here). The notice on a
change form must read as a box, in its colour, light and dark, with no help
from the theme; the staff page's tables must line up. Screenshots are left
in .screenshots/admin-theme-*.png to be looked at; docs/styling.md shows
them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.test_browser import (
    HAS_PLAYWRIGHT,
    ROOT,
    USER_AGENT,
    axe_violations,
    browser,
    browser_available,
    lightness,
    runserver,
    screenshot,
    style,
)

if HAS_PLAYWRIGHT:
    from playwright.sync_api import Browser, Locator, Page, expect

pytestmark = pytest.mark.browser
__all__ = ["browser", "browser_available"]  # fixtures of tests/test_browser.py

THEMES = ["stock", "unfold", "grappelli", "jazzmin"]
PASSWORD = "themed-admin"
STAFF = ["admin", "editor", "viewer"]
NOTICE = "#whos-online-editing"
# Each form asks every 2 seconds (the site's WHOS_ONLINE_ADMIN_EDITING_SECONDS).
ASK_WAIT_MS = 10_000
# A page load, a save and its redirect included, on a busy CI machine.
PAGE_WAIT_MS = 10_000

LogIn = Callable[..., "Page"]

MAKE_USERS = f"""
from django.contrib.auth.models import User
for name in {STAFF!r}:
    User.objects.create_superuser(name, "", {PASSWORD!r})
User.objects.create_user("alice", "", {PASSWORD!r})
"""


@pytest.fixture(scope="module", params=THEMES)
def site(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """The theme's name and its admin site's URL."""
    theme: str = request.param
    workdir = tmp_path_factory.mktemp(f"admin-{theme}")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.themed_admin.settings",
        "THEMED_ADMIN": theme,
        "THEMED_ADMIN_DB": str(workdir / "db.sqlite3"),
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
    }
    django = [sys.executable, "-m", "django"]
    for command in (["migrate", "--verbosity", "0"], ["shell", "-c", MAKE_USERS]):
        subprocess.run([*django, *command], cwd=ROOT, env=env, check=True, timeout=60)
    with runserver(django, ROOT, env, workdir) as url:
        yield theme, url


@pytest.fixture
def log_in(browser: Browser, site: tuple[str, str]) -> Iterator[LogIn]:
    """A staff member logged in to the theme's admin, in a browser of their
    own; closed after the test."""
    pages: list[Page] = []

    def log_in(username: str, **options: Any) -> Page:
        context = browser.new_context(
            base_url=site[1], user_agent=USER_AGENT, **options
        )
        page = context.new_page()
        page.set_default_timeout(PAGE_WAIT_MS)
        pages.append(page)
        page.goto("/admin/login/?next=/admin/")
        page.fill("[name=username]", username)
        page.fill("[name=password]", PASSWORD)
        page.locator("[name=password]").press("Enter")
        page.wait_for_url("**/admin/")
        return page

    yield log_in
    for page in pages:
        page.context.close()


def open_alice(page: Page) -> None:
    """Open the change form of the user alice."""
    page.goto("/admin/auth/user/?q=alice")
    link = page.locator("#result_list").get_by_role("link", name="alice", exact=True)
    page.goto(str(link.get_attribute("href")))
    expect(page.locator("#id_username")).to_have_value("alice")
    expect(page.locator(NOTICE)).to_be_attached()


def accent(item: Locator) -> str:
    """The colour of the line an item of the notice is marked with."""
    return style(item, "border-inline-start-color")


# Paints CSS colours, one over the other, on white in a 1-pixel canvas, as
# the browser would, and gives the rgb() seen: for any colour syntax
# (oklch(), color-mix()) and tints over what lies under them.
PAINT = """layers => {
    const pixel = document.createElement("canvas").getContext("2d");
    pixel.fillStyle = "white";
    pixel.fillRect(0, 0, 1, 1);
    for (const colour of layers) {
        pixel.fillStyle = colour;
        pixel.fillRect(0, 0, 1, 1);
    }
    const [r, g, b] = pixel.getImageData(0, 0, 1, 1).data;
    return `rgb(${r}, ${g}, ${b})`;
}"""


def seen_behind(element: Locator) -> str:
    """The colour seen behind the element's text: its background over those
    of the elements it lies on."""
    layers = element.evaluate(
        """e => {
            const layers = [];
            for (; e; e = e.parentElement) {
                layers.unshift(getComputedStyle(e).backgroundColor);
            }
            return layers;
        }"""
    )
    return str(element.evaluate(f"(_, layers) => ({PAINT})(layers)", layers))


def text_colour(element: Locator) -> str:
    """The element's text colour as rgb()."""
    return str(element.evaluate(f"e => ({PAINT})([getComputedStyle(e).color])"))


def reads_as_a_box(item: Locator, *, tinted: bool = True) -> None:
    """Padded, marked and (``tinted``) tinted, its text plain to read on it."""
    assert float(style(item, "padding-top").removesuffix("px")) >= 6
    assert float(style(item, "padding-inline-start").removesuffix("px")) >= 8
    assert float(style(item, "border-inline-start-width").removesuffix("px")) >= 3
    assert style(item, "background-image") == "none"  # no admin icon under the text
    assert float(style(item, "font-size").removesuffix("px")) >= 13
    text, behind = text_colour(item), seen_behind(item)
    assert abs(lightness(text) - lightness(behind)) >= 0.45, (text, behind)
    # Tinted: it stands out from the page around it.
    assert (seen_behind(item) != seen_behind(item.locator("xpath=.."))) == tinted


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_notice_is_a_box_in_its_colour_in_the_theme(
    log_in: LogIn, site: tuple[str, str], scheme: str
) -> None:
    editor, viewer = log_in("editor"), log_in("viewer")
    open_alice(editor)
    editor.fill("#id_first_name", "Alice")
    open_alice(viewer)
    admin = log_in("admin", color_scheme=scheme)
    open_alice(admin)
    editing = admin.locator(f"{NOTICE} li", has_text="editor is editing this user.")
    viewing = admin.locator(f"{NOTICE} li", has_text="viewer is viewing this user.")
    expect(editing).to_be_visible(timeout=ASK_WAIT_MS)
    expect(viewing).to_be_visible(timeout=ASK_WAIT_MS)
    screenshot(admin, f"admin-theme-{site[0]}-{scheme}", admin.locator(NOTICE))
    screenshot(admin, f"admin-theme-{site[0]}-{scheme}-page", whole=False)
    reads_as_a_box(editing)
    reads_as_a_box(viewing)
    assert accent(editing) != accent(viewing)
    assert axe_violations(admin, NOTICE) == []


def test_a_save_since_and_its_refusal_read_well_in_the_theme(
    log_in: LogIn, site: tuple[str, str]
) -> None:
    editor, admin = log_in("editor"), log_in("admin")
    open_alice(admin)
    open_alice(editor)
    editor.fill("#id_last_name", "Liddell")
    editor.locator("[name=_continue]").click()
    expect(editor.locator("#id_last_name")).to_have_value(
        "Liddell", timeout=PAGE_WAIT_MS
    )
    saved = admin.locator(f"{NOTICE} li", has_text="editor saved this user")
    expect(saved).to_be_visible(timeout=ASK_WAIT_MS)
    reads_as_a_box(saved)
    admin.fill("#id_last_name", "Pleasance")
    admin.locator("[name=_continue]").click()
    overwrite = admin.locator(".whos-online-overwrite")
    expect(overwrite).to_be_visible(timeout=PAGE_WAIT_MS)
    # On the theme's own box of errors, in the colour it gives them.
    reads_as_a_box(overwrite, tinted=False)
    screenshot(admin, f"admin-theme-{site[0]}-refused", whole=False)
    assert axe_violations(admin, ".whos-online-overwrite") == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_staff_pages_headings_line_up_with_their_columns_in_the_theme(
    log_in: LogIn, site: tuple[str, str], scheme: str
) -> None:
    log_in("editor")
    admin = log_in("admin", color_scheme=scheme)
    admin.goto("/admin/whos_online/onlinenow/")
    table = admin.locator(".whos-online-table").first
    expect(table).to_contain_text("editor")
    starts = table.evaluate(
        """t => [...t.querySelectorAll("thead th, tbody tr:first-child td")].map(
            cell => {
                const text = document.createRange();
                text.selectNodeContents(cell);
                return Math.round(text.getBoundingClientRect().left);
            })"""
    )
    # Each heading's text starts where its column's text does.
    pairs = zip(starts[:2], starts[2:], strict=True)
    assert all(abs(heading - cell) <= 3 for heading, cell in pairs), starts
    screenshot(admin, f"admin-theme-{site[0]}-staff-{scheme}")


def test_the_staff_pages_charts_take_unfolds_primary_colour(
    log_in: LogIn, site: tuple[str, str]
) -> None:
    if site[0] != "unfold":
        pytest.skip("Unfold's colours only")
    admin = log_in("admin")
    admin.goto("/admin/whos_online/onlinenow/")
    bar = admin.locator(".whos-online-bars rect").first
    primary = admin.evaluate(
        "() => getComputedStyle(document.documentElement)"
        ".getPropertyValue('--color-primary-600')"
    )
    assert primary
    assert bar.evaluate(f"e => ({PAINT})([getComputedStyle(e).fill])") == (
        admin.evaluate(f"() => ({PAINT})([{primary!r}])")
    )
