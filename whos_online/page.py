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
first output that asks (:func:`of`). A request whose guard holds by what
the process remembers (:func:`~whos_online.seen.holds`) and whose page
asks nothing of presence builds none.

The badge filters see no context, so the middleware also says which
request is being served, in a context variable (:data:`SERVING`).
"""

from __future__ import annotations

import functools
from collections.abc import Set as AbstractSet
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest

from whos_online.gate import Gate
from whos_online.seen import Cookies
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


def start(request: HttpRequest, store: Store, session_key: str | None = None) -> Page:
    """The request's :class:`Page`, made by the middleware: before the view
    when the guard does not spare the request a record by what the process
    remembers; after it, when the answer may leave something to write
    (``session_key``: the one the request came with), unless an output made
    it already."""
    made = made_for(request)
    if made is None:
        made = Page(request, store, session_key)
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
