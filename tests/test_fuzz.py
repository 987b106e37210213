"""No input makes a 500: every query parameter and form field of every
endpoint of ``whos_online.urls`` (the public page among them), by GET and by
POST, from a guest, a user, an invisible user and a staff member, and the
cookies and headers every request is read with, filled by hypothesis with
what a hostile client sends: numbers past ``int()``'s 4,300 digits, digits
``int()`` does not take (``²``), NUL, very long values, negative numbers,
repeated parameters.

The runs are derandomized and keep no example database, so CI runs the same
examples every time; to look further, raise ``max_examples`` and drop
``derandomize`` for a run of your own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_django.fixtures import Settings as SettingsWrapper

from whos_online import urls
from whos_online.conf import get_config
from whos_online.models import Visibility
from whos_online.tokens import room_token

pytestmark = pytest.mark.django_db

PACKAGE = Path(__file__).resolve().parent.parent / "whos_online"

# Each endpoint's query parameters and form fields, by URL name: every one
# its view reads (the two tests below keep this table whole).
FIELDS: dict[str, list[str]] = {
    "page": ["sort", "show", "page", "per"],
    "json": ["room"],
    "widget": ["room"],
    "heartbeat": [],
    "beacon": ["room", "widgets"],
    "here": ["tab", "room", "leave"],
    "stream": ["room"],
    "decorate": ["path", "room"],
    "visibility": ["invisible", "hide_last_seen", "next"],
}
# The modules whose views read them.
READERS = ["views.py", "board.py"]

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    # The clients and users are made once a test; the examples share them,
    # as a site's visitors share it.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Text a client can send: any character UTF-8 encodes (not a lone surrogate).
ANY_TEXT = st.text(st.characters(codec="utf-8"), max_size=20)
HOSTILE = st.one_of(
    # Past int()'s limit of 4,300 digits, with and without a sign.
    st.builds(
        lambda sign, n: sign + "9" * n,
        st.sampled_from(["", "-", "+", "0"]),
        st.integers(4_290, 5_000),
    ),
    st.integers().map(str),  # negative ones among them
    st.integers(-(10**40), 10**40).map(str),
    # Digits isdigit() takes and int() may not: superscripts, other scripts,
    # fullwidth; and numbers that are no whole number.
    st.sampled_from(["²", "¹²³", "١٢", "１", "߁", "٣", "Ⅻ", "½", "𝟗", "1²"]),
    st.sampled_from(["1.5", "1e9", "0x1f", "NaN", "inf", "-0", " 1", "1 ", "٫"]),
    st.sampled_from(["\x00", "1\x00", "%00", "\r\n", "\u202e", "\ufeff1"]),
    st.integers(10_000, 60_000).map(lambda n: "x" * n),  # very long
    st.integers(100, 2_000).map(lambda n: "1" * n),
    # What a well-behaved client sends, and next= as an attacker would.
    st.sampled_from(
        ["", "0", "1", "2", "seen", "name", "where", "all", "users", "crawlers"]
    ),
    st.sampled_from(["tab-aaaaaaaa", "t0123456789abcdef01234567", "a" * 64]),
    # Paths a page's links have, and what else a path can be.
    st.sampled_from(
        ["/people/1/", "/people/1/x/", "/u/%FF/", "/u/%C3%B6/", "/people/"]
    ),
    st.sampled_from(["/people/" + "9" * 40 + "/", "/thread/1/", "/forum/1/", "//"]),
    st.sampled_from(
        ["/", "/forum/", "//evil.example/", "http://testserver/x", "javascript:x"]
    ),
    st.sampled_from(["http://[", "/\\evil.example", "\x00/", "/a\nb", "/%0d%0a"]),
    ANY_TEXT,
)
# Raw query strings, as Django reads them: bad escapes, empty names, NUL.
RAW_QUERY = st.text(st.sampled_from("%&=;+ab09fF\x00²"), max_size=40)


def on_the_wire(text: str) -> str:
    """``text`` as a WSGI server hands a header on: its UTF-8 bytes, one
    character a byte."""
    return text.encode().decode("latin-1")


def asks(
    fields: list[str], tokens: list[str]
) -> st.SearchStrategy[dict[str, list[str]]]:
    """Any of ``fields`` (and some names of no field), each sent once or
    more, with hostile values, valid room tokens among them."""
    value = st.one_of(HOSTILE, st.sampled_from(tokens))
    names = st.one_of(st.sampled_from(fields), ANY_TEXT) if fields else ANY_TEXT
    return st.dictionaries(names, st.lists(value, min_size=1, max_size=3), max_size=4)


@pytest.fixture(autouse=True)
def decorating(settings: SettingsWrapper) -> None:
    """Links to profiles get badges (decorate/), by pk and by username."""
    settings.WHOS_ONLINE_DECORATE = {
        "profiles": {"profile": "pk", "profile-by-name": "username"}
    }


@pytest.fixture
def viewers(django_user_model: type[User]) -> dict[str, Client]:
    """A guest, a user, a user who appears offline and a staff member, each
    a browser of their own."""
    clients = {"guest": Client()}
    for name, staff in (("user", False), ("invisible", False), ("staff", True)):
        client = Client()
        user = django_user_model.objects.create_user(name, is_staff=staff)
        client.force_login(user)
        clients[name] = client
        if name == "invisible":
            Visibility.objects.create(user=user, invisible=True)
    return clients


def tokens_for(viewers: dict[str, Client]) -> list[str]:
    """A room token for each viewer: each valid for one, refused to others."""
    users = {user.username: user for user in User.objects.all()}
    return [room_token("thread:1", users.get(name)) for name in sorted(viewers)]


def read_fields() -> set[str]:
    """Every query parameter and form field the views read, by their source."""
    reading = re.compile(
        r"""(?:\b(?:GET|POST|asked)(?:\.get(?:list)?\(|\[)|\bin\s+request\.(?:GET|POST)\b)"""
    )
    named = re.compile(
        r"""(?:(?:GET|POST|asked)(?:\.get(?:list)?\(|\[)"(\w+)"|"(\w+)"\s+in\s+request\.(?:GET|POST))"""
    )
    found: set[str] = set()
    for module in READERS:
        source = (PACKAGE / module).read_text()
        assert len(reading.findall(source)) == len(named.findall(source)), (
            f"{module} reads a field by a name this test cannot see"
        )
        found |= {a or b for a, b in named.findall(source)}
    return found


def test_every_endpoint_is_fuzzed() -> None:
    assert sorted(FIELDS) == sorted(str(url.name) for url in urls.urlpatterns)


def test_every_field_a_view_reads_is_fuzzed() -> None:
    fuzzed = {field for fields in FIELDS.values() for field in fields}
    assert read_fields() == fuzzed


@FUZZ
@given(data=st.data())
def test_no_query_or_form_makes_a_server_error(
    viewers: dict[str, Client], data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(FIELDS)), label="endpoint")
    client = viewers[data.draw(st.sampled_from(sorted(viewers)), label="viewer")]
    tokens = tokens_for(viewers)
    query = data.draw(asks(FIELDS[name], tokens), label="query")
    raw = data.draw(st.none() | RAW_QUERY, label="raw query string")
    extra: dict[str, Any] = {} if raw is None else {"QUERY_STRING": on_the_wire(raw)}
    path = reverse(f"whos_online:{name}")
    if data.draw(st.booleans(), label="POST"):
        form = data.draw(asks(FIELDS[name], tokens), label="form")
        url = f"{path}?{urlencode(query, doseq=True)}" if query else path
        if data.draw(st.booleans(), label="urlencoded"):
            body = urlencode(form, doseq=True)
            kind = "application/x-www-form-urlencoded"
            response = client.post(url, body, content_type=kind, **extra)
        else:
            response = client.post(url, form, **extra)
    else:
        response = client.get(path, query, **extra)
    assert response.status_code < 500


HEADERS = [
    "HTTP_USER_AGENT",
    "HTTP_X_FORWARDED_FOR",
    "HTTP_X_REQUESTED_WITH",
    "HTTP_HX_REQUEST",
    "HTTP_SEC_FETCH_DEST",
    "HTTP_HOST",
    "REMOTE_ADDR",
]
ADDRESSES = st.sampled_from(
    ["203.0.113.7", "::ffff:192.0.2.1", "fe80::1%eth0", "2001:db8::1", "10.0.0.1"]
)
# Pages of the app's endpoints and of the site, each through the middleware,
# with what they are sent: (method, path, form).
PAGES: list[tuple[str, str, dict[str, Any]]] = [
    ("get", "/", {}),
    ("get", "/forum/", {}),
    ("get", "/thread/1/", {}),
    ("get", "/whos-online/", {}),
    ("get", "/whos-online/online.json", {}),
    ("get", "/whos-online/widget/", {}),
    ("post", "/whos-online/heartbeat/", {}),
    ("post", "/whos-online/beacon/", {"widgets": "1"}),
    ("post", "/whos-online/decorate/", {"path": ["/thread/1/", "/people/1/"]}),
    ("post", "/whos-online/visibility/", {"hide_last_seen": "0", "next": "/"}),
]


@pytest.fixture
def behind_a_proxy(settings: SettingsWrapper) -> None:
    """X-Forwarded-For is read, from one proxy."""
    settings.WHOS_ONLINE_PROXY_COUNT = 1


@FUZZ
@given(data=st.data())
@pytest.mark.usefixtures("behind_a_proxy")
def test_no_cookie_or_header_makes_a_server_error(
    viewers: dict[str, Client], data: st.DataObject
) -> None:
    method, path, form = data.draw(st.sampled_from(PAGES), label="page")
    client = viewers[data.draw(st.sampled_from(sorted(viewers)), label="viewer")]
    value = st.one_of(HOSTILE, ADDRESSES, ADDRESSES.map(lambda a: f"{a}, " * 3))
    headers = data.draw(st.dictionaries(st.sampled_from(HEADERS), value), "headers")
    # The guard and session cookies as the browser has them, or as it forges
    # them; sent as one Cookie header, which may say anything.
    session = django_settings.SESSION_COOKIE_NAME
    guard = get_config().guard_cookie_name
    kept = {
        name: morsel.value
        for name, morsel in client.cookies.items()
        if name in (session, guard)
    }
    cookies = data.draw(
        st.dictionaries(st.sampled_from([session, guard]), HOSTILE),
        label="cookies",
    )
    sent = "; ".join(f"{k}={v}" for k, v in {**kept, **cookies}.items())
    if data.draw(st.booleans(), label="raw Cookie header"):
        sent = data.draw(HOSTILE, label="Cookie")
    environ: dict[str, Any] = {k: on_the_wire(v) for k, v in headers.items()}
    send = client.post if method == "post" else client.get
    response = send(path, form, HTTP_COOKIE=on_the_wire(sent), **environ)
    assert response.status_code < 500
