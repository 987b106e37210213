"""What the shipped stylesheets style, and that the markup carries it.

The browser test (tests/test_browser.py) checks how it looks; these check,
without a browser, that the pages link the stylesheet, that their markup
has the classes the stylesheet styles, and that docs/styling.md names every
class and custom property.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.template import engines
from django.templatetags.static import static
from django.test import Client, RequestFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "whos_online"
STYLESHEETS = sorted((PACKAGE / "static/whos_online").glob("*.css"))
TEMPLATES = sorted((PACKAGE / "templates/whos_online").glob("*.html"))
STYLING_DOC = (ROOT / "docs/styling.md").read_text()
PAGE = "/whos-online/"


class Elements(HTMLParser):
    """Each element of a page as (tag, attributes), in document order."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {name: value or "" for name, value in attrs}))

    def with_class(self, name: str) -> list[tuple[str, dict[str, str]]]:
        return [
            (tag, attrs)
            for tag, attrs in self.found
            if name in attrs.get("class", "").split()
        ]


def stylesheets() -> str:
    """The shipped stylesheets, without their comments."""
    css = "".join(sheet.read_text() for sheet in STYLESHEETS)
    return re.sub(r"/\*.*?\*/", "", css, flags=re.S)


def declarations(selector: str) -> str:
    """Every declaration the shipped stylesheets give exactly SELECTOR,
    where it stands alone or in a list of selectors."""
    found = []
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", stylesheets()):
        if selector in (s.strip() for s in selectors.split(",")):
            found.append(body)
    return "".join(found)


def template_classes() -> set[str]:
    """The whos-online-* classes the shipped templates write out as they are
    (not those built from a variable, such as whos-online-{{ kind }})."""
    classes = set()
    for template in TEMPLATES:
        for value in re.findall(r'class="([^"]*)"', template.read_text()):
            classes.update(
                re.findall(r"(?<![\w{-])(whos-online-[a-z-]*[a-z])\b", value)
            )
    return classes


@pytest.fixture
def page_seen_by_alice(alice: User) -> Elements:
    browser = Client()
    browser.force_login(alice)
    browser.get("/forum/")  # records her, so the page lists her
    return Elements(browser.get(PAGE).content.decode())


def test_the_public_page_links_the_shipped_stylesheet(
    page_seen_by_alice: Elements,
) -> None:
    links = [attrs for tag, attrs in page_seen_by_alice.found if tag == "link"]
    stylesheet = static("whos_online/whos_online.css")
    assert {"rel": "stylesheet", "href": stylesheet} in links


def test_the_default_base_makes_the_public_page_a_styled_page(
    page_seen_by_alice: Elements,
) -> None:
    (body,) = page_seen_by_alice.with_class("whos-online-base")
    assert body[0] == "body"
    assert "font-family" in declarations(".whos-online-base")
    assert "max-width" in declarations(".whos-online-base-main")


def test_the_public_page_table_has_the_class_whose_cells_are_padded(
    page_seen_by_alice: Elements,
) -> None:
    (table,) = page_seen_by_alice.with_class("whos-online-table")
    assert table[0] == "table"
    assert "padding" in declarations(".whos-online-table th")
    assert "padding" in declarations(".whos-online-table td")


def test_the_public_page_table_header_is_ruled_off_from_its_rows() -> None:
    assert "border-bottom: 2px" in declarations(".whos-online-table thead th")


def test_the_widget_box_takes_the_page_colours_unless_told_otherwise() -> None:
    box = declarations(".whos-online")
    assert "background: var(--whos-online-background, transparent)" in box
    assert "color: var(--whos-online-text, inherit)" in box
    assert "color-scheme" not in box


def test_the_visitors_dark_preference_reaches_the_widget_only_when_asked() -> None:
    asked = declarations(':where([data-whos-online-theme="auto"]) .whos-online')
    assert "color-scheme: light dark" in asked
    assert "prefers-color-scheme" not in stylesheets()


def test_the_visibility_toggle_is_a_button_of_the_documented_class(
    alice: User,
) -> None:
    request = RequestFactory().get("/page/")
    request.user = alice
    template = engines["django"].from_string(
        "{% load whos_online %}{% whos_online_visibility %}"
    )
    toggle = Elements(template.render({"csrf_token": "t"}, request))
    buttons = toggle.with_class("whos-online-visibility-button")
    assert [button[0] for button in buttons] == ["button", "button"]
    styled = ".whos-online-visibility .whos-online-visibility-button"
    assert "border-radius" in declarations(styled)


def test_each_pill_of_the_toggle_names_its_choice(alice: User) -> None:
    request = RequestFactory().get("/page/")
    request.user = alice
    template = engines["django"].from_string(
        "{% load whos_online %}{% whos_online_visibility %}"
    )
    toggle = Elements(template.render({"csrf_token": "t"}, request))
    forms = [attrs["class"] for tag, attrs in toggle.found if tag == "form"]
    assert forms == [
        "whos-online-visibility whos-online-visibility-presence",
        "whos-online-visibility whos-online-visibility-last-seen",
    ]


def test_the_last_seen_pill_has_no_online_dot() -> None:
    """Its dot is the text colour: filled while the time is shown, hollow
    (the pressed state's rule, later and weightier) while it is hidden."""
    pill = ".whos-online-visibility .whos-online-visibility-button::before"
    last_seen = (
        ".whos-online-visibility-last-seen .whos-online-visibility-button::before"
    )
    assert "--whos-online-online" in declarations(pill)
    assert "border-color: currentColor" in declarations(last_seen)
    assert "background: currentColor" in declarations(last_seen)
    assert "--whos-online-online" not in declarations(last_seen)
    pressed = (
        '.whos-online-visibility .whos-online-visibility-button[aria-pressed="true"]'
        "::before"
    )
    assert stylesheets().index(last_seen) < stylesheets().index(pressed)


def test_a_sites_reset_of_buttons_in_its_container_does_not_strip_the_toggle() -> None:
    """A rule like Spirit's ``.spirit button { border: none; padding: 0 }``
    weighs one class and one element; the toggle's rules weigh two classes."""
    styled = ".whos-online-visibility .whos-online-visibility-button"
    assert "padding" in declarations(styled)
    assert "border:" in declarations(styled)


@pytest.mark.parametrize("name", sorted(template_classes()))
def test_every_class_the_templates_write_is_in_the_styling_page(name: str) -> None:
    assert f"`{name}`" in STYLING_DOC


@pytest.mark.parametrize(
    "name",
    sorted(set(re.findall(r"var\((--whos-online-[a-z-]+)", stylesheets()))),
)
def test_every_custom_property_the_stylesheet_reads_is_in_the_styling_page(
    name: str,
) -> None:
    assert f"`{name}`" in STYLING_DOC
