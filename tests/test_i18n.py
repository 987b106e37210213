"""The widget and the staff page in German, French, Spanish, Brazilian
Portuguese and Russian: whole translated sentences, each language's plurals,
"just now", and the widget's translated title."""

from __future__ import annotations

import ast
import gettext
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.template import engines
from django.test import Client
from django.utils import translation
from pytest_django.fixtures import Settings as SettingsWrapper

from tests import presence
from tests.conftest import Clock

pytestmark = pytest.mark.django_db

LOCALE = Path(__file__).resolve().parent.parent / "whos_online" / "locale"
LANGUAGES = ["de", "es", "fr", "pt-br", "ru"]
STAFF_PAGE = "/admin/whos_online/onlinenow/"

# With two guests online and nobody else: the widget's title, its count
# sentence and its window sentence, as each language writes them.
TWO_GUESTS = {
    "de": [
        "Wer ist online",
        "2 Besucher online",
        "2 Gäste",
        "0 Benutzer",
        "Berücksichtigt sind Besucher, die in den letzten 15 Minuten aktiv waren.",
    ],
    "es": [
        "Quién está en línea",
        "2 visitantes en línea",
        "2 invitados",
        "0 usuarios",
        "Según los visitantes activos en los últimos 15 minutos.",
    ],
    "fr": [
        "Qui est en ligne",
        "2 visiteurs en ligne",
        "2 invités",
        "0 utilisateur",
        "D’après les visiteurs actifs au cours des 15 dernières minutes.",
    ],
    "pt-br": [
        "Quem está online",
        "2 visitantes online",
        "2 convidados",
        "0 usuário",
        "Com base nos visitantes ativos nos últimos 15 minutos.",
    ],
    "ru": [
        "Кто на сайте",
        "2 посетителя на сайте",
        "2 гостя",
        "0 пользователей",
        "Учтены посетители, активные за последние 15 минут.",
    ],
}

# The same count in each plural form a language has.
GUESTS = [
    ("de", 1, "1 Gast"),
    ("de", 2, "2 Gäste"),
    ("es", 1, "1 invitado"),
    ("es", 2, "2 invitados"),
    # French and Brazilian Portuguese use the singular for 0 and 1.
    ("fr", 0, "0 invité"),
    ("fr", 1, "1 invité"),
    ("fr", 2, "2 invités"),
    ("pt-br", 0, "0 convidado"),
    ("pt-br", 2, "2 convidados"),
    # Russian: one form for 1, 21, …; one for 2–4, 22–24, …; one for the rest.
    ("ru", 1, "1 гость"),
    ("ru", 2, "2 гостя"),
    ("ru", 5, "5 гостей"),
    ("ru", 11, "11 гостей"),
    ("ru", 21, "21 гость"),
    ("ru", 22, "22 гостя"),
]

# The staff page: the count sentence, a table heading and "just now".
STAFF = {
    "de": [
        "1 Besucher online",
        "Zuletzt gesehen",
        "(gerade eben)",
        "Online in den letzten 24 Stunden",
    ],
    "es": [
        "1 visitante en línea",
        "Visto por última vez",
        "(ahora mismo)",
        "En línea en las últimas 24 horas",
    ],
    "fr": [
        "1 visiteur en ligne",
        "Vu pour la dernière fois",
        "(à l’instant)",
        "En ligne au cours des dernières 24 heures",
    ],
    "pt-br": [
        "1 visitante online",
        "Visto por último",
        "(agora mesmo)",
        "Online nas últimas 24 horas",
    ],
    "ru": [
        "1 посетитель на сайте",
        "Последняя активность",
        "(только что)",
        "На сайте за последние 24 часа",
    ],
}

# Three guests on a site whose sets keep two: the estimated count sentence.
ABOUT_THREE_GUESTS = {
    "de": ["etwa 3 Besucher online", "etwa 3 Gäste"],
    "es": ["unos 3 visitantes en línea", "unos 3 invitados"],
    "fr": ["environ 3 visiteurs en ligne", "environ 3 invités"],
    "pt-br": ["cerca de 3 visitantes online", "cerca de 3 convidados"],
    "ru": ["около 3 посетителей на сайте", "около 3 гостей"],
}

# Cookies five minutes ago, on the staff page.
FIVE_MINUTES_AGO = {
    "de": "vor 5 Minuten",
    "es": "hace 5 minutos",
    "fr": "il y a 5 minutes",
    "pt-br": "há 5 minutos",
    "ru": "5 минут назад",
}


class TextOf(HTMLParser):
    """The text a reader sees: no tags, attributes, scripts or styles."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.skipping += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.skipping -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def text_of(html: str) -> str:
    parser = TextOf()
    parser.feed(html)
    return " ".join("".join(parser.parts).split())


def render(source: str = "{% whos_online %}", language: str = "en") -> str:
    template = engines["django"].from_string("{% load whos_online %}" + source)
    with translation.override(language):
        return text_of(template.render({}))


def guests(count: int) -> None:
    for n in range(count):
        presence.record_guest(f"192.0.2.{n}")


def staff_page(client: Client, language: str) -> str:
    with translation.override(language):
        response = client.get(STAFF_PAGE)
    assert response.status_code == 200
    return text_of(response.content.decode())


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_widget_speaks_each_language(language: str) -> None:
    guests(2)
    text = render(language=language)
    for sentence in TWO_GUESTS[language]:
        assert sentence in text


@pytest.mark.parametrize(("language", "count", "expected"), GUESTS)
def test_counts_take_each_languages_plural_forms(
    language: str, count: int, expected: str
) -> None:
    guests(count)
    assert expected in render(language=language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_estimated_count_says_about_in_each_language(
    language: str, settings: SettingsWrapper, clock: Clock
) -> None:
    settings.WHOS_ONLINE_MAX_MEMBERS = 2
    guests(3)
    clock.advance(60)  # the next minute's first record counts the minute
    presence.record_guest("192.0.2.1")
    text = render("{% whos_online %} {% online_count %}", language=language)
    for sentence in ABOUT_THREE_GUESTS[language]:
        assert sentence in text
    assert text.endswith(ABOUT_THREE_GUESTS[language][0].split(" 3 ")[0] + " 3")


def test_russian_counts_visitors_in_three_forms() -> None:
    guests(1)
    assert "1 посетитель на сайте" in render(language="ru")
    guests(3)
    assert "3 посетителя на сайте" in render(language="ru")
    guests(5)
    assert "5 посетителей на сайте" in render(language="ru")


def test_no_english_is_left_in_the_german_widget(
    settings: SettingsWrapper, django_user_model: type[User]
) -> None:
    settings.WHOS_ONLINE_MAX_NAMES = 2
    settings.WHOS_ONLINE_PUBLIC_HIDDEN_COUNT = "separate"
    for name in ("anna", "bernd", "clara", "emil"):
        presence.record_user(django_user_model.objects.create_user(name).pk)
    presence.record_user(django_user_model.objects.create_user("dora").pk, hidden=True)
    guests(2)
    presence.record("bots", "Googlebot")
    presence.record("bots", "Irgendein Bot")
    text = render(language="de")
    assert re.search(r"\w+, \w+ und 2 weitere ", text)
    assert "Crawler: Googlebot, 1 weiterer Crawler" in text
    assert "1 verborgener Benutzer" in text
    assert "Höchststand: 7 online am " in text
    for english in (
        " and ",
        "more",
        "visitor",
        "guest",
        "user",
        "hidden",
        "Crawlers",
        "Most ever",
        "Based on",
        "minutes",
        " on ",
    ):
        assert english not in text


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_staff_page_speaks_each_language(
    admin_client: Client, language: str
) -> None:
    text = staff_page(admin_client, language)  # the admin reading it is online
    for sentence in STAFF[language]:
        assert sentence in text


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_staff_page_says_how_many_minutes_ago_in_each_language(
    admin_client: Client,
    alice: User,
    language: str,
    seen_ago: Callable[[str, str, float], None],
) -> None:
    seen_ago("users", str(alice.pk), 5 * 60 + 10)
    assert FIVE_MINUTES_AGO[language] in staff_page(admin_client, language)


def test_a_visitor_seen_seconds_ago_was_seen_just_now(
    admin_client: Client, alice: User, seen_ago: Callable[[str, str, float], None]
) -> None:
    seen_ago("users", str(alice.pk), 20)
    text = staff_page(admin_client, "en")
    assert "alice" in text
    assert "(just now)" in text
    assert "0 minutes" not in text


def test_a_visitor_seen_a_minute_ago_was_seen_1_minute_ago(
    admin_client: Client, alice: User, seen_ago: Callable[[str, str, float], None]
) -> None:
    seen_ago("users", str(alice.pk), 61)
    assert "(1 minute ago)" in staff_page(admin_client, "en")


def test_russian_minutes_ago_take_the_right_case(
    admin_client: Client,
    django_user_model: type[User],
    seen_ago: Callable[[str, str, float], None],
) -> None:
    for minutes in (1, 2, 11):
        user = django_user_model.objects.create_user(f"user{minutes}")
        seen_ago("users", str(user.pk), minutes * 60 + 10)
    text = staff_page(admin_client, "ru")
    assert "(1 минуту назад)" in text
    assert "(2 минуты назад)" in text
    assert "(11 минут назад)" in text


def test_minutes_since_counts_whole_minutes_to_now() -> None:
    template = engines["django"].from_string(
        "{% load whos_online %}{{ when|minutes_since }}"
    )
    when = datetime.now(timezone.utc) - timedelta(minutes=3, seconds=50)
    assert template.render({"when": when}) == "3"


def test_minutes_since_a_time_ahead_of_now_is_0() -> None:
    template = engines["django"].from_string(
        "{% load whos_online %}{{ when|minutes_since:now }}"
    )
    now = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
    assert template.render({"when": now + timedelta(seconds=5), "now": now}) == "0"


def test_minutes_since_never_is_none() -> None:
    template = engines["django"].from_string(
        "{% load whos_online %}{% if when|minutes_since is None %}never{% endif %}"
    )
    assert template.render({"when": None}) == "never"


@pytest.mark.parametrize(
    ("source", "language", "expected"),
    [
        (
            "{% whos_online %}",
            "en",
            '<h2 class="whos-online-heading">Who\'s online</h2>',
        ),
        (
            "{% whos_online heading=3 %}",
            "de",
            '<h3 class="whos-online-heading">Wer ist online</h3>',
        ),
        (
            '{% whos_online room="thread:1" %}',
            "en",
            '<h2 class="whos-online-heading">Who\'s here</h2>',
        ),
        (
            '{% whos_online room="thread:1" %}',
            "ru",
            '<h2 class="whos-online-heading">Кто здесь</h2>',
        ),
    ],
)
def test_the_widget_has_a_translated_heading(
    source: str, language: str, expected: str
) -> None:
    template = engines["django"].from_string("{% load whos_online %}" + source)
    with translation.override(language):
        html = template.render({})
    assert expected in html


@pytest.mark.parametrize("heading", [0, 7])
def test_heading_0_leaves_the_heading_to_the_page(heading: int) -> None:
    template = engines["django"].from_string(
        f"{{% load whos_online %}}{{% whos_online heading={heading} %}}"
    )
    html = template.render({})
    assert "whos-online-heading" not in html
    assert 'aria-label="Who\'s online"' in html


def test_the_count_sentence_is_the_widgets_only_live_region() -> None:
    template = engines["django"].from_string("{% load whos_online %}{% whos_online %}")
    html = template.render({})
    assert html.count("aria-live") == 1
    assert re.search(r'<p class="whos-online-counts" aria-live="polite"[^>]*>0 ', html)


# The compiled catalogs: present, and compiled from the .po files as they are.


def catalog_of(po: Path) -> dict[str | tuple[str, int], str]:
    """The translations of a .po file, keyed as Python's gettext keys a .mo."""
    entries: list[dict[str, str]] = []
    field = ""
    for line in po.read_text().splitlines():
        if line.startswith("msgctxt") or (line.startswith("msgid ") and field != "ctx"):
            entries.append({})
        if line.startswith(("msgctxt", "msgid", "msgstr")):
            field, _, line = line.partition(" ")
            field = "ctx" if field == "msgctxt" else field
        if line.startswith('"'):
            entry = entries[-1]
            entry[field] = entry.get(field, "") + ast.literal_eval(line)
    catalog: dict[str | tuple[str, int], str] = {}
    for entry in entries:
        key = entry["msgid"]
        if "ctx" in entry:
            key = f"{entry['ctx']}\x04{key}"
        if "msgid_plural" in entry:
            for name, value in entry.items():
                if name.startswith("msgstr["):
                    catalog[(key, int(name[7:-1]))] = value
        else:
            catalog[key] = entry["msgstr"]
    return catalog


@pytest.mark.parametrize("language", ["de", "es", "fr", "pt_BR", "ru"])
def test_each_language_ships_a_compiled_catalog_of_its_po_file(
    language: str,
) -> None:
    folder = LOCALE / language / "LC_MESSAGES"
    with (folder / "django.mo").open("rb") as mo:
        compiled = gettext.GNUTranslations(mo)
    translated = catalog_of(folder / "django.po")
    assert all(translated.values()), f"{language}: untranslated messages"
    # Both without the header, of which msgfmt leaves out the creation date.
    assert {**compiled._catalog, "": ""} == {**translated, "": ""}  # type: ignore[attr-defined]


def test_russian_has_three_plural_forms() -> None:
    with (LOCALE / "ru" / "LC_MESSAGES" / "django.mo").open("rb") as mo:
        russian = gettext.GNUTranslations(mo)
    forms = [
        russian.ngettext("%(counter)s guest", "%(counter)s guests", n)
        for n in (1, 3, 7)
    ]
    assert forms == ["%(counter)s гость", "%(counter)s гостя", "%(counter)s гостей"]


STATUS_WORDS = {
    "de": ("online", "abwesend", "offline"),
    "es": ("en línea", "ausente", "sin conexión"),
    "fr": ("en ligne", "absent", "hors ligne"),
    "pt-br": ("online", "ausente", "offline"),
    "ru": ("в сети", "нет на месте", "не в сети"),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_presence_list_rows_say_their_status_in_each_language(
    language: str, alice: User, bob: User, django_user_model: type[User]
) -> None:
    carol = django_user_model.objects.create_user("carol")
    presence.record_user(alice.pk)
    with translation.override(language):
        html = (
            engines["django"]
            .from_string(
                "{% load whos_online %}{% presence_list users as rows %}"
                "{% for row in rows %}{{ row.status }}={{ row.label }};{% endfor %}"
            )
            .render({"users": [alice, bob, carol]})
        )
    online, _, offline = STATUS_WORDS[language]
    assert html == f"online={online};offline={offline};offline={offline};"


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_away_users_row_says_away_in_each_language(
    language: str, alice: User, clock: Clock
) -> None:
    presence.record_user(alice.pk)
    clock.advance(6 * 60)
    with translation.override(language):
        html = (
            engines["django"]
            .from_string(
                "{% load whos_online %}{% presence_list users as rows %}"
                "{{ rows.0.label }}"
            )
            .render({"users": [alice]})
        )
    assert html == STATUS_WORDS[language][1]


@pytest.mark.parametrize("language", ["de", "es", "fr", "pt-br", "ru"])
def test_the_last_seen_words_and_choices_are_translated(language: str) -> None:
    from whos_online.gate import grade_label
    from whos_online.statuses import STATUS_LABELS

    with translation.override(language):
        said = [
            grade_label("within-a-week"),
            str(STATUS_LABELS["unknown"]),
            translation.gettext("Hide when I was last seen"),
        ]
    assert "last seen within a week" not in said
    assert "not shown" not in said
    assert "Hide when I was last seen" not in said
