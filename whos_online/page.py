"""One object per request for what it learns of presence:
``request.whos_online``, a :class:`Page`, the way django-htmx hangs
``request.htmx`` on the request.

The middleware makes it for every request: it is what the cookies say
(:class:`~whos_online.seen.Cookies`: the session key, the guard, whether it
spares the request a record), and, worked out when first asked, the
request's :class:`~whos_online.visitors.Visit` (who the visitor is, what was
recorded of them), who the page is made for and their
:class:`~whos_online.gate.Gate`, the page's snapshots (so the widget,
counts and badges of one page cost one round trip), the badges' statuses,
the rooms its templates name, and whether anything made for this viewer
alone was shown (the middleware then marks the response private). Without
the middleware (a view called directly), the first to ask makes it.

The badge filters see no context, so the middleware also sets the page
being made: a thread-local for a synchronous request (cheaper on every
guarded request), a context variable for an asynchronous one.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Set as AbstractSet
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest

from whos_online.gate import Gate
from whos_online.seen import Cookies
from whos_online.store import Snapshot, get_store
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


def start(request: HttpRequest) -> Page | None:
    """The middleware's first step: the request's :class:`Page`, its
    cookies read; ``None`` when presence is off (``Config.problems``)."""
    store = get_store()
    if store.config.problems:  # logged once by get_config
        return None
    made = Page(request, store)
    setattr(request, ATTRIBUTE, made)
    return made


def of(request: HttpRequest) -> Page:
    """The request's :class:`Page`, made now if the middleware did not."""
    found = getattr(request, ATTRIBUTE, None)
    if isinstance(found, Page):
        return found
    made = Page(request, get_store())
    setattr(request, ATTRIBUTE, made)
    return made


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


class ThreadPage(threading.local):
    page: Page | None = None


THREAD = ThreadPage()
"""The page of the synchronous request this thread is serving."""
TASK: ContextVar[Page | None] = ContextVar("whos_online_page", default=None)
"""The page of the asynchronous request this task is serving."""


def current() -> Page | None:
    """The page being made, if the middleware made one."""
    return TASK.get() or THREAD.page
