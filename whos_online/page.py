"""One object per request for what it learns of presence:
``request.whos_online``, a :class:`Page` made on first use, the way
django-htmx hangs ``request.htmx`` on the request.

It holds the request's :class:`~whos_online.visitors.Visit` once one is
made (who the visitor is, what was recorded of them), the viewer's
:class:`~whos_online.gate.Gate`, the page's snapshots (so the widget,
counts and badges of one page cost one round trip), the badges' statuses,
the rooms its templates name, and whether anything made for this viewer
alone was shown (the middleware then marks the response private).

The badge filters see no context, so the middleware also sets the request
whose page is being made: a thread-local for a synchronous request (cheaper
on every guarded request), a context variable for an asynchronous one.
"""

from __future__ import annotations

import functools
import threading
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest

from whos_online.gate import Gate
from whos_online.seen import Cookies
from whos_online.store import Snapshot
from whos_online.visibility import Choices
from whos_online.visitors import Visit

ATTRIBUTE = "whos_online"


class Page:
    """What one request's page learns of presence, worked out lazily."""

    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        self.snapshots: dict[tuple[str | None, bool], tuple[int, Snapshot]] = {}
        """(room, with hidden users) -> (names listed, snapshot)."""
        self.badges: dict[str, Any] = {}
        """User key -> their status as this page shows it."""
        self.choices: Choices | None = None
        """What the users the page's snapshot lists as visible chose (the
        database's word), once asked."""
        self.refused: frozenset[str] = frozenset()
        """Which of them the site's rule keeps from this viewer, asked with
        their choices."""
        self.named_rooms: set[str] = set()
        """The rooms the page's templates named by instance."""
        self.personal = False
        """Whether this page showed anything made for its viewer alone."""
        self.visit: Visit | None = None
        """The visitor and what was recorded of them, once asked."""

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


def of(request: HttpRequest) -> Page:
    """The request's :class:`Page`, made on first use."""
    found = getattr(request, ATTRIBUTE, None)
    if isinstance(found, Page):
        return found
    made = Page(request)
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


def visit_of(request: HttpRequest, seen: Cookies | None = None) -> Visit:
    """The request's visit, as the middleware saw it (made now if it did not;
    ``seen``: what the middleware read of the cookies before the view)."""
    made = of(request)
    if made.visit is None:
        made.visit = Visit(request, seen=seen)
    return made.visit


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
    request: HttpRequest | None = None


THREAD = ThreadPage()
"""The page of the synchronous request this thread is serving."""
TASK: ContextVar[HttpRequest | None] = ContextVar("whos_online_page", default=None)
"""The page of the asynchronous request this task is serving."""


def current() -> Page | None:
    """The page being made, if the middleware made one."""
    request = TASK.get() or THREAD.request
    return None if request is None else of(request)
