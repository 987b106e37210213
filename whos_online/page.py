"""One object per request for what it learns of presence:
``request.whos_online``, a :class:`Page`, the way django-htmx hangs
``request.htmx`` on the request.

It is what the cookies say (:class:`~whos_online.seen.Cookies`: the
session key, the guard, whether it spares the request a record), and,
worked out when first asked, the request's
:class:`~whos_online.visitors.Visit` (who the visitor is, what was recorded
of them), who the page is made for and their
:class:`~whos_online.gate.Gate`, the page's snapshots (so the widget,
counts and badges of one page cost one round trip), the badges' statuses,
the rooms its templates name, and whether anything made for this viewer
alone was shown (the middleware then marks the response private).

It is made lazily: by the middleware when a record may be due, else by the
first output that asks (:func:`of`). A request whose guard holds
(:func:`~whos_online.seen.remembered`, :func:`~whos_online.seen.judge`)
and whose page asks nothing of presence builds none.

It decides what the middleware does, for WSGI and ASGI alike:
:func:`arrive` before the view (nothing more when the guard holds, else
the page made and :meth:`Page.before_view` to run) and :func:`leave` after
it (:func:`is_quiet`, then :func:`nothing_to_write` on the guarded path, else
:meth:`Page.writes_after`), so a request goes down the layers: the page,
its visitor, the cookies and the page's marks, the store.

The badge filters see no context, so the middleware also says which
request is being served, in a context variable (:data:`SERVING`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest, HttpResponseBase
from django.urls import NoReverseMatch, reverse
from django.utils.cache import patch_cache_control, patch_vary_headers

from whos_online.gate import Gate
from whos_online.guard import Guard
from whos_online.marks import (
    answered,
    is_page_opened,
    kept_marks,
    knows,
    moved,
    page_marks,
    path_key,
    rooms_mark,
)
from whos_online.seen import (
    Cookies,
    Verdict,
    is_held,
    judge,
    remembered,
    session_changed,
    session_key_of,
)
from whos_online.store import Snapshot, Store, get_store
from whos_online.visibility import Choices
from whos_online.visitors import Visit

ATTRIBUTE = "whos_online"


class Page(Cookies):
    """What one request's page learns of presence: what its cookies say,
    read when it is made, and the rest worked out when first asked."""

    visit: Visit | None = None
    """The visitor and what was recorded of them, once asked."""
    choices: Choices | None = None
    """What the users the page's snapshot lists as visible chose (the
    database's word), once asked."""
    refused: frozenset[str] = frozenset()
    """Which of them the site's rule keeps from this viewer, asked with
    their choices."""
    personal = False
    """Whether this page showed anything made for its viewer alone."""
    named_rooms: AbstractSet[str] = frozenset()
    """The rooms the page's templates named by instance."""

    @functools.cached_property
    def snapshots(self) -> dict[tuple[str | None, bool], tuple[int, Snapshot]]:
        """(room, with hidden users) -> (names listed, snapshot)."""
        return {}

    @functools.cached_property
    def badges(self) -> dict[str, Any]:
        """User key -> their status as this page shows it."""
        return {}

    @functools.cached_property
    def viewer(self) -> Any:
        """Who the page is made for: the request's user, or nobody in
        particular (``None``) when Django's cache may keep the response for
        others (``cache_page``, the cache middleware). Every output asks
        this, never ``request.user``."""
        if may_be_kept_for_others(self.request):
            return None
        return getattr(self.request, "user", None)

    @functools.cached_property
    def gate(self) -> Gate:
        """The viewer's gate (an anonymous viewer's for nobody in
        particular)."""
        return Gate(self.viewer)

    def gate_used(self) -> Gate:
        """The gate, for an output about to be shown: noted, so a response
        made for this viewer alone is marked private."""
        gate = self.gate
        self.personal = self.personal or gate.personal
        return gate

    def visit_of(self) -> Visit:
        """The request's visit, made now if it was not."""
        if self.visit is None:
            self.visit = Visit(self)
        return self.visit

    def rooms(self) -> AbstractSet[str]:
        """Every room the page is in, so far: by its view or URL name, and
        those its templates named."""
        room = page_marks(self.request, self.store).room
        named = self.named_rooms
        return named if room is None else named | {room}

    def before_view(self) -> Visit:
        """For a request no guard spares a record by what the process knows
        (:func:`~whos_online.seen.judge`): ask Redis' clock if the guard may
        hold after all, else record the visitor."""
        heartbeat = is_heartbeat(self.request)
        visit = self.visit_of()
        if visit.guard is not None:
            self.store.catch_up(visit.guard.data_label)
        if not heartbeat and not visit.is_guarded:
            visit.record()
        return visit

    def writes_after(
        self, response: HttpResponseBase, visit: Visit | None
    ) -> Callable[[], None] | None:
        """What the view's answer leaves to write, as one call (a thread's,
        under ASGI); ``None`` when it leaves nothing, as on the guarded path:
        a visitor just recorded (their guard, their location), a new
        identity, a user who moved to a page with another location, the
        rooms of a page a browser opened, a peak a snapshot saw."""
        request, store, found = self.request, self.store, self.guard
        records = (
            visit is not None
            and visit.stamp is not None
            or session_changed(request, self.session_key)
            or found is not None
            and not found.is_guests
            and answered(response)
            and moved(request, found, page_marks(request, store))
        )
        rooms = self.rooms_to_enter(response)
        peak = store.has_peak_to_keep
        if not records and rooms is None and not peak:
            return None

        def write() -> None:
            if records:
                self.visit_of().after_view(response)
            if rooms is not None:
                visit = self.visit_of()
                visit.enter_rooms(rooms)
                visit.note_rooms(rooms, response)
            if peak:
                store.keep_peak_seen()

        return write

    def rooms_to_enter(self, response: HttpResponseBase) -> AbstractSet[str] | None:
        """After the view: the rooms a page a browser opened (answered 2xx)
        puts its device in (none: it leaves those of its page before), or
        ``None`` when nothing is to be written: their guard holds and says
        they were recorded in these very rooms lately (a guarded page of the
        same rooms costs nothing, and so does a page in no room after one in
        no room). Reads nothing but the request and what its cookies said,
        so the middleware asks it on every request before it hands anything
        to a thread."""
        # Before anything is kept of the path: a page that does not exist
        # costs nobody else anything.
        if not answered(response):
            return None
        mark = page_marks(self.request, self.store).rooms
        if self.named_rooms:  # rooms named by the templates too
            mark = rooms_mark(self.rooms())
        before = "" if self.guard is None else self.guard.rooms
        if mark == before and (self.guarded or not mark):
            return None  # the guarded path: nothing else is read
        if not is_page_opened(self.request, response):
            return None
        return self.rooms()


Arrival = tuple[Store, "Verdict | None", str, "Callable[[], Visit] | None"]
"""What :func:`arrive` found: the store, the guard's verdict if it spares
the request a record, the session key the request came with, and the work
to do before the view, if any."""


def arrive(request: HttpRequest) -> Arrival | None:
    """Before the view, as both the sync and the async middleware run it
    (they only call or await what these functions decide): ``None`` when the
    app is not set up to record anyone."""
    store = get_store()
    if store.config.problems:  # logged once by get_config
        return None
    held = remembered(request, store)
    if held is not None:
        return store, held, held.session_key, None
    came_with = session_key_of(request, store.config)
    verdict = judge(request, store, came_with)  # once: a MAC that fails is not kept
    if verdict is not None and is_held(verdict, store):
        return store, verdict, came_with, None
    return store, None, came_with, start(request, store, came_with, verdict).before_view


def leave(
    request: HttpRequest,
    response: HttpResponseBase,
    came: Arrival,
    visit: Visit | None,
) -> Callable[[], None] | None:
    """After the view: marks a response made for its viewer alone private,
    and returns what the answer leaves to write, if anything."""
    store, held, came_with, _ = came
    if held is not None and is_quiet(request, held, store):
        return None
    made = made_for(request)
    if held is None or not nothing_to_write(request, response, store, held, made):
        made = start(request, store, came_with)
        writes = made.writes_after(response, visit)
    else:
        writes = None
    if made is not None and made.personal:
        keep_private(response)
    return writes


def is_quiet(request: HttpRequest, held: Verdict, store: Store) -> bool:
    """The guarded path after the view: whether nothing was made or changed
    that could leave something to write, for a request whose guard ``held``
    says it was recorded lately: no output made the request's page, the
    view changed no session, no snapshot saw a peak to keep, and the marks
    the process keeps of the path (:func:`~whos_online.marks.kept_marks`)
    are those the guard says were written. The path found so is remembered
    with the verdict: a page of it again asks no more (a reload, a
    refreshing page). Else :func:`nothing_to_write` looks closer."""
    session = getattr(request, "session", None)
    if session is not None and session.modified or hasattr(request, ATTRIBUTE):
        return False
    path = path_key(request)
    if held.quiet != path:
        marks = kept_marks(store, path)
        if marks is None or not knows(held.guard, marks):  # type: ignore[arg-type]
            return False
        held.quiet = path
    return store.state.peak_seen is None


def nothing_to_write(
    request: HttpRequest,
    response: HttpResponseBase,
    store: Store,
    held: Verdict,
    made: Page | None,
) -> bool:
    """The guarded path after the view, looked at closer: whether the
    answer surely leaves nothing to write for a request whose guard
    ``held`` (no login or logout, no peak to keep, the page's rooms and a
    user's location those the guard says were written; ``made``: the page,
    if an output made one). When unsure, :meth:`Page.writes_after`
    decides."""
    session = getattr(request, "session", None)
    if session is not None and session.modified or store.state.peak_seen is not None:
        return False
    if made is not None and made.named_rooms:
        return False
    if not 200 <= response.status_code < 300:
        return True
    found: Guard = held.guard  # type: ignore[assignment]  # kept only on a guard
    marks = page_marks(request, store)
    return knows(found, marks) or (
        marks.rooms == found.rooms and not moved(request, found, marks)
    )


def is_heartbeat(request: HttpRequest) -> bool:
    """Whether this is a POST to the heartbeat, whose view records its user
    (or refuses to: its rate limit is kept on the server, so a client that
    drops its guard cookie is not recorded here on every POST)."""
    if request.method != "POST":
        return False
    try:
        url = reverse("whos_online:heartbeat", getattr(request, "urlconf", None))
    except NoReverseMatch:
        return False
    return request.path == url


def keep_private(response: HttpResponseBase) -> None:
    """A page that showed anything made for its viewer alone (a staff
    member's hidden users, names only logged-in users may see) is no page
    for a shared cache to keep."""
    patch_vary_headers(response, ["Cookie"])
    patch_cache_control(response, private=True)


def start(
    request: HttpRequest,
    store: Store,
    session_key: str | None = None,
    verdict: Verdict | None = None,
) -> Page:
    """The request's :class:`Page`, made by the middleware: before the view
    when the guard does not spare the request a record (``verdict``: the
    one reached on it); after it, when the answer may leave something to
    write (``session_key``: the one the request came with), unless an
    output made it already."""
    made = made_for(request)
    if made is None:
        made = Page(request, store, session_key, verdict)
        setattr(request, ATTRIBUTE, made)
    return made


def of(request: HttpRequest) -> Page:
    """The request's :class:`Page`, made now if nothing made it: while the
    middleware serves the request, with the session key it came with (the
    view may have logged someone in or out since)."""
    found = getattr(request, ATTRIBUTE, None)
    if isinstance(found, Page):
        return found
    served = SERVING.get()
    came_with = served[1] if served is not None and served[0] is request else None
    return start(request, get_store(), came_with)


def forget(request: HttpRequest) -> None:
    """Forget the request's :class:`Page`: a live stream renders its widget
    again for each change, each time afresh, as a new request would."""
    vars(request).pop(ATTRIBUTE, None)


def may_be_kept_for_others(request: HttpRequest) -> bool:
    """Whether Django's cache (``cache_page``, ``UpdateCacheMiddleware``) may
    keep the response being made for other visitors.

    Django offers no public way to ask: its cache middleware marks such a
    request with ``_cache_update_cache`` before the view runs. This is the
    one place a private attribute of Django is read, and
    tests/test_cached_pages.py fails if Django stops setting it."""
    return bool(getattr(request, "_cache_update_cache", False))


def visit_of(request: HttpRequest) -> Visit:
    """The request's visit, as the middleware saw it (made now if it did not)."""
    return of(request).visit_of()


def viewer_of(request: HttpRequest) -> Any:
    """Who the request's page is made for (see :attr:`Page.viewer`): what
    every view, tag and endpoint asks, never ``request.user``."""
    return of(request).viewer


def rooms_of_page(request: HttpRequest) -> AbstractSet[str]:
    """Every room the page is in, so far: the record after the view and the
    page's widgets both ask this."""
    return of(request).rooms()


def visit_made(request: HttpRequest) -> Visit | None:
    """The request's visit, if one was made."""
    made = made_for(request)
    return None if made is None else made.visit


def made_for(request: HttpRequest) -> Page | None:
    """The request's :class:`Page` if anything asked for it."""
    found = getattr(request, ATTRIBUTE, None)
    return found if isinstance(found, Page) else None


SERVING: ContextVar[tuple[HttpRequest, str] | None] = ContextVar(
    "whos_online_page", default=None
)
"""The request whose page is being made, and the session key it came with,
set by the middleware around the view: a context variable, so a synchronous
view run in a thread under ASGI finds it too."""


def current() -> Page | None:
    """The page being made, if the middleware is serving one."""
    served = SERVING.get()
    return None if served is None else of(served[0])
