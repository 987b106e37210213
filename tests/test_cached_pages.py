"""A page any cache may keep for others is made for nobody in particular:
under ``cache_page`` no output carries its first viewer (their id, a form
of theirs, their CSRF token, their heartbeat), and the room tokens it
carries reveal nothing without the key and serve whoever reads the copy."""

from __future__ import annotations

import base64
import re
import zlib
from collections.abc import Iterator
from html import unescape as html_unescape
from urllib.parse import unquote

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from whos_online import api
from whos_online.models import Visibility
from whos_online.page import may_be_kept_for_others

pytestmark = pytest.mark.django_db

TOKENS = re.compile(r"room=([A-Za-z0-9_\-:.%]+)|data-whos-online-here=\"([^\"]+)\"")


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def carol(django_user_model: type[User]) -> User:
    """An invisible staff member, the first to open the page."""
    carol = django_user_model.objects.create_user("carol", is_staff=True)
    Visibility.objects.create(user=carol, invisible=True)
    return carol


def first_for(user: User, path: str = "/cached-thread/1/") -> str:
    client = Client()
    client.force_login(user)
    return client.get(path).content.decode()


def copy_for_a_guest(path: str = "/cached-thread/1/") -> str:
    return Client().get(path).content.decode()


def tokens(html: str) -> list[str]:
    found = [unquote(html_unescape(a or b)) for a, b in TOKENS.findall(html)]
    assert found, html
    return found


def readable(token: str) -> str:
    """What a token's payload says to someone without the key."""
    payload = token.split(":")[0]
    compressed = payload.startswith(".")
    data = base64.urlsafe_b64decode(payload.lstrip(".") + "==")
    try:
        return (zlib.decompress(data) if compressed else data).decode("latin-1")
    except zlib.error:
        return data.decode("latin-1")


def test_the_copy_carries_no_form_of_its_first_viewer(carol: User) -> None:
    first_for(carol)
    kept = copy_for_a_guest()
    assert "whos-online-visibility" not in kept
    assert 'name="invisible"' not in kept


def test_the_copy_carries_no_heartbeat_of_its_first_viewer(carol: User) -> None:
    first_for(carol)
    assert "data-whos-online-heartbeat" not in copy_for_a_guest()


def test_the_copy_carries_no_csrf_token_of_the_tags(carol: User) -> None:
    page = first_for(carol)
    ours = re.findall(r'data-whos-online-csrf="([^"]+)"', page)
    assert ours == []


def test_the_copys_room_tokens_reveal_nothing_without_the_key(carol: User) -> None:
    first_for(carol)
    for token in tokens(copy_for_a_guest()):
        said = readable(token)
        assert "thread" not in said
        assert f'"{carol.pk}"]' not in said


def test_a_room_token_reveals_nothing_on_a_page_made_for_its_viewer(
    carol: User,
) -> None:
    for token in tokens(first_for(carol, "/uncached-thread/1/")):
        said = readable(token)
        assert "thread" not in said
        assert f'"{carol.pk}"]' not in said


def test_the_copys_room_tokens_serve_whoever_reads_it(alice: User, carol: User) -> None:
    first_for(carol)
    token = tokens(copy_for_a_guest())[0]
    reader = Client()
    reader.force_login(alice)
    response = reader.get("/whos-online/widget/", {"room": token})
    assert response.status_code == 200


def test_a_token_made_for_one_user_serves_no_other(alice: User, bob: User) -> None:
    token = tokens(first_for(alice, "/uncached-thread/1/"))[0]
    other = Client()
    other.force_login(bob)
    assert other.get("/whos-online/widget/", {"room": token}).status_code == 400


def test_the_copys_tab_keeps_its_reader_in_the_room(alice: User, carol: User) -> None:
    first_for(carol)
    here = re.search(r'data-whos-online-here="([^"]+)"', copy_for_a_guest())
    assert here is not None
    reader = Client()
    reader.force_login(alice)
    reader.post("/whos-online/here/", {"tab": "tab-aaaaaaaa", "room": here[1]})
    assert api.is_viewing(alice, "thread:1")


def test_django_still_says_when_its_cache_may_keep_a_response(
    carol: User, rf: object
) -> None:
    """The one place a private attribute of Django is read: this fails if
    Django stops setting it while cache_page builds a response."""
    from django.http import HttpResponse
    from django.test import RequestFactory
    from django.views.decorators.cache import cache_page

    seen: list[bool] = []

    def view(request: object) -> HttpResponse:
        seen.append(may_be_kept_for_others(request))  # type: ignore[arg-type]
        return HttpResponse("ok")

    request = RequestFactory().get("/kept/")
    cache_page(60)(view)(request)
    view(RequestFactory().get("/not-kept/"))
    assert seen == [True, False]
