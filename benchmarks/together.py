"""What presence where people work together costs (issue 27), each case
timed beside its floor on the same middleware stack:

- a listing of 50 rows, each with how many are viewing it
  (``{% room_counts %}``), beside the same 50 rows without;
- an admin change form with "who else is editing" (``ConcurrentEditingMixin``,
  three other staff on it, one editing), beside Django's own change form of
  the same object;
- an ask of that open form (its script's POST every few seconds), beside a
  bare request of the same staff member.

Each is also counted in Redis round trips and SQL queries, once.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from benchmarks.bench import beside, environ, log, sent, start_response
from benchmarks.figures import World, rounds
from benchmarks.project import CSRF, EDITED_GROUP, ROWS
from benchmarks.report import ASK, DJANGOS_FORM, FORM, LISTING, PLAIN_ROWS
from whos_online import editing

STAFF_ADDRESS = "198.51.100.20"


def costs(world: World, n_rounds: int, block: int) -> dict[str, Any]:
    """µs each page adds over an empty page of the same staff member, per
    round; the round trips and queries of each, counted once."""
    ours = world.sites["ours"]
    staff = _staff_session(world)
    for n in range(1, ROWS + 1, 3):  # readers in some of the rows
        world.issue(f"203.0.113.{n}", {}, f"/thread/{n}/")
    group, _ = Group.objects.get_or_create(pk=EDITED_GROUP, name="Editors")
    _others_on_the_form(group.pk)
    form = f"/auth/group/{group.pk}/change/"
    presence = f"/editing-admin/auth/group/{group.pk}/presence/"
    asked = staff | {"csrftoken": CSRF}
    admin = get_user_model().objects.get(username="bench-admin")
    mark = editing.form_mark(admin, group, editing.new_tab())
    pages: dict[str, Callable[[], dict[str, Any]]] = {
        LISTING: lambda: environ("/topics/", STAFF_ADDRESS, staff),
        PLAIN_ROWS: lambda: (
            environ("/topics/", STAFF_ADDRESS, staff) | {"QUERY_STRING": "plain=1"}
        ),
        FORM: lambda: environ(f"/editing-admin{form}", STAFF_ADDRESS, staff),
        DJANGOS_FORM: lambda: environ(f"/admin{form}", STAFF_ADDRESS, staff),
        ASK: lambda: _asking(presence, asked, mark),
    }
    cases = {
        name: lambda page=page: beside(
            ours,
            ours,
            [(page(), environ("/", STAFF_ADDRESS, staff)) for _ in range(block)],
        )
        for name, page in pages.items()
    }
    for name, page in pages.items():  # a page that fails would cost less
        status = _status(ours, page())
        if not status.startswith("200"):
            raise RuntimeError(f"{name}: {status}")
    for case in cases.values():  # warm
        case()
    log(f"working together: {', '.join(cases)}")
    raw = rounds(cases, n_rounds)
    counted = {name: _counted(world, page()) for name, page in pages.items()}
    return {"raw": raw, "counted": counted}


def _asking(path: str, cookies: dict[str, str], mark: str) -> dict[str, Any]:
    """An ask of the form's script: a POST of its mark (its tab)."""
    request = environ(path, STAFF_ADDRESS, cookies, post=True, csrf=CSRF)
    body = urlencode({"opened": mark}).encode()
    request["wsgi.input"] = io.BytesIO(body)
    request["CONTENT_LENGTH"] = str(len(body))
    request["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
    return request


def _status(site: Any, request: dict[str, Any]) -> str:
    site(request)
    return str(getattr(start_response, "status", ""))


def _staff_session(world: World) -> dict[str, str]:
    model = get_user_model()
    admin = model.objects.create_superuser("bench-admin", "b@example.com", "pw")
    client = Client()
    client.force_login(admin)
    session = {"sessionid": client.cookies["sessionid"].value}
    return world.issue(STAFF_ADDRESS, session)


def _others_on_the_form(pk: int) -> None:
    """Three other staff members on the form, the first with changes."""
    model = get_user_model()
    for n in range(3):
        other = model.objects.create_superuser(f"bench-editor-{n}", "", "pw")
        client = Client(REMOTE_ADDR=f"198.51.100.{30 + n}")
        client.force_login(other)
        group = Group.objects.get(pk=pk)
        data = {"opened": editing.form_mark(other, group, editing.new_tab())}
        if n == 0:
            data["editing"] = "1"
        client.post(f"/editing-admin/auth/group/{pk}/presence/", data)


def _counted(world: World, request: dict[str, Any]) -> dict[str, int]:
    """Redis round trips and commands, and SQL queries, of one request."""
    with (
        sent() as names,
        _round_trips() as trips,
        CaptureQueriesContext(connection) as queries,
    ):
        world.sites["ours"](request)
    return {
        "round_trips": trips[0],
        "commands": sum(names.values()),
        "queries": len(queries),
    }


@contextmanager
def _round_trips() -> Iterator[list[int]]:
    """How many times this process writes to Redis meanwhile: one command
    or one whole pipeline each, each answered before the next."""
    from redis.connection import AbstractConnection

    trips, packed = [0], AbstractConnection.send_packed_command

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        trips[0] += 1
        packed(self, *args, **kwargs)

    AbstractConnection.send_packed_command = counting  # type: ignore[method-assign]
    try:
        yield trips
    finally:
        AbstractConnection.send_packed_command = packed  # type: ignore[method-assign]
