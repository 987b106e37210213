"""The request whose page is being made, for the badge filters: a filter
sees no context, yet every badge of a page shares the page's snapshot.

The middleware sets it around the view. A synchronous request sets a
thread-local, which costs a guarded request less than a context variable;
an asynchronous one sets a context variable, since tasks share a thread.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar

from django.http import HttpRequest


class ThreadPage(threading.local):
    request: HttpRequest | None = None


THREAD = ThreadPage()
"""The page of the synchronous request this thread is serving."""
TASK: ContextVar[HttpRequest | None] = ContextVar("whos_online_page", default=None)
"""The page of the asynchronous request this task is serving."""


def current() -> HttpRequest | None:
    """The request whose page is being made, if the middleware made one."""
    return TASK.get() or THREAD.request
